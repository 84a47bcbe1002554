package main

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bloomery/bloomery/pebblefilter"
	"github.com/cockroachdb/pebble/v2"
)

// countingPolicy wraps a Bloomery reader policy in pilot runs: every check
// is attributed to the level whose filter block starts with the same bytes
// (the countingFS records them when it reads a filter block), and counted
// with its answer. On a missing key every "may contain" is a false
// positive, so this gives false positives per level, which Pebble's
// metrics only report in total.
type countingPolicy struct {
	pebble.FilterPolicy
	fs *countingFS
}

func (p *countingPolicy) MayContain(ft pebble.FilterType, filter, key []byte) bool {
	r := p.FilterPolicy.MayContain(ft, filter, key)
	l := p.fs.filterLevel(filter)
	p.fs.c.checks[l].Add(1)
	if r {
		p.fs.c.positives[l].Add(1)
	}
	return r
}

// Globals for the pilot, set by main.
var (
	benchDir  string
	benchData *dataset
)

// pilotRound is one pilot run and the plan made from it.
type pilotRound struct {
	counts     pebblefilter.PilotCounts // Seek+L6 miss phase
	unassigned int64                    // filter checks not attributed to a level (must be 0)
	probes     [pebblefilter.NumLevels]float64
	specs      [pebblefilter.NumLevels]pebblefilter.Spec // the filters the pilot ran with
	// elasticity is the α per level the plan used (elastic pilots only).
	elasticity [pebblefilter.NumLevels]float64
	plan       pebblefilter.Plan
	// Model predictions of data-block reads per lookup, Σ t_i·w_i·p_i
	// (elastic: Σ t_i·w_i·q_i·(p_i/q_i)^α_i, q_i the FPR run), with this
	// round's measured weights: for the filters the pilot ran with
	// (measured value: counts) and for the plan.
	predRan, predPlan float64
	took              time.Duration
}

// pilotResult is the pilot of one cache size: its rounds, the last plan.
type pilotResult struct {
	cache   uint64
	elastic bool
	rounds  []pilotRound
	plan    pebblefilter.Plan
	probes  [pebblefilter.NumLevels]float64
	// uniformFilterBytes is the total filter size of round 1's database
	// (ours uniform), the reference for the equal-memory check.
	uniformFilterBytes uint64
}

type pilotKey struct {
	cache   uint64
	elastic bool
}

var pilots = map[pilotKey]*pilotResult{}

// pilotRun is the measurement of one pilot database; the counts are
// deterministic, so a database with the same filters and cache size is
// measured once per process (the elastic and the plain pilot share their
// first rounds).
type pilotRun struct {
	counts      pebblefilter.PilotCounts
	unassigned  int64
	filterBytes uint64
	took        time.Duration
}

type pilotRunKey struct {
	cache uint64
	specs [pebblefilter.NumLevels]pebblefilter.Spec
}

var pilotRuns = map[pilotRunKey]pilotRun{}

// Clamp of the estimated elasticities (pebblefilter.Elasticities).
const elasticLo, elasticHi = 0.25, 1.5

func runPilot(cacheBytes uint64, specs [pebblefilter.NumLevels]pebblefilter.Spec, round int) (pilotRun, error) {
	k := pilotRunKey{cacheBytes, specs}
	if r, ok := pilotRuns[k]; ok {
		return r, nil
	}
	t0 := time.Now()
	cfg := config{name: fmt.Sprintf("pilot round %d", round), apply: func(o *pebble.Options, _ uint64) error {
		return pebblefilter.Apply(o, specs)
	}}
	dir := filepath.Join(benchDir, "pilot")
	if err := build(dir, benchData, cfg, cacheBytes); err != nil {
		return pilotRun{}, fmt.Errorf("pilot: build: %w", err)
	}
	m, err := measure(dir, benchData, cfg, cacheBytes, true)
	if err != nil {
		return pilotRun{}, fmt.Errorf("pilot: %w", err)
	}
	var r pilotRun
	for _, ls := range m.levels {
		r.filterBytes += ls.filterBy
	}
	ph := m.phases[1]
	r.unassigned = ph.io.checks[7]
	r.counts.Lookups = int64(ph.ops)
	for l := range pebblefilter.NumLevels {
		r.counts.Checks[l] = ph.io.checks[l]
		r.counts.FalsePositives[l] = ph.io.positives[l]
		r.counts.DataReads[l] = ph.io.reads[l][classData]
	}
	r.took = time.Since(t0)
	pilotRuns[k] = r
	return r, nil
}

