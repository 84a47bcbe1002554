package bloom

import (
	"math/bits"

	"github.com/bloomery/bloomery/hashing"
)

// Filter batch queries. A standard Bloom key's k probes land on k
// unrelated cache lines. A loop of ContainsHash calls overlaps the misses
// of consecutive keys only as far as the core's reorder window reaches,
// and an absent key's early exit, a branch the predictor often misses,
// throws away the loads issued past it. ContainsBatch on a large array
// first locates all k probe words of the next filterGroup keys and
// prefetches them (PREFETCHT0 retires at once, so they all stay in flight),
// then answers the current group with ContainsHash, whose loads now mostly
// hit lines already on their way.
//
// Measured (BenchmarkFilterContainsBatch, batches of 100 hashes, 1% FPR,
// k = 7, the development VM with 1 MiB L2 per core and 32 MiB shared L3,
// medians of 3, ns per batch, loop against batch):
//
//	keys  array    absent        present
//	10^6  1.2 MB   2.5k / 3.8k   1.7k / 3.2k   (pipeline slower)
//	3e6   3.6 MB   2.9k / 4.6k   3.0k / 3.6k   (pipeline slower)
//	6e6   7.2 MB   4.6k / 5.0k   7.0k / 4.5k   (mixed)
//	10^7  12 MB    6.6k / 4.9k   9.1k / 5.1k   (pipeline 1.35x, 1.8x faster)
//
// Below several MiB the probes hit L2 or L3 quickly, and locating every
// probe twice (once to prefetch, once to test) costs more than the misses
// it hides; prefetching all k words of an absent key (ContainsHash reads
// about two) also spends bandwidth. Prefetching only the first two probes,
// or testing all k branch-free instead of calling ContainsHash, measured
// no better at any size. Hence filterBatchMinBytes.
const (
	filterGroup = 8
	// filterBatchMaxK bounds k for the pipelined path: the plan holds
	// filterGroup*filterBatchMaxK offsets on the stack. Larger k (an FPR
	// below about 2^-32) takes the plain loop.
	filterBatchMaxK = 32
	// filterBatchMinBytes is the smallest array the pipeline runs on
	// (see the measurements above).
	filterBatchMinBytes = 8 << 20
)

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes).
//
// On arrays of at least 8 MiB (and k <= 32) it prefetches every probe
// word of the next 8 keys before answering the current 8, so the misses
// of independent keys overlap (see filterGroup); smaller arrays, where
// that measured slower, take a ContainsHash loop. The answers are
// ContainsHash's in both cases. It does not allocate (the plan, 2 KB,
// lives on the stack) and may run concurrently with other readers.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if f.k == 0 || f.k > filterBatchMaxK || len(f.words)*8 < filterBatchMinBytes || len(hashes) <= filterGroup {
		for i, h := range hashes {
			out[i] = f.ContainsHash(h)
		}
		return
	}
	var offs [filterGroup * filterBatchMaxK]uint64
	cur := f.prefetchGroup(hashes, &offs)
	for len(hashes) > 0 {
		rest := hashes[cur:]
		next := f.prefetchGroup(rest, &offs)
		for i, h := range hashes[:cur] {
			out[i] = f.ContainsHash(h)
		}
		hashes, out, cur = rest, out[cur:], next
	}
}

// prefetchGroup locates all k probe words of up to filterGroup leading
// hashes, starts fetching them and returns how many hashes it took. The
// probe sequence is ContainsHash's (see Filter, "Probes" and "Word and
// bit"), so every offset is below len(f.words). offs is scratch: the
// prefetches do not read it after they are issued.
func (f *Filter) prefetchGroup(hashes []uint64, offs *[filterGroup * filterBatchMaxK]uint64) int {
	n := min(len(hashes), filterGroup)
	k := f.k
	w := uint64(len(f.words))
	c := 0
	for _, h := range hashes[:n] {
		d := hashing.Mix64(h) | 1
		for range k {
			hi, _ := bits.Mul64(h, w)
			offs[c&(len(offs)-1)] = hi
			c++
			h += d
		}
	}
	prefetchLines(f.words, offs[:c], false)
	return n
}
