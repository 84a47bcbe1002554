package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
)

// benchCmd is "bloomery bench": every family measured on this machine, in
// this process, on the same keys. Peers (other libraries) are measured by
// the bench module (cd bench && go run ./cmd/benchreport), which keeps
// their dependencies out of this binary.
var benchCmd = &command{
	name:    "bench",
	summary: "measure every family on this machine: bits/key, FPR, build and query ns/key",
	usage: `bloomery bench [-n N] [-p P] [--kind K1,K2,...] [--reps R] [--queries Q] [--json]

Builds each family (or only the listed kinds) for N random keys at target
FPR P, then times queries of Q present keys in random order and Q absent
keys (and the batch API where the family has one). Each figure is the
median of R repetitions, families interleaved within a repetition, so a
busy machine slows all of them alike. The measured FPR is over the absent
keys; a false negative aborts the run with an error.`,
	flags: func(fs *flag.FlagSet) any {
		o := &benchOpts{n: countValue{n: 1_000_000}, p: fprFlag(0.01), reps: 3, queries: countValue{n: 1_000_000}}
		fs.Var(&o.n, "n", "number of keys `N`")
		fs.Var(&o.p, "p", "target false-positive rate `P` (0.01 or 1%)")
		fs.StringVar(&o.kinds, "kind", "", "comma-separated kinds (default: every family)")
		fs.IntVar(&o.reps, "reps", o.reps, "repetitions `R` (medians are reported)")
		fs.Var(&o.queries, "queries", "positive and negative queries `Q` per repetition")
		fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")
		return o
	},
	run: runBench,
}

type benchOpts struct {
	n, queries countValue
	p          fractionValue
	kinds      string
	reps       int
	json       bool
}

type benchRow struct {
	Kind       string    `json:"kind"`
	BitsPerKey jsonFloat `json:"bits_per_key"`
	FPR        jsonFloat `json:"measured_fpr"`
	BuildNs    jsonFloat `json:"build_ns_per_key"`
	PosNs      jsonFloat `json:"positive_ns"`
	NegNs      jsonFloat `json:"negative_ns"`
	BatchNs    jsonFloat `json:"batch_ns,omitempty"`
}

func runBench(e *env, o any, args []string) error {
	opts := o.(*benchOpts)
	if len(args) > 0 {
		return usagef("bench takes no arguments, got %q", args[0])
	}
	if opts.reps < 1 || opts.reps > 100 {
		return usagef("--reps must be in [1, 100], got %d", opts.reps)
	}
	fams := codec.Families()
	if opts.kinds != "" {
		var sel []codec.Family
		for _, name := range strings.Split(opts.kinds, ",") {
			k, err := bloomery.ParseKind(name)
			if err != nil {
				return usagef("--kind: %v", err)
			}
			f, err := codec.Lookup(k)
			if err != nil {
				return err
			}
			sel = append(sel, f)
		}
		fams = sel
	}
	n, q := opts.n.n, opts.queries.n
	keys := make([]uint64, n)
	absent := make([]uint64, q)
	s := splitMix(uint64(n))
	for i := range keys {
		keys[i] = s.next()
	}
	for i := range absent {
		absent[i] = s.next()
	}
	pos := make([]uint64, min(q, n))
	for i := range pos {
		pos[i] = keys[s.next()%uint64(n)]
	}
	type sample struct{ bpk, fpr, build, pos, neg, batch []float64 }
	samples := make([]sample, len(fams))
	out := make([]bool, 1024)
	var h hashing.Hasher
	for r := 0; r < opts.reps; r++ {
		for j := range fams {
			i := (j + r) % len(fams)
			fam := fams[i]
			runtime.GC()
			t0 := time.Now()
			var f bloomery.Filter
			var err error
			if fam.Build != nil {
				f, err = fam.Build(keys, opts.p.f, h)
			} else {
				var a bloomery.Adder
				a, err = fam.New(n, opts.p.f, h)
				if err == nil {
					for _, k := range keys {
						a.AddHash(k)
					}
					f = a
				}
			}
			if err != nil {
				return fmt.Errorf("bench %v: %w", fam.Kind, err)
			}
			build := time.Since(t0)
			for _, k := range pos[:min(len(pos), 100_000)] {
				if !f.ContainsHash(k) {
					return fmt.Errorf("bench %v: false negative (a key that was added is reported absent)", fam.Kind)
				}
			}
			hits := 0
			t0 = time.Now()
			for _, k := range pos {
				if f.ContainsHash(k) {
					hits++
				}
			}
			posT := time.Since(t0)
			fp := 0
			t0 = time.Now()
			for _, k := range absent {
				if f.ContainsHash(k) {
					fp++
				}
			}
			negT := time.Since(t0)
			sm := &samples[i]
			if bq, ok := f.(bloomery.BatchQuerier); ok {
				t0 = time.Now()
				for j := 0; j < len(absent); j += len(out) {
					chunk := absent[j:min(j+len(out), len(absent))]
					bq.ContainsBatch(chunk, out)
				}
				sm.batch = append(sm.batch, float64(time.Since(t0).Nanoseconds())/float64(len(absent)))
			}
			sm.bpk = append(sm.bpk, float64(8*f.SizeBytes())/float64(n))
			sm.fpr = append(sm.fpr, float64(fp)/float64(len(absent)))
			sm.build = append(sm.build, float64(build.Nanoseconds())/float64(n))
			sm.pos = append(sm.pos, float64(posT.Nanoseconds())/float64(len(pos)))
			sm.neg = append(sm.neg, float64(negT.Nanoseconds())/float64(len(absent)))
			_ = hits
		}
	}
	rows := make([]benchRow, len(fams))
	for i, fam := range fams {
		sm := samples[i]
		rows[i] = benchRow{
			Kind: fam.Kind.String(), BitsPerKey: jsonFloat(median(sm.bpk)), FPR: jsonFloat(median(sm.fpr)),
			BuildNs: jsonFloat(median(sm.build)), PosNs: jsonFloat(median(sm.pos)), NegNs: jsonFloat(median(sm.neg)),
		}
		if len(sm.batch) > 0 {
			rows[i].BatchNs = jsonFloat(median(sm.batch))
		}
	}
	if opts.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(e.stdout, "bench: n=%d keys, target FPR %s, %d queries, median of %d reps, %s, GOMAXPROCS %d\n\n",
		n, pct(opts.p.f), q, opts.reps, runtime.Version(), runtime.GOMAXPROCS(0))
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tbits/key\tFPR\tbuild ns/key\tpositive ns\tnegative ns\tbatch ns")
	for _, r := range rows {
		batch := "-"
		if r.BatchNs > 0 {
			batch = fmt.Sprintf("%.1f", float64(r.BatchNs))
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.1f\t%.1f\t%.1f\t%s\n", r.Kind, float64(r.BitsPerKey), pct(float64(r.FPR)),
			float64(r.BuildNs), float64(r.PosNs), float64(r.NegNs), batch)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nPeers (bits-and-blooms, blobloom, xorfilter, ...): cd bench && go run ./cmd/benchreport")
	return nil
}

func pct(p float64) string { return fmt.Sprintf("%.3g%%", 100*p) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// splitMix is SplitMix64, the deterministic key generator of the bench.
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
