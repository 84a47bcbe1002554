package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
)

var inspectCmd = &command{
	name:    "inspect",
	summary: "show a filter's header, parameters and state",
	usage: `bloomery inspect FILTER [--json]

Verifies the container (magic, version, lengths, CRC-32C), decodes the filter
and prints its header, parameter bytes and statistics: keys held, capacity,
size, bits per key, probes or fingerprint bits, fill, design and estimated
FPR, overfill state and family-specific figures. Keyed (SipHash) filters are
inspected without their key; only the key fingerprint is shown.`,
	flags: func(fs *flag.FlagSet) any {
		o := &inspectOpts{}
		fs.BoolVar(&o.json, "json", false, "print JSON")
		return o
	},
	run: runInspect,
}

type inspectOpts struct{ json bool }

type inspectHeader struct {
	Magic          string  `json:"magic"`
	Version        uint8   `json:"version"`
	Kind           string  `json:"kind"`
	KindID         uint8   `json:"kind_id"`
	Hash           string  `json:"hash"`
	HashID         uint8   `json:"hash_id"`
	Seed           *uint64 `json:"seed,omitempty"`
	KeyFingerprint string  `json:"key_fingerprint,omitempty"`
	Layout         uint8   `json:"layout"`
	ParamsLen      int     `json:"params_len"`
	Params         string  `json:"params_hex"`
	PayloadLen     uint64  `json:"payload_len"`
	CRC32C         string  `json:"crc32c"`
}

type inspectStats struct {
	Len             int                  `json:"len"`
	Cap             int                  `json:"cap"`
	SizeBytes       int                  `json:"size_bytes"`
	BitsPerKey      jsonFloat            `json:"bits_per_key"`
	HashFuncs       int                  `json:"hash_funcs"`
	FingerprintBits int                  `json:"fingerprint_bits"`
	FillRatio       jsonFloat            `json:"fill_ratio"`
	DesignFPR       jsonFloat            `json:"design_fpr"`
	EstimatedFPR    jsonFloat            `json:"estimated_fpr"`
	Overfilled      bool                 `json:"overfilled"`
	Extra           map[string]jsonFloat `json:"extra,omitempty"`
}

type inspectReport struct {
	File   string        `json:"file"`
	Bytes  int           `json:"bytes"`
	Header inspectHeader `json:"header"`
	Stats  inspectStats  `json:"stats"`

	extra []bloomery.Stat
}

func runInspect(e *env, opts any, args []string) error {
	o := opts.(*inspectOpts)
	if len(args) != 1 {
		return usagef("exactly one FILTER is required, got %d arguments", len(args))
	}
	path := args[0]
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	h, params, _, err := container.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: not a valid Bloomery filter: %w", path, err)
	}
	f, err := decodeNamed(path, data, hashing.Expect{Keyless: true})
	if err != nil {
		return err
	}
	rep := inspectReport{File: path, Bytes: len(data), Header: inspectHeader{
		Magic:      container.Magic,
		Version:    h.Version,
		Kind:       h.Kind.String(),
		KindID:     uint8(h.Kind),
		Hash:       h.Hash.String(),
		HashID:     uint8(h.Hash),
		Layout:     h.Layout,
		ParamsLen:  h.ParamsLen,
		Params:     hex.EncodeToString(params),
		PayloadLen: h.PayloadLen,
		CRC32C:     fmt.Sprintf("%08x", h.Checksum),
	}}
	if h.Hash == hashing.AlgSipHash {
		rep.Header.KeyFingerprint = fmt.Sprintf("%016x", h.Seed)
	} else {
		seed := h.Seed
		rep.Header.Seed = &seed
	}
	st := f.Stats()
	rep.extra = st.Extra
	rep.Stats = inspectStats{
		Len: st.Len, Cap: st.Cap, SizeBytes: st.SizeBytes, BitsPerKey: jsonFloat(st.BitsPerKey),
		HashFuncs: st.HashFuncs, FingerprintBits: st.FingerprintBits, FillRatio: jsonFloat(st.FillRatio),
		DesignFPR: jsonFloat(st.DesignFPR), EstimatedFPR: jsonFloat(st.EstimatedFPR), Overfilled: st.Overfilled,
	}
	if len(st.Extra) > 0 {
		rep.Stats.Extra = make(map[string]jsonFloat, len(st.Extra))
		for _, x := range st.Extra {
			rep.Stats.Extra[x.Name] = jsonFloat(x.Value)
		}
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeInspect(e.stdout, rep)
}

