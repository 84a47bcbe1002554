package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomery/bloomery/monkey"
)

// planLSMCmd is "bloomery plan lsm": filter memory across the levels of a
// leveled LSM-tree, uniform against Monkey's optimum (package monkey).
var planLSMCmd = &command{
	name:    "lsm",
	summary: "spread filter bits over LSM levels (uniform vs Monkey's optimum)",
	usage: `bloomery plan lsm [--levels L] [--fanout T] [--bits B] [--keys N] [--weights W1,W2,...] [--max-bits C] [--json]

For a leveled LSM-tree of L levels with size ratio T holding N keys and a
filter budget of B bits per key overall, prints each level's share of the
keys, its bits per key and FPR under uniform allocation and under the
allocation that minimises the expected wasted reads of a lookup for an
absent key (Dayan et al., "Monkey"): every level's FPR proportional to its
size over its weight. Levels are listed smallest first (L1 = newest).
--weights gives each level's cost of a false positive, smallest level first
(the probability that the wasted read misses the block cache); a weight of
0 marks a level whose filters are never consulted. The textbook Bloom model
e^(-b ln^2 2) is used; --max-bits caps any level's bits per key.`,
	flags: func(fs *flag.FlagSet) any {
		o := &lsmOpts{levels: 7, fanout: 10, bits: 10, keys: countValue{n: 1_000_000_000}}
		fs.IntVar(&o.levels, "levels", o.levels, "number of levels `L` (1..64)")
		fs.Float64Var(&o.fanout, "fanout", o.fanout, "size ratio `T` between adjacent levels (> 1)")
		fs.Float64Var(&o.bits, "bits", o.bits, "filter budget in bits per key `B`, over all keys")
		fs.Var(&o.keys, "keys", "total number of keys `N` (scales the memory figures only)")
		fs.StringVar(&o.weights, "weights", "", "comma-separated cost of a false positive per level, smallest level first")
		fs.Float64Var(&o.maxBits, "max-bits", 0, "cap on any level's bits per key `C` (0: none)")
		fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")
		return o
	},
	run: runPlanLSM,
}

type lsmOpts struct {
	levels       int
	fanout, bits float64
	keys         countValue
	weights      string
	maxBits      float64
	json         bool
}

type lsmLevel struct {
	Level        int       `json:"level"`
	Keys         jsonFloat `json:"keys"`
	Share        jsonFloat `json:"share"`
	Weight       jsonFloat `json:"weight"`
	UniformBPK   jsonFloat `json:"uniform_bits_per_key"`
	UniformFPR   jsonFloat `json:"uniform_fpr"`
	OptimalBPK   jsonFloat `json:"optimal_bits_per_key"`
	OptimalFPR   jsonFloat `json:"optimal_fpr"`
	OptimalBytes int64     `json:"optimal_bytes"`
}

type lsmReport struct {
	Levels        int        `json:"levels"`
	Fanout        jsonFloat  `json:"fanout"`
	BitsPerKey    jsonFloat  `json:"bits_per_key"`
	Keys          int        `json:"keys"`
	TotalBytes    int64      `json:"total_bytes"`
	Weighted      bool       `json:"weighted"`
	Rows          []lsmLevel `json:"rows"`
	UniformSumFPR jsonFloat  `json:"uniform_sum_fpr"`
	OptimalSumFPR jsonFloat  `json:"optimal_sum_fpr"`
	UniformCost   jsonFloat  `json:"uniform_cost"`
	OptimalCost   jsonFloat  `json:"optimal_cost"`
}

