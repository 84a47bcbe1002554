package main

import (
	"fmt"
	"log"
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
	plan       pebblefilter.Plan
	// Model predictions of data-block reads per lookup, Σ t_i·w_i·p_i,
	// with this round's measured weights: for the filters the pilot ran
	// with (measured value: counts) and for the plan.
	predRan, predPlan float64
	took              time.Duration
}

// pilotResult is the pilot of one cache size: its rounds, the last plan.
type pilotResult struct {
	cache  uint64
	rounds []pilotRound
	plan   pebblefilter.Plan
	probes [pebblefilter.NumLevels]float64
	// uniformFilterBytes is the total filter size of round 1's database
	// (ours uniform), the reference for the equal-memory check.
	uniformFilterBytes uint64
}

var pilots = map[uint64]*pilotResult{}

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
func pilotPlan(cacheBytes uint64) (*pilotResult, error) {
	if p, ok := pilots[cacheBytes]; ok {
		return p, nil
	}
	res := &pilotResult{cache: cacheBytes}
	specs := uniform(pebblefilter.Bloom(*bitsFlag))
	for r := range max(1, *pilotRoundsFlag) {
		t0 := time.Now()
		cfg := config{name: fmt.Sprintf("pilot round %d", r+1), apply: func(o *pebble.Options, _ uint64) error {
			return pebblefilter.Apply(o, specs)
		}}
		dir := filepath.Join(benchDir, "pilot")
		if err := build(dir, benchData, cfg, cacheBytes); err != nil {
			return nil, fmt.Errorf("pilot: build: %w", err)
		}
		m, err := measure(dir, benchData, cfg, cacheBytes, true)
		if err != nil {
			return nil, fmt.Errorf("pilot: %w", err)
		}
		if r == 0 {
			for _, ls := range m.levels {
				res.uniformFilterBytes += ls.filterBy
			}
		}
		ph := m.phases[1]
		rd := pilotRound{unassigned: ph.io.checks[7], specs: specs}
		rd.counts.Lookups = int64(ph.ops)
		for l := range pebblefilter.NumLevels {
			rd.counts.Checks[l] = ph.io.checks[l]
			rd.counts.FalsePositives[l] = ph.io.positives[l]
			rd.counts.DataReads[l] = ph.io.reads[l][classData]
		}
		rd.probes = rd.counts.Probes()
		rd.plan, err = pebblefilter.Allocate(levelInfo, pebblefilter.AllocOptions{
			BitsPerKey: *bitsFlag, Weights: rd.counts.Weights(), Probes: rd.probes, MinWeight: *minWFlag,
		})
		if err != nil {
			return nil, err
		}
		w := rd.counts.Weights() // unfloored, for the prediction
		for l, li := range levelInfo {
			if li.Keys == 0 {
				continue
			}
			rd.predRan += rd.probes[l] * w[l] * pebblefilter.BloomModelFPR(specs[l].BitsPerKey)
			rd.predPlan += rd.probes[l] * w[l] * pebblefilter.BloomModelFPR(rd.plan.Specs[l].BitsPerKey)
		}
		rd.took = time.Since(t0)
		log.Printf("pilot round %d (cache %d MiB): %v; weights %.3f; plan %s", r+1, cacheBytes>>20, rd.took.Round(time.Millisecond), rd.plan.Weights, specsString(rd.plan.Specs))
		if rd.unassigned != 0 {
			log.Printf("pilot (cache %d MiB): %d filter checks not attributed to a level", cacheBytes>>20, rd.unassigned)
		}
		res.rounds = append(res.rounds, rd)
		res.plan, res.probes, specs = rd.plan, rd.probes, rd.plan.Specs
		if *pilotTolFlag > 0 && rd.predPlan >= rd.predRan*(1-*pilotTolFlag) {
			// The filters this round ran with are already (within tol)
			// optimal for the weights measured with them: a fixed point.
			// Its plan differs from them by less than the tolerance.
			log.Printf("pilot (cache %d MiB): fixed point after round %d (modelled gain %.2f%% < %g%%)", cacheBytes>>20, r+1, 100*(1-rd.predPlan/rd.predRan), 100**pilotTolFlag)
			break
		}
	}
	if err := os.RemoveAll(filepath.Join(benchDir, "pilot")); err != nil {
		return nil, err
	}
	pilots[cacheBytes] = res
	return res, nil
}

// printPilots reports the pilots that ran.
func printPilots(out *os.File, caches []uint64) {
	if len(pilots) == 0 {
		return
	}
	fmt.Fprintf(out, "## Pilot runs (monkey-pilot)\n\nEach round builds the database with the filters shown (round 1: ours uniform %g bits/key; round r: round r-1's plan) and runs warm-up, Get miss and Seek+L6 miss with keys disjoint from the measured runs (missing-key streams 3 and 4, another draw of present keys). Per level, in the Seek+L6 miss phase: filter checks, false positives (\"may contain\") and data-block reads per lookup; weight = reads / false positives (probability that a false positive costs a read); the plan is Allocate with these weights (floor %g) and probes = checks/op, at the uniform budget.\n\n", *bitsFlag, *minWFlag)
	fmt.Fprintf(out, "| cache MiB | round | level | bits run | checks/op | FP/op | rd/op | weight | plan bits |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range caches {
		p, ok := pilots[c]
		if !ok {
			continue
		}
		for r, rd := range p.rounds {
			n := float64(rd.counts.Lookups)
			for l, li := range levelInfo {
				if li.Keys == 0 {
					continue
				}
				fmt.Fprintf(out, "| %d | %d | L%d | %.2f | %.4f | %.5f | %.5f | %.3f | %.2f |\n", c>>20, r+1, l, rd.specs[l].BitsPerKey,
					float64(rd.counts.Checks[l])/n, float64(rd.counts.FalsePositives[l])/n, float64(rd.counts.DataReads[l])/n,
					rd.counts.Weights()[l], rd.plan.Specs[l].BitsPerKey)
			}
		}
	}
	fmt.Fprintln(out)
	var lines []string
	for _, c := range caches {
		p, ok := pilots[c]
		if !ok {
			continue
		}
		for r, rd := range p.rounds {
			var tot int64
			for _, x := range rd.counts.DataReads {
				tot += x
			}
			lines = append(lines, fmt.Sprintf("- %d MiB, round %d: %d lookups, %d checks unattributed; data-block reads/op measured %.5f; model with this round's weights: filters run %.5f, plan %.5f (%+.1f%%); took %v",
				c>>20, r+1, rd.counts.Lookups, rd.unassigned, float64(tot)/float64(rd.counts.Lookups), rd.predRan, rd.predPlan, 100*(rd.predPlan/rd.predRan-1), rd.took.Round(time.Second)))
		}
	}
	fmt.Fprintf(out, "%s\n\n", strings.Join(lines, "\n"))
}