// maxParamsShown bounds the parameter bytes printed in text mode.
const maxParamsShown = 64

func writeInspect(w io.Writer, r inspectReport) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	h := r.Header
	fmt.Fprintf(tw, "file\t%s (%d bytes)\n", r.File, r.Bytes)
	fmt.Fprintf(tw, "magic\t%s\n", h.Magic)
	fmt.Fprintf(tw, "format version\t%d\n", h.Version)
	fmt.Fprintf(tw, "kind\t%s (%d)\n", h.Kind, h.KindID)
	if h.Seed != nil {
		fmt.Fprintf(tw, "hash\t%s (%d), seed %d\n", h.Hash, h.HashID, *h.Seed)
	} else {
		fmt.Fprintf(tw, "hash\t%s (%d), key fingerprint %s (keyed; the key is not stored)\n", h.Hash, h.HashID, h.KeyFingerprint)
	}
	fmt.Fprintf(tw, "layout\t%d\n", h.Layout)
	params := h.Params
	if len(params) > 2*maxParamsShown {
		params = params[:2*maxParamsShown] + "..."
	}
	fmt.Fprintf(tw, "params\t%d bytes %s\n", h.ParamsLen, params)
	fmt.Fprintf(tw, "payload\t%d bytes (%s)\n", h.PayloadLen, humanBytes(int64(h.PayloadLen)))
	fmt.Fprintf(tw, "crc32c\t%s (verified)\n", h.CRC32C)
	fmt.Fprintf(tw, "\t\n")
	s := r.Stats
	fmt.Fprintf(tw, "len\t%d\n", s.Len)
	fmt.Fprintf(tw, "cap\t%d\n", s.Cap)
	if s.Cap > 0 {
		fmt.Fprintf(tw, "load\t%.1f%% of cap\n", 100*float64(s.Len)/float64(s.Cap))
	}
	fmt.Fprintf(tw, "size\t%d bytes (%s)\n", s.SizeBytes, humanBytes(int64(s.SizeBytes)))
	fmt.Fprintf(tw, "bits/key\t%.3f\n", float64(s.BitsPerKey))
	if s.HashFuncs > 0 {
		fmt.Fprintf(tw, "hash funcs (k)\t%d\n", s.HashFuncs)
	}
	if s.FingerprintBits > 0 {
		fmt.Fprintf(tw, "fingerprint bits\t%d\n", s.FingerprintBits)
	}
	fmt.Fprintf(tw, "fill\t%.2f%%\n", 100*float64(s.FillRatio))
	fmt.Fprintf(tw, "design FPR\t%s\n", percent(float64(s.DesignFPR)))
	fmt.Fprintf(tw, "estimated FPR\t%s\n", percent(float64(s.EstimatedFPR)))
	switch {
	case s.Overfilled:
		fmt.Fprintf(tw, "overfill\tOVERFILLED: estimated FPR is %.2fx the design FPR (limit %gx); rebuild larger\n",
			float64(s.EstimatedFPR)/float64(s.DesignFPR), bloomery.OverfillFactor)
	case s.DesignFPR > 0:
		fmt.Fprintf(tw, "overfill\tok: estimated FPR is %.2fx the design FPR (limit %gx)\n",
			float64(s.EstimatedFPR)/float64(s.DesignFPR), bloomery.OverfillFactor)
	default:
		fmt.Fprintf(tw, "overfill\tn/a (no design FPR)\n")
	}
	for _, x := range r.extra {
		fmt.Fprintf(tw, "%s\t%s\n", x.Name, fmtStat(x.Value))
	}
	tw.Flush()
	// The blank separator line keeps one column alignment for both
	// sections; writeTrimmed drops the padding tabwriter gives it.
	return writeTrimmed(w, buf.String())
}

// writeTrimmed writes text with trailing blanks removed from every line.
func writeTrimmed(w io.Writer, text string) error {
	var b strings.Builder
	for line := range strings.Lines(text) {
		b.WriteString(strings.TrimRight(line, " \n"))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fmtStat prints whole numbers exactly and others to 6 significant digits.
func fmtStat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