// pilotPlan runs the pilot for a cache size once. Round 1: the uniform
// configuration (ours, -bits bits per key on every level) is built in its
// own directory, opened with a fresh cache of that size, and put through
// the same warm-up, Get-miss and Seek-miss phases as a measured run, with
// disjoint keys (pilotKeys). The Seek-miss phase gives, per level, false
// positives F_i, data-block reads R_i and filter checks C_i; the weights
// are R_i/F_i (the probability that a false positive costs a read under
// this cache and workload), the probes C_i/lookups, and Allocate spends
// the same budget as uniform with them. Round r > 1 repeats the pilot with
// the filters of round r−1's plan and re-allocates with the weights
// measured there: a level's reads are not proportional to its false
// positives (a block read once stays cached for a while, so the first
// false positives on a block cost more than the later ones), so the weight
// that matters is the one at the operating point the allocation produces.
// With -pilot-tol the rounds stop at a fixed point: the first round whose
// own re-allocation lowers the modelled reads Σ t_i·w_i·p_i (at the
// weights it measured) by less than the tolerance.
func pilotPlan(cacheBytes uint64, elastic bool) (*pilotResult, error) {
	if p, ok := pilots[pilotKey{cacheBytes, elastic}]; ok {
		return p, nil
	}
	res := &pilotResult{cache: cacheBytes, elastic: elastic}
	specs := uniform(pebblefilter.Bloom(*bitsFlag))
	var history []pebblefilter.PilotCounts
	for r := range max(1, *pilotRoundsFlag) {
		run, err := runPilot(cacheBytes, specs, r+1)
		if err != nil {
			return nil, err
		}
		if r == 0 {
			res.uniformFilterBytes = run.filterBytes
		}
		rd := pilotRound{counts: run.counts, unassigned: run.unassigned, specs: specs, took: run.took}
		history = append(history, run.counts)
		rd.probes = rd.counts.Probes()
		o := pebblefilter.AllocOptions{
			BitsPerKey: *bitsFlag, Weights: rd.counts.Weights(), Probes: rd.probes, MinWeight: *minWFlag,
		}
		var q [pebblefilter.NumLevels]float64 // FPR of the filters run
		for l := range q {
			q[l] = pebblefilter.BloomModelFPR(specs[l].BitsPerKey)
		}
		if elastic {
			if rd.elasticity, err = pebblefilter.Elasticities(history, elasticLo, elasticHi); err != nil {
				return nil, err
			}
			o.Elasticity, o.WeightFPR = rd.elasticity, q
		}
		if rd.plan, err = pebblefilter.Allocate(levelInfo, o); err != nil {
			return nil, err
		}
		w := rd.counts.Weights() // unfloored, for the prediction
		for l, li := range levelInfo {
			if li.Keys == 0 {
				continue
			}
			a := 1.0
			if elastic {
				a = rd.elasticity[l]
			}
			p := pebblefilter.BloomModelFPR(rd.plan.Specs[l].BitsPerKey)
			rd.predRan += rd.probes[l] * w[l] * q[l]
			rd.predPlan += rd.probes[l] * w[l] * q[l] * math.Pow(p/q[l], a)
		}
		log.Printf("pilot round %d (cache %d MiB, elastic %v): %v; weights %.3f; elasticities %.2f; plan %s", r+1, cacheBytes>>20, elastic, rd.took.Round(time.Millisecond), rd.plan.Weights, rd.elasticity, specsString(rd.plan.Specs))
		if rd.unassigned != 0 {
			log.Printf("pilot (cache %d MiB): %d filter checks not attributed to a level", cacheBytes>>20, rd.unassigned)
		}
		res.rounds = append(res.rounds, rd)
		res.plan, res.probes, specs = rd.plan, rd.probes, rd.plan.Specs
		if *pilotTolFlag > 0 && rd.predPlan >= rd.predRan*(1-*pilotTolFlag) {
			// The filters this round ran with are already (within tol)
			// optimal for the weights (and elasticities) measured with
			// them: a fixed point. Its plan differs from them by less
			// than the tolerance.
			log.Printf("pilot (cache %d MiB, elastic %v): fixed point after round %d (modelled gain %.2f%% < %g%%)", cacheBytes>>20, elastic, r+1, 100*(1-rd.predPlan/rd.predRan), 100**pilotTolFlag)
			break
		}
	}
	if err := os.RemoveAll(filepath.Join(benchDir, "pilot")); err != nil {
		return nil, err
	}
	pilots[pilotKey{cacheBytes, elastic}] = res
	return res, nil
}

