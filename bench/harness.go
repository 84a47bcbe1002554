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

// Built is one constructed filter, seen through closures.
type Built[K any] struct {
	// Count returns how many of keys the filter answers "maybe" for. It
	// calls the filter's own per-key query in a loop of its own, directly,
	// as a caller's loop would: the harness pays one indirect call per
	// chunk of keys, not one per key. (Through a method value the call
	// costs about 17 more instructions per key, a sixth of a 10^7-key
	// Bloom filter's string query, and the same constant added to both
	// sides of a ratio understates the faster one.)
	Count func(keys []K) int
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
	// NegBesideBatchNs is, for an implementation without a batch API, its
	// per-key query of the absent keys measured again in turns with the
	// others' batch queries, so that a batch and the per-key query it is
	// compared with see the same moments of the machine; 0 for those
	// with a batch API.
	NegBesideBatchNs float64
	// InsertFailures is the number of keys the filter refused.
	InsertFailures int
}

// BatchReferenceNs is the per-key query time a batch is compared with:
// NegBesideBatchNs, measured in turns with the batches, when there is one,
// else NegNs.
func (r Result) BatchReferenceNs() float64 {
	if r.NegBesideBatchNs > 0 {
		return r.NegBesideBatchNs
	}
	return r.NegNs
}

// Config says what to run.
type Config struct {
	N       int
	P       float64
	Reps    int
	Queries int // number of positive and of negative queries
	Seed    uint64
}

//lint:ignore U1000 written so that query results stay observable
var sink int

// querySets names, for the groups that are compared with another group's
// filters, the group whose query measurements they are interleaved with:
// ribbon's targets are ratios to blocked Bloom, fuse8-4 sits beside fuse8.
var querySets = map[string]string{"ribbon": "blocked", "fuse8-4": "fuse8"}

// Chunk is how many queries one implementation answers before the next
// one of its set takes over (see Run).
const Chunk = 8192

// Run measures every implementation Reps times on the same keys.
//
// Within a repetition the implementations are taken set by set (a group,
// with the groups compared with it: querySets), in an order rotated
// between repetitions. A set's filters are built one after the other
// (each build timed alone, after a GC), then queried side by side: the
// positive, negative and batch queries are cut into chunks of 8192 keys,
// and for every chunk each filter of the set answers it in turn, the
// first of the turn rotating from chunk to chunk. Each filter's time is the
// sum of its chunks. In the batch pass the filters without a batch API
// answer the chunks key by key (NegBesideBatchNs), so that each batch
// ratio divides times taken side by side like every other ratio. On a shared machine the time a memory-bound query
// takes moves by 2-4x within a second, as other tenants take and release
// the shared L3 cache and memory bandwidth; measured whole, one after the
// other, two filters could see different machines and their ratio moved
// with it (a 10^7-key standard Bloom filter queried alone took 29 to 197
// ns per key from one pass to the next). Alternating every millisecond or
// so, both see the same conditions and the ratio holds still. The cost:
// the filters of a set share the cache while they are measured, as filters
// in a real process share it with each other and with everything else.
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
		for _, set := range querySetsOf(impls, order) {
			built := make([]Built[K], len(set))
			for si, i := range set {
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
				built[si] = b
				res[i] = Result{
					Name: im.Name, Group: im.Group, Ours: im.Ours,
					BitsPerKey:     float64(8*b.Bytes) / float64(len(keys)),
					InsertNs:       float64(ins.Nanoseconds()) / float64(len(keys)),
					InsertFailures: b.InsertFailures,
				}
			}
			contains := func(b Built[K], ks []K) int { return b.Count(ks) }
			// No false negatives, checked on a sample of the present keys
			// before the timed queries, in the same turns: it also brings
			// every filter of the set back into the cache the builds that
			// followed its own have flushed, so that none starts cold.
			sample := pos[:min(len(pos), 100000)]
			_, found := interleave(built, sample, contains)
			for si, i := range set {
				if built[si].InsertFailures == 0 && found[si] != len(sample) {
					return nil, fmt.Errorf("%s: false negative", impls[i].Name)
				}
			}
			posT, _ := interleave(built, pos, contains)
			negT, fps := interleave(built, neg, contains)
			// The batch queries, in turns with the per-key queries of
			// the filters that have no batch API, which the reports
			// compare the batches with.
			batchT, _ := interleave(built, neg, func(b Built[K], ks []K) int {
				if b.Batch == nil {
					return contains(b, ks)
				}
				c := 0
				for j := 0; j < len(ks); j += len(out) {
					part := ks[j:min(j+len(out), len(ks))]
					b.Batch(part, out)
					for _, v := range out[:len(part)] {
						if v {
							c++
						}
					}
				}
				return c
			})
			for si, i := range set {
				res[i].PosNs = float64(posT[si].Nanoseconds()) / float64(len(pos))
				res[i].NegNs = float64(negT[si].Nanoseconds()) / float64(len(neg))
				res[i].FPR = float64(fps[si]) / float64(len(neg))
				bt := float64(batchT[si].Nanoseconds()) / float64(len(neg))
				if built[si].Batch != nil {
					res[i].BatchNs = bt
				} else {
					res[i].NegBesideBatchNs = bt
				}
			}
		}
		reps[r] = res
	}
	return reps, nil
}

// querySetsOf partitions the implementations, listed in order, into the
// sets measured side by side: each group with the groups querySets puts
// beside it. Sets come in the order of their first member; a set's members
// keep their order.
func querySetsOf[K any](impls []Impl[K], order []int) [][]int {
	var sets [][]int
	at := map[string]int{}
	for _, i := range order {
		g := impls[i].Group
		if s, ok := querySets[g]; ok {
			g = s
		}
		si, ok := at[g]
		if !ok {
			si = len(sets)
			at[g] = si
			sets = append(sets, nil)
		}
		sets[si] = append(sets[si], i)
	}
	return sets
}

// interleave runs f(b, chunk) for every filter b over every Chunk-key chunk of
// keys, the filters taking turns chunk by chunk (the first of each turn
// rotating), and returns each filter's total time and the sum of what f
// returned for it.
func interleave[K any](built []Built[K], keys []K, f func(Built[K], []K) int) ([]time.Duration, []int) {
	ts := make([]time.Duration, len(built))
	cs := make([]int, len(built))
	for c, j := 0, 0; j < len(keys); c, j = c+1, j+Chunk {
		part := keys[j:min(j+Chunk, len(keys))]
		for t := range built {
			i := (t + c) % len(built)
			t0 := time.Now()
			cs[i] += f(built[i], part)
			ts[i] += time.Since(t0)
		}
	}
	for _, c := range cs {
		sink += c
	}
	return ts, cs
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
	return Median(Ratios(reps, ours, peer, f))
}

// Ratios returns f(peer)/f(ours) in each repetition.
func Ratios(reps [][]Result, ours, peer int, f func(Result) float64) []float64 {
	rs := make([]float64, len(reps))
	for r := range reps {
		rs[r] = f(reps[r][peer]) / f(reps[r][ours])
	}
	return rs
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
