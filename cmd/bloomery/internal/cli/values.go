package cli

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
)

// countValue is a flag holding a key count: a plain integer, with optional
// underscores ("1_000_000"), or an exact integer in scientific notation
// ("1e6"). set records whether the flag was given.
type countValue struct {
	n   int
	set bool
}

func (c *countValue) String() string {
	if c == nil || !c.set {
		return ""
	}
	return strconv.Itoa(c.n)
}

func (c *countValue) Set(s string) error {
	n, err := parseCount(s)
	if err != nil {
		return err
	}
	c.n, c.set = n, true
	return nil
}

func parseCount(s string) (int, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("must be positive, got %d", n)
		}
		return int(n), nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a number of keys: %q", s)
	}
	if f != math.Trunc(f) || f <= 0 || f > 1<<62 {
		return 0, fmt.Errorf("must be a positive whole number, got %s", s)
	}
	return int(f), nil
}

// fractionValue is a flag holding a number in (0, 1), written as a
// fraction ("0.01") or a percentage ("1%"): a false-positive rate
// (fprFlag) or a table load factor (loadFlag). set records whether the
// flag was given; f keeps its default otherwise.
type fractionValue struct {
	f    float64
	set  bool
	what string // names the value in errors
}

// fprFlag is a false-positive rate flag defaulting to def.
func fprFlag(def float64) fractionValue { return fractionValue{f: def, what: "false-positive rate"} }

// loadFlag is a load factor flag with no default (the family's applies).
func loadFlag() fractionValue { return fractionValue{what: "load factor"} }

func (v *fractionValue) String() string {
	if v == nil || v.f == 0 {
		return ""
	}
	return strconv.FormatFloat(v.f, 'g', -1, 64)
}

func (v *fractionValue) Set(s string) error {
	f, err := parseFraction(s, v.what)
	if err != nil {
		return err
	}
	v.f, v.set = f, true
	return nil
}

// parseFraction parses a number in (0, 1) written as a fraction ("0.01")
// or a percentage ("1%"); what names it in errors.
func parseFraction(s, what string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("not a %s: %q", what, s)
	}
	f *= scale
	if !(f > 0 && f < 1) {
		return 0, fmt.Errorf("%s must be in (0, 1), got %s", what, s)
	}
	return f, nil
}

// hashFlags are the hashing options shared by build, query and merge.
type hashFlags struct {
	seed    uint64
	seedSet bool
	keyFile string
}

func (h *hashFlags) register(fs *flag.FlagSet, withSeed bool) {
	if withSeed {
		fs.Func("seed", "XXH3 `seed` (default 0); recorded in the filter", func(s string) error {
			v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
			if err != nil {
				return fmt.Errorf("seed must be an unsigned 64-bit integer: %q", s)
			}
			h.seed, h.seedSet = v, true
			return nil
		})
	}
	fs.StringVar(&h.keyFile, "key-file", "", "`file` holding a 16-byte secret key (32 hex digits, or 16 raw bytes) for keyed SipHash-2-4 hashing; only the key's fingerprint is stored in the filter")
}

// hasher returns the hasher the flags select: SipHash under the key file's
// key, or XXH3 with the seed.
func (h *hashFlags) hasher() (hashing.Hasher, error) {
	if h.keyFile != "" && h.seedSet {
		return hashing.Hasher{}, usagef("--seed and --key-file are exclusive: a keyed filter hashes with SipHash under the key, not with a seed")
	}
	if h.keyFile == "" {
		return hashing.XXH3(h.seed), nil
	}
	key, err := readKeyFile(h.keyFile)
	if err != nil {
		return hashing.Hasher{}, err
	}
	return hashing.SipHash(key), nil
}

// expect returns the decoding expectation for a filter to be queried or
// merged: the supplied key when there is one, otherwise the zero Expect
// (any unkeyed filter; keyed filters fail with ErrKeyRequired).
func (h *hashFlags) expect() (hashing.Expect, error) {
	if h.keyFile == "" {
		return hashing.Expect{}, nil
	}
	hs, err := h.hasher()
	if err != nil {
		return hashing.Expect{}, err
	}
	return hashing.Want(hs), nil
}

// readKeyFile reads a 128-bit secret key: exactly 16 raw bytes, or 32 hex
// digits (surrounding whitespace ignored).
func readKeyFile(path string) ([16]byte, error) {
	var key [16]byte
	st, err := os.Stat(path)
	if err != nil {
		return key, fmt.Errorf("key file: %w", err)
	}
	if st.Size() > 4096 {
		return key, fmt.Errorf("key file %s: %d bytes; expected 16 raw bytes or 32 hex digits", path, st.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return key, fmt.Errorf("key file: %w", err)
	}
	if len(data) == len(key) {
		copy(key[:], data)
		return key, nil
	}
	t := strings.TrimSpace(string(data))
	if len(t) == 2*len(key) {
		if _, err := hex.Decode(key[:], []byte(t)); err == nil {
			return key, nil
		}
	}
	return key, fmt.Errorf("key file %s: expected 16 raw bytes or 32 hex digits, found %d bytes", path, len(data))
}

// loadFilter reads and decodes the filter file at path.
func loadFilter(path string, want hashing.Expect) (bloomery.Filter, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := decodeNamed(path, data, want)
	return f, data, err
}

// decodeNamed decodes data and phrases the failures a user can act on.
func decodeNamed(path string, data []byte, want hashing.Expect) (bloomery.Filter, error) {
	f, err := codec.Decode(data, want)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, bloomery.ErrKeyRequired):
		return nil, fmt.Errorf("%s: filter uses keyed hashing (SipHash); supply its 16-byte key with --key-file: %w", path, err)
	case errors.Is(err, bloomery.ErrCorrupt), errors.Is(err, bloomery.ErrUnsupportedVersion):
		return nil, fmt.Errorf("%s: not a valid Bloomery filter: %w", path, err)
	case errors.Is(err, bloomery.ErrUnknownKind):
		return nil, fmt.Errorf("%s: filter family not available in this build: %w", path, err)
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// humanBytes formats a byte count with binary (IEC) units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// percent formats a probability as a percentage with enough significant
// digits for small rates ("1.00%", "0.0391%").
func percent(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p == 0:
		return "0%"
	case p >= 0.1:
		return fmt.Sprintf("%.1f%%", p*100)
	case p >= 0.001:
		return fmt.Sprintf("%.2f%%", p*100)
	}
	return fmt.Sprintf("%.3g%%", p*100)
}

// jsonFloat encodes non-finite values as null, which encoding/json refuses.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}