// printPilots reports the pilots that ran.
func printPilots(out *os.File, caches []uint64) {
	if len(pilots) == 0 {
		return
	}
	fmt.Fprintf(out, "## Pilot runs (monkey-pilot)\n\nEach round builds the database with the filters shown (round 1: ours uniform %g bits/key; round r: round r-1's plan) and runs warm-up, Get miss and Seek+L6 miss with keys disjoint from the measured runs (missing-key streams 3 and 4, another draw of present keys). Per level, in the Seek+L6 miss phase: filter checks, false positives (\"may contain\") and data-block reads per lookup; weight = reads / false positives (probability that a false positive costs a read); the plan is Allocate with these weights (floor %g) and probes = checks/op, at the uniform budget.\n\n", *bitsFlag, *minWFlag)
	fmt.Fprintf(out, "Elastic pilot (monkey-pilot-elastic): the plan also uses each level's elasticity α = Δ ln(reads) / Δ ln(FPR) between this round and the nearest earlier round precise enough for it (at least 20 false positives and reads on the level in both, standard error sqrt(1/R1+1/R2)/|Δ ln FPR| <= 0.15; else 1), clamped to [%g, %g], modelling reads as t·w·q·(p/q)^α around the FPR q run (pebblefilter.Elasticities); the plain pilot's α column shows -.\n\n", elasticLo, elasticHi)
	fmt.Fprintf(out, "| pilot | cache MiB | round | level | bits run | checks/op | FP/op | rd/op | weight | α | plan bits |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	var lines []string
	for _, elastic := range []bool{false, true} {
		name := "plain"
		if elastic {
			name = "elastic"
		}
		for _, c := range caches {
			p, ok := pilots[pilotKey{c, elastic}]
			if !ok {
				continue
			}
			for r, rd := range p.rounds {
				n := float64(rd.counts.Lookups)
				for l, li := range levelInfo {
					if li.Keys == 0 {
						continue
					}
					a := "-"
					if elastic {
						a = fmt.Sprintf("%.2f", rd.elasticity[l])
					}
					fmt.Fprintf(out, "| %s | %d | %d | L%d | %.2f | %.4f | %.5f | %.5f | %.3f | %s | %.2f |\n", name, c>>20, r+1, l, rd.specs[l].BitsPerKey,
						float64(rd.counts.Checks[l])/n, float64(rd.counts.FalsePositives[l])/n, float64(rd.counts.DataReads[l])/n,
						rd.counts.Weights()[l], a, rd.plan.Specs[l].BitsPerKey)
				}
				var tot int64
				for _, x := range rd.counts.DataReads {
					tot += x
				}
				lines = append(lines, fmt.Sprintf("- %s, %d MiB, round %d: %d lookups, %d checks unattributed; data-block reads/op measured %.5f; model with this round's weights: filters run %.5f, plan %.5f (%+.1f%%); took %v",
					name, c>>20, r+1, rd.counts.Lookups, rd.unassigned, float64(tot)/float64(rd.counts.Lookups), rd.predRan, rd.predPlan, 100*(rd.predPlan/rd.predRan-1), rd.took.Round(time.Second)))
			}
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%s\n\n", strings.Join(lines, "\n"))
}
