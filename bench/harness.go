// Package bench measures Bloomery's filters side by side with the peers
// that users compare it with, in one process, on the same keys, in
// interleaved repetitions, and reports medians and same-run ratios.
//
// It is a nested module so that the peers never enter the root go.mod.
package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"
)

// Built is one constructed filter, seen through closures so that every
// implementation pays the same indirect-call cost.
type Built[K any] struct {
	Contains func(K) bool
	// Batch answers many queries at once; nil when the implementation has
	// no batch API.
	Batch func(keys []K, out []bool)
	Bytes int
	// InsertFailures counts keys the implementation refused (a peer's full
	// cuckoo table); its answers for them are then not checked.
	InsertFailures int
}

// Impl is one implementation under test.
type Impl[K any] struct {
	Name  string
	Group string // what it is compared within: "bloom", "blocked", "fuse", ...
	Ours  bool
	// Build constructs the filter from keys for a target FPR p; the time
	// it takes is the insert/build time.
	Build func(keys []K, p float64) (Built[K], error)
}

// Result is one measurement of one implementation in one repetition.
type Result struct {
	Name, Group string
	Ours        bool
	BitsPerKey  float64
	FPR         float64
	InsertNs    float64 // build time per key
	PosNs       float64 // query of present keys, random order
	NegNs       float64 // query of absent keys
	BatchNs     float64 // batch query of absent keys; 0 if no batch API
	// InsertFailures is the number of keys the filter refused.
	InsertFailures int
}

// Config says what to run.
type Config struct {
	N       int
	P       float64
	Reps    int
	Queries int // number of positive and of negative queries
	Seed    uint64
}

var sink int

// Run measures every implementation Reps times on the same keys. Within
// each repetition the implementations run one after the other in an order
// rotated between repetitions, so slow drifts of a shared machine hit all
// of them.
func Run[K any](cfg Config, keys, absent []K, impls []Impl[K], progress func(string)) ([][]Result, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	q := min(cfg.Queries, len(keys))
	pos := make([]K, q)
	for i := range pos {
		pos[i] = keys[rng.IntN(len(keys))]
	}
	// Byte-string keys are copied into one buffer in query order, as the
	// absent keys already lie: a query's key arrives fresh in the
	// caller's buffer. Left where the key set put them, random-order
	// present keys would add a cache miss of the harness's own (fetching
	// the key bytes) to every implementation's positive query.
	if ps, ok := any(pos).([][]byte); ok {
		packContiguous(ps)
	}
	neg := absent[:min(cfg.Queries, len(absent))]
	out := make([]bool, 1024)
	reps := make([][]Result, cfg.Reps)
	for r := 0; r < cfg.Reps; r++ {
		order := make([]int, len(impls))
		for i := range order {
			order[i] = (i + r) % len(impls)
		}
		res := make([]Result, len(impls))
		for _, i := range order {
			im := impls[i]
			if progress != nil {
				progress(fmt.Sprintf("rep %d/%d %s", r+1, cfg.Reps, im.Name))
			}
			runtime.GC()
			t0 := time.Now()
			b, err := im.Build(keys, cfg.P)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", im.Name, err)
			}
			ins := time.Since(t0)
			// No false negatives, checked on the sample (outside timing).
			for _, k := range pos[:min(len(pos), 100000)] {
				if b.InsertFailures == 0 && !b.Contains(k) {
					return nil, fmt.Errorf("%s: false negative", im.Name)
				}
			}
			t0 = time.Now()
			c := 0
			for _, k := range pos {
				if b.Contains(k) {
					c++
				}
			}
			posT := time.Since(t0)
			t0 = time.Now()
			fp := 0
			for _, k := range neg {
				if b.Contains(k) {
					fp++
				}
			}
			negT := time.Since(t0)
			var batchT time.Duration
			if b.Batch != nil {
				t0 = time.Now()
				for j := 0; j < len(neg); j += len(out) {
					chunk := neg[j:min(j+len(out), len(neg))]
					b.Batch(chunk, out)
					for _, v := range out[:len(chunk)] {
						if v {
							c++
						}
					}
				}
				batchT = time.Since(t0)
			}
			sink += c
			res[i] = Result{
				Name: im.Name, Group: im.Group, Ours: im.Ours,
				BitsPerKey:     float64(8*b.Bytes) / float64(len(keys)),
				FPR:            float64(fp) / float64(len(neg)),
				InsertNs:       float64(ins.Nanoseconds()) / float64(len(keys)),
				PosNs:          float64(posT.Nanoseconds()) / float64(len(pos)),
				NegNs:          float64(negT.Nanoseconds()) / float64(len(neg)),
				InsertFailures: b.InsertFailures,
			}
			if b.Batch != nil {
				res[i].BatchNs = float64(batchT.Nanoseconds()) / float64(len(neg))
			}
		}
		reps[r] = res
	}
	return reps, nil
}

// packContiguous moves every key of ks into one new buffer, in order.
func packContiguous(ks [][]byte) {
	n := 0
	for _, k := range ks {
		n += len(k)
	}
	buf := make([]byte, 0, n)
	for i, k := range ks {
		start := len(buf)
		buf = append(buf, k...)
		ks[i] = buf[start:len(buf):len(buf)]
	}
}

// Median returns the median of xs (the mean of the middle two for an even
// count).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Column extracts one figure of implementation i from every repetition.
func Column(reps [][]Result, i int, f func(Result) float64) []float64 {
	out := make([]float64, len(reps))
	for r := range reps {
		out[r] = f(reps[r][i])
	}
	return out
}

// Ratio returns the median over repetitions of f(peer)/f(ours): how many
// times faster ours is, measured within each repetition.
func Ratio(reps [][]Result, ours, peer int, f func(Result) float64) float64 {
	rs := make([]float64, len(reps))
	for r := range reps {
		rs[r] = f(reps[r][peer]) / f(reps[r][ours])
	}
	return Median(rs)
}

// SplitMix64 is the deterministic key generator.
type SplitMix64 uint64

// Next returns the next word.
func (s *SplitMix64) Next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64Keys returns n random keys (distinct with overwhelming
// probability) and m absent ones.
func Uint64Keys(n, m int, seed uint64) (keys, absent []uint64) {
	s := SplitMix64(seed)
	keys = make([]uint64, n)
	for i := range keys {
		keys[i] = s.Next()
	}
	absent = make([]uint64, m)
	for i := range absent {
		absent[i] = s.Next()
	}
	return keys, absent
}

// StringKeys returns n distinct keys of 16 to 32 bytes and m absent ones,
// carved from one backing array.
func StringKeys(n, m int, seed uint64) (keys, absent [][]byte) {
	s := SplitMix64(seed)
	all := make([][]byte, n+m)
	buf := make([]byte, 0, (n+m)*25)
	const hex = "0123456789abcdef"
	for i := range all {
		r := s.Next()
		l := 16 + int(r%17)
		start := len(buf)
		// A unique decimal prefix, then pseudo-random hex.
		buf = fmt.Appendf(buf, "%d:", i)
		for len(buf)-start < l {
			r = r*6364136223846793005 + 1442695040888963407
			buf = append(buf, hex[r>>60])
		}
		all[i] = buf[start : start+l : start+l]
	}
	return all[:n], all[n:]
}
