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

// pilotResult is the pilot of one cache size and the plan made from it.
type pilotResult struct {
	cache      uint64
	counts     pebblefilter.PilotCounts // Seek+L6 miss phase
	unassigned int64                    // filter checks not attributed to a level (must be 0)
	probes     [pebblefilter.NumLevels]float64
	plan       pebblefilter.Plan
	// Model predictions of data-block reads per lookup, Σ t_i·w_i·p_i,
	// with the measured weights: uniform and the plan.
	predUniform, predPlan float64
	took                  time.Duration
}

var (
	pilots     = map[uint64]*pilotResult{}
	pilotBuilt bool
)

// pilotPlan runs the pilot for a cache size once: the uniform
// configuration (ours, -bits bits per key on every level) is built in its
// own directory, opened with a fresh cache of that size, and put through
// the same warm-up, Get-miss and Seek-miss phases as a measured run, with
// disjoint keys (pilotKeys). The Seek-miss phase gives, per level, false
// positives F_i, data-block reads R_i and filter checks C_i; the weights
// are R_i/F_i (the probability that a false positive costs a read under
// this cache and workload), the probes C_i/lookups, and Allocate spends
// the same budget as uniform with them.
func pilotPlan(cacheBytes uint64) (*pilotResult, error) {
	if p, ok := pilots[cacheBytes]; ok {
		return p, nil
	}
	t0 := time.Now()
	uni := configs()["bloom10"]
	dir := filepath.Join(benchDir, "pilot")
	if !pilotBuilt {
		if err := build(dir, benchData, uni, 0); err != nil {
			return nil, fmt.Errorf("pilot: build: %w", err)
		}
		pilotBuilt = true
	}
	res, err := measure(dir, benchData, uni, cacheBytes, true)
	if err != nil {
		return nil, fmt.Errorf("pilot: %w", err)
	}
	ph := res.phases[1]
	p := &pilotResult{cache: cacheBytes, unassigned: ph.io.checks[7]}
	p.counts.Lookups = int64(ph.ops)
	for l := range pebblefilter.NumLevels {
		p.counts.Checks[l] = ph.io.checks[l]
		p.counts.FalsePositives[l] = ph.io.positives[l]
		p.counts.DataReads[l] = ph.io.reads[l][classData]
	}
	p.probes = p.counts.Probes()
	p.plan, err = pebblefilter.Allocate(levelInfo, pebblefilter.AllocOptions{
		BitsPerKey: *bitsFlag, Weights: p.counts.Weights(), Probes: p.probes, MinWeight: *minWFlag,
	})
	if err != nil {
		return nil, err
	}
	w := p.counts.Weights() // unfloored, for the prediction
	for l, li := range levelInfo {
		if li.Keys == 0 {
			continue
		}
		p.predUniform += p.probes[l] * w[l] * pebblefilter.BloomModelFPR(*bitsFlag)
		p.predPlan += p.probes[l] * w[l] * pebblefilter.BloomModelFPR(p.plan.Specs[l].BitsPerKey)
	}
	p.took = time.Since(t0)
	pilots[cacheBytes] = p
	log.Printf("pilot (cache %d MiB): %v; weights %.3f; plan %s", cacheBytes>>20, p.took.Round(time.Millisecond), p.plan.Weights, specsString(p.plan.Specs))
	if p.unassigned != 0 {
		log.Printf("pilot (cache %d MiB): %d filter checks not attributed to a level", cacheBytes>>20, p.unassigned)
	}
	return p, nil
}

// printPilots reports the pilots that ran.
func printPilots(out *os.File, caches []uint64) {
	if len(pilots) == 0 {
		return
	}
	fmt.Fprintf(out, "## Pilot runs (monkey-pilot)\n\nOurs uniform %g bits/key, built separately; warm-up, Get miss, Seek+L6 miss with keys disjoint from the measured runs (missing-key streams 3 and 4, another draw of present keys). Per level, in the Seek+L6 miss phase: filter checks, false positives (\"may contain\") and data-block reads per lookup; weight = reads / false positives (probability that a false positive costs a read); predicted = model Σ probes·weight·FPR(bits) in reads per lookup.\n\n", *bitsFlag)
	fmt.Fprintf(out, "| cache MiB | level | checks/op | FP/op | rd/op | weight | uniform bits | plan bits |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range caches {
		p, ok := pilots[c]
		if !ok {
			continue
		}
		n := float64(p.counts.Lookups)
		for l, li := range levelInfo {
			if li.Keys == 0 {
				continue
			}
			fmt.Fprintf(out, "| %d | L%d | %.4f | %.5f | %.5f | %.3f | %g | %.2f |\n", c>>20, l,
				float64(p.counts.Checks[l])/n, float64(p.counts.FalsePositives[l])/n, float64(p.counts.DataReads[l])/n,
				p.counts.Weights()[l], *bitsFlag, p.plan.Specs[l].BitsPerKey)
		}
	}
	fmt.Fprintln(out)
	var lines []string
	for _, c := range caches {
		if p, ok := pilots[c]; ok {
			lines = append(lines, fmt.Sprintf("- %d MiB: %d lookups, %d checks unattributed; predicted reads/op uniform %.5f, plan %.5f (%+.1f%%); pilot took %v",
				c>>20, p.counts.Lookups, p.unassigned, p.predUniform, p.predPlan, 100*(p.predPlan/p.predUniform-1), p.took.Round(time.Second)))
		}
	}
	fmt.Fprintf(out, "%s\n\n", strings.Join(lines, "\n"))
}
