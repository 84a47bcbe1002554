package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// planSubcommands are the "bloomery plan <name>" sizing tools; each is a
// command of its own (flags, usage, run). Add one entry per tool.
var planSubcommands = []*command{planLSMCmd}

var planCmd = &command{
	name:    "plan",
	summary: "size every filter family for n keys at a target false-positive rate",
	usage: `bloomery plan -n N [-p P] [--load L] [--json]

For each family in this build: bits per key, total bytes, probes k or
fingerprint bits, expected FPR, cache lines touched per negative query,
mutability and a note; then the overfill table of the standard Bloom filter
sized for N keys (its FPR when it holds 1x, 1.5x, 2x, 3x, 5x N keys) and a
recommendation.

--load L plans cuckoo filters as "bloomery build --load L" makes them: a
table that N keys fill to L (default and most: 0.94), with fingerprints
sized for P at that load. The other families are planned as usual.`,
	flags: func(fs *flag.FlagSet) any {
		o := &planOpts{p: fprFlag(0.01), load: loadFlag()}
		fs.Var(&o.n, "n", "design number of keys `N` (required; 1000000, 1e6 or 1_000_000)")
		fs.Var(&o.p, "p", "target false-positive rate `P`, as 0.01 or 1%")
		fs.Var(&o.load, "load", "fraction `L` of the table's slots that N keys fill, as 0.85 or 85% (cuckoo only; default 0.94)")
		fs.BoolVar(&o.json, "json", false, "print JSON instead of tables")
		return o
	},
	run: runPlan,
	sub: planSubcommands,
}

type planOpts struct {
	n    countValue
	p    fractionValue
	load fractionValue
	json bool
}

// overfillLoads are the multiples of the design n that the overfill table
// shows.
var overfillLoads = []float64{1, 1.5, 2, 3, 5}

type planRow struct {
	Kind            string    `json:"kind"`
	BitsPerKey      jsonFloat `json:"bits_per_key"`
	Bytes           int64     `json:"bytes"`
	Size            string    `json:"size"`
	HashFuncs       int       `json:"hash_funcs,omitempty"`
	FingerprintBits int       `json:"fingerprint_bits,omitempty"`
	FPR             jsonFloat `json:"fpr"`
	CacheLines      jsonFloat `json:"cache_lines"`
	Mutability      string    `json:"mutability"`
	Note            string    `json:"note,omitempty"`
	Error           string    `json:"error,omitempty"`

	plan codec.Plan
	ok   bool
}

type overfillRow struct {
	Load float64   `json:"load"`
	Keys int64     `json:"keys"`
	FPR  jsonFloat `json:"fpr"`
}

type overfillTable struct {
	Kind string `json:"kind"`
	// Source says where m and k come from: the bloom family's own plan,
	// or the textbook sizing when bloom is not in this build.
	Source string        `json:"source"`
	Bits   int64         `json:"m_bits"`
	K      int           `json:"k"`
	N      int           `json:"n"`
	Rows   []overfillRow `json:"rows"`
}