func runPlanLSM(e *env, opts any, args []string) error {
	o := opts.(*lsmOpts)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if o.levels < 1 || o.levels > 64 {
		return usagef("--levels %d must be in 1..64", o.levels)
	}
	if !(o.fanout > 1) || math.IsInf(o.fanout, 0) {
		return usagef("--fanout %v must be greater than 1", o.fanout)
	}
	if !(o.bits >= 0) || math.IsInf(o.bits, 0) {
		return usagef("--bits %v must be a non-negative number", o.bits)
	}
	if !(o.maxBits >= 0) {
		return usagef("--max-bits %v must be non-negative", o.maxBits)
	}
	levels, err := monkey.Leveled(o.levels, o.fanout, float64(o.keys.n))
	if err != nil {
		return usagef("%v", err)
	}
	weighted := o.weights != ""
	if weighted {
		ws := strings.Split(o.weights, ",")
		if len(ws) != o.levels {
			return usagef("--weights has %d values for %d levels", len(ws), o.levels)
		}
		for i, s := range ws {
			w, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(w >= 0) || math.IsInf(w, 0) {
				return usagef("--weights: %q is not a non-negative number", s)
			}
			levels[i].Weight = w
			levels[i].NoFilter = w == 0
		}
	}
	mo := monkey.Options{MaxBitsPerKey: o.maxBits}
	budget := o.bits * float64(o.keys.n)
	uni, err := monkey.Uniform(levels, budget, mo)
	if err != nil {
		return err
	}
	opt, err := monkey.Optimize(levels, budget, mo)
	if err != nil {
		return err
	}
	rep := lsmReport{
		Levels: o.levels, Fanout: jsonFloat(o.fanout), BitsPerKey: jsonFloat(o.bits), Keys: o.keys.n,
		TotalBytes: int64(math.Ceil(budget / 8)), Weighted: weighted,
		UniformSumFPR: jsonFloat(uni.SumFPR), OptimalSumFPR: jsonFloat(opt.SumFPR),
		UniformCost: jsonFloat(uni.Cost), OptimalCost: jsonFloat(opt.Cost),
	}
	for i, l := range opt.Levels {
		rep.Rows = append(rep.Rows, lsmLevel{
			Level: i + 1, Keys: jsonFloat(l.Keys), Share: jsonFloat(l.Keys / float64(o.keys.n)), Weight: jsonFloat(l.Weight),
			UniformBPK: jsonFloat(uni.Levels[i].BitsPerKey), UniformFPR: jsonFloat(uni.Levels[i].FPR),
			OptimalBPK: jsonFloat(l.BitsPerKey), OptimalFPR: jsonFloat(l.FPR), OptimalBytes: int64(math.Ceil(l.Bits / 8)),
		})
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writePlanLSM(e.stdout, rep)
}

func writePlanLSM(w io.Writer, r lsmReport) error {
	fmt.Fprintf(w, "Leveled LSM-tree: %d levels, fanout %g, %g bits/key of filter over %d keys (%s)\n\n",
		r.Levels, float64(r.Fanout), float64(r.BitsPerKey), r.Keys, humanBytes(r.TotalBytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "level\tshare of keys\tuniform bits/key\tuniform FPR\toptimal bits/key\toptimal FPR\toptimal size"
	if r.Weighted {
		head = "level\tshare of keys\tweight\tuniform bits/key\tuniform FPR\toptimal bits/key\toptimal FPR\toptimal size"
	}
	fmt.Fprintln(tw, head)
	for _, l := range r.Rows {
		weight := ""
		if r.Weighted {
			weight = fmt.Sprintf("%g\t", float64(l.Weight))
		}
		opt := percent(float64(l.OptimalFPR))
		if l.OptimalBPK == 0 {
			opt = "no filter"
		}
		fmt.Fprintf(tw, "L%d\t%s\t%s%.2f\t%s\t%.2f\t%s\t%s\n", l.Level, percent(float64(l.Share)), weight,
			float64(l.UniformBPK), percent(float64(l.UniformFPR)), float64(l.OptimalBPK), opt, humanBytes(l.OptimalBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nsum of FPRs (wasted reads per lookup of an absent key): uniform %s, optimal %s (%.1fx fewer)\n",
		percent(float64(r.UniformSumFPR)), percent(float64(r.OptimalSumFPR)), float64(r.UniformSumFPR/r.OptimalSumFPR))
	if r.Weighted {
		fmt.Fprintf(w, "expected wasted reads with the weights: uniform %.4g, optimal %.4g (%.1fx fewer)\n",
			float64(r.UniformCost), float64(r.OptimalCost), float64(r.UniformCost/r.OptimalCost))
	}
	_, err := fmt.Fprintln(w, "Monkey gives each smaller level a FPR lower by the fanout (about 4.8 more bits/key for T=10).")
	return err
}