type recommendation struct {
	Use    string `json:"use"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

type planReport struct {
	N int       `json:"n"`
	P jsonFloat `json:"p"`
	// Load is --load, when given: the load of the tunable families' tables.
	Load            jsonFloat        `json:"load,omitempty"`
	Families        []planRow        `json:"families"`
	Overfill        overfillTable    `json:"overfill"`
	Recommendations []recommendation `json:"recommendations"`
}

func runPlan(e *env, opts any, args []string) error {
	o := opts.(*planOpts)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if !o.n.set {
		return usagef("-n is required")
	}
	rep, err := makePlan(o.n.n, o.p.f, o.load)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writePlan(e.stdout, rep)
}

// makePlan plans every family for n keys at FPR p; with load set, the
// families with a tunable load at that load. A load one of them refuses is
// an error (the flag is wrong for every n and p).
func makePlan(n int, p float64, load fractionValue) (planReport, error) {
	rep := planReport{N: n, P: jsonFloat(p)}
	if load.set {
		rep.Load = jsonFloat(load.f)
	}
	for _, fam := range codec.Families() {
		row := planRow{Kind: fam.Kind.String(), Mutability: fam.Mutability.String()}
		var pl codec.Plan
		var err error
		if load.set && fam.PlanAtLoad != nil {
			pl, err = fam.PlanAtLoad(n, p, load.f)
			if err != nil {
				if _, planErr := fam.Plan(n, p); planErr == nil {
					// n and p suit the family: the load is what it refuses.
					return planReport{}, fmt.Errorf("--load: %w", err)
				}
			}
		} else {
			pl, err = fam.Plan(n, p)
		}
		if err != nil {
			row.Error = err.Error()
		} else {
			row.plan, row.ok = pl, true
			row.BitsPerKey = jsonFloat(pl.BitsPerKey)
			row.Bytes = pl.Bytes
			row.Size = humanBytes(pl.Bytes)
			row.HashFuncs = pl.HashFuncs
			row.FingerprintBits = pl.FingerprintBits
			row.FPR = jsonFloat(pl.FPR)
			row.CacheLines = jsonFloat(pl.CacheLines)
			row.Mutability = pl.Mutability.String()
			row.Note = pl.Note
		}
		rep.Families = append(rep.Families, row)
	}
	rep.Overfill = overfill(n, p)
	rep.Recommendations = recommend(rep.Families, p)
	return rep, nil
}

// overfill computes the standard Bloom filter's FPR at multiples of its
// design n with the classic estimate (1 - e^(-k*x/m))^k, on the m and k
// that package bloom chooses for (n, p) when it is registered, else on the
// textbook sizing m = ceil(-n ln p / ln²2), k = round(ln2 * m/n).
func overfill(n int, p float64) overfillTable {
	t := overfillTable{Kind: bloomery.KindBloom.String(), N: n}
	if fam, err := codec.Lookup(bloomery.KindBloom); err == nil {
		if pl, err := fam.Plan(n, p); err == nil && pl.HashFuncs > 0 && pl.Bytes > 0 {
			t.Source = "bloom family plan"
			t.Bits = pl.Bytes * 8
			t.K = pl.HashFuncs
		}
	}
	if t.Source == "" {
		t.Source = "textbook sizing"
		t.Bits = int64(math.Ceil(float64(n) * fpmath.BitsPerKeyForFPR(p)))
		t.K = fpmath.StandardK(float64(t.Bits) / float64(n))
	}
	for _, load := range overfillLoads {
		x := load * float64(n)
		t.Rows = append(t.Rows, overfillRow{
			Load: load,
			Keys: int64(math.Round(x)),
			FPR:  jsonFloat(fpmath.StandardFPR(float64(t.Bits), x, t.K)),
		})
	}
	return t
}

// recommend picks, from the families' own plans, the best family for
// three situations: a set that grows (fewest cache lines per query, then
// fewest bytes), a set known in advance (fewest bytes), and a set with
// deletions (fewest bytes). Only plans that meet the target FPR (within
// 5%, for rounding of k or fingerprint widths) are candidates.
func recommend(rows []planRow, p float64) []recommendation {
	meets := func(r planRow) bool { return r.ok && float64(r.FPR) <= p*1.05 }
	pick := func(ok func(planRow) bool, less func(a, b planRow) bool) (planRow, bool) {
		var best planRow
		found := false
		for _, r := range rows {
			if meets(r) && ok(r) && (!found || less(r, best)) {
				best, found = r, true
			}
		}
		return best, found
	}
	smaller := func(a, b planRow) bool { return a.Bytes < b.Bytes }
	fewerLines := func(a, b planRow) bool {
		if a.CacheLines != b.CacheLines {
			return a.CacheLines < b.CacheLines
		}
		return a.Bytes < b.Bytes
	}
	var out []recommendation
	if r, ok := pick(func(r planRow) bool { return r.plan.Mutability != codec.Static }, fewerLines); ok {
		out = append(out, recommendation{Use: "keys added over time", Kind: r.Kind,
			Reason: fmt.Sprintf("%s per query, %s", cacheLines(float64(r.CacheLines)), humanBytes(r.Bytes))})
	}
	if r, ok := pick(func(r planRow) bool { return r.plan.Mutability == codec.Static }, smaller); ok {
		out = append(out, recommendation{Use: "all keys known up front", Kind: r.Kind,
			Reason: fmt.Sprintf("smallest: %s, %.2f bits/key", humanBytes(r.Bytes), float64(r.BitsPerKey))})
	}
	if r, ok := pick(func(r planRow) bool { return r.plan.Mutability == codec.InsertDelete }, smaller); ok {
		out = append(out, recommendation{Use: "keys also deleted", Kind: r.Kind,
			Reason: fmt.Sprintf("smallest with deletes: %s", humanBytes(r.Bytes))})
	}
	return out
}

func cacheLines(x float64) string {
	if x == 1 {
		return "1 cache line"
	}
	return strconv.FormatFloat(x, 'g', 3, 64) + " cache lines"
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// writePlan prints rep as tables, without trailing blanks.
func writePlan(out io.Writer, rep planReport) error {
	var w bytes.Buffer
	writePlanTables(&w, rep)
	return writeTrimmed(out, w.String())
}

func writePlanTables(w io.Writer, rep planReport) {
	fmt.Fprintf(w, "plan for n=%d keys at target FPR %s", rep.N, percent(float64(rep.P)))
	if rep.Load != 0 {
		fmt.Fprintf(w, ", %s tables at %s load", strings.Join(loadKinds(), ", "), percent(float64(rep.Load)))
	}
	fmt.Fprintf(w, "\n\n")
	if len(rep.Families) == 0 {
		fmt.Fprintf(w, "(no filter families are registered in this build)\n\n")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "kind\tbits/key\tbytes\tsize\tk/fp\tFPR\tlines/query\tmutability\tnote")
		for _, r := range rep.Families {
			if !r.ok {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\tcannot plan: %s\n", r.Kind, r.Mutability, r.Error)
				continue
			}
			probes := "-"
			switch {
			case r.HashFuncs > 0:
				probes = fmt.Sprintf("k=%d", r.HashFuncs)
			case r.FingerprintBits > 0:
				probes = fmt.Sprintf("f=%d", r.FingerprintBits)
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, float64(r.BitsPerKey), r.Bytes, r.Size,
				probes, percent(float64(r.FPR)), strconv.FormatFloat(float64(r.CacheLines), 'g', 3, 64), r.Mutability, r.Note)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	t := rep.Overfill
	fmt.Fprintf(w, "overfill: standard %s sized for n=%d (m=%d bits, k=%d, %s)\n", t.Kind, t.N, t.Bits, t.K, t.Source)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "load\tkeys\tFPR")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%sx\t%d\t%s\n", trimFloat(r.Load), r.Keys, percent(float64(r.FPR)))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(rep.Recommendations) == 0 {
		fmt.Fprintf(w, "recommendation: none (no registered family meets FPR %s)\n", percent(float64(rep.P)))
		return
	}
	parts := make([]string, len(rep.Recommendations))
	for i, r := range rep.Recommendations {
		parts[i] = fmt.Sprintf("%s for %s (%s)", r.Kind, r.Use, r.Reason)
	}
	fmt.Fprintf(w, "recommendation: %s\n", strings.Join(parts, "; "))
}
