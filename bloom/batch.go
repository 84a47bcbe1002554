package bloom

import (
	"unsafe"

	"github.com/bloomery/bloomery/hashing"
)

// batchGroup is the number of keys whose cache lines a batch operation
// requests together. The batch loops are software-pipelined: the lines of
// group g+1 are prefetched before the keys of group g are probed, so about
// 16-32 independent misses are always in flight.
const batchGroup = 16

// ContainsBatch pipeline (the Go one; see ContainsBatch): keys are
// planned (block offset computed, line prefetched) batchGroup at a time,
// batchAhead keys ahead of the key being probed, through a ring of
// batchRing offsets (the assembly loop prefetches one key at a time,
// asmBatchAhead keys ahead). batchAhead is two
// groups: one group ahead (the AddBatch pipeline) gave a line only the
// time of probing 16 keys, about as long as a DRAM miss on the
// development VM, and at 10^8 keys the probes still waited for it;
// two groups ahead cut the batch query by about 10-15% there
// (bench/cmd/blockedprobe), while larger groups or distances did not
// help.
const (
	batchAhead = 2 * batchGroup
	batchRing  = 64 // >= batchAhead + batchGroup, a multiple of batchGroup
)

// asmBatchAhead is how many keys ahead containsBatchAsm prefetches. It
// was batchAhead (32) until the twelfth session; on the Intel VM, 64 made
// the batch at 10^8 keys about 10% faster. A bare loop reading random
// lines of a 120 MB array on huge pages took 9.5 ns a line prefetching 32
// ahead and 8.0 ns 64 ahead. In benchreport (-sizes 1e8 -keys uint64 -only
// blocked, four alternated pairs of runs), the batch took 15.0, 16.3,
// 18.7 and 14.1 ns a key against 17.5, 17.8, 16.6 and 18.6.
const asmBatchAhead = 64

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes).
//
// It prefetches the lines of hashes 64 positions ahead of the one it
// checks (32 in the Go pipeline), with a branch-free check, so
// independent DRAM misses overlap instead of being paid one after
// another: on a filter much larger than the cache this costs a fraction
// of a dependent miss per key. On amd64 with BMI1 and BMI2, outside the
// concurrent mode and for k <= 7, one assembly loop does it key by key:
// prefetch the line of key i+64 (asmBatchAhead), check key i; with
// AVX-512 the check tests the k probes in one 512-bit register and the
// prefetches go to L2 (containsBatchAVX512, about twice as fast), else
// the probes are tested one by one (containsBatchAsm). Otherwise the Go pipeline below computes the block
// addresses 16 at a time, prefetches them (PREFETCHT0 on amd64, plain
// loads elsewhere) and probes the current 16. It does not allocate.
func (f *Blocked) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if haveProbeAsm && !f.concurrent && f.k <= 7 && len(hashes) > 0 {
		if haveAVX512 {
			containsBatchAVX512(unsafe.Pointer(unsafe.SliceData(f.words)), f.blocks, &hashes[0], &out[0], len(hashes), f.k, asmBatchAhead)
			return
		}
		containsBatchAsm(unsafe.Pointer(unsafe.SliceData(f.words)), f.blocks, &hashes[0], &out[0], len(hashes), f.k, asmBatchAhead)
		return
	}
	f.containsBatchGo(hashes, out)
}

// containsBatchGo is ContainsBatch's Go pipeline, for len(out) ==
// len(hashes).
func (f *Blocked) containsBatchGo(hashes []uint64, out []bool) {
	var ring [batchRing]uint64
	n := len(hashes)
	planned := 0
	for planned < n && planned < batchAhead {
		planned = f.planRing(hashes, planned, &ring)
	}
	base := unsafe.Pointer(unsafe.SliceData(f.words))
	k := f.k
	for i := 0; i < n; i += batchGroup {
		if planned < n {
			planned = f.planRing(hashes, planned, &ring)
		}
		end := min(i+batchGroup, n)
		if f.concurrent {
			for j := i; j < end; j++ {
				out[j] = f.containsAtomic(ring[j&(batchRing-1)], hashes[j])
			}
			continue
		}
		probeGroup(base, &ring, i, hashes[i:end], out[i:end], k)
	}
}

// probeGroup sets out[j] for the keys hashes[j] whose word offsets are
// at ring[(from+j)%batchRing], with the branch-free check: bit 0 of the
// AND of all k probe bits. It is a function of its own, called once per
// group, so that the compiler keeps the probe loop's few values in
// registers (in line in ContainsBatch they were spilled around every
// probe).
func probeGroup(base unsafe.Pointer, ring *[batchRing]uint64, from int, hashes []uint64, out []bool, k int) {
	head := min(k, 7)
	out = out[:len(hashes)]
	for j, h := range hashes {
		// The offset came from Reduce(h, blocks)*8: in bounds (see
		// (*Blocked).line).
		line := (*[8]uint64)(unsafe.Add(base, ring[(from+j)&(batchRing-1)]*8))
		x := hashing.Mix64(h)
		acc := line[(x>>6)&7] >> (x & 63)
		for c := head - 1; c > 0; c-- {
			x >>= 9
			acc &= line[(x>>6)&7] >> (x & 63)
		}
		if k > 7 {
			acc &= allFrom(line, h, k-7)
		}
		out[j] = acc&1 != 0
	}
}

// planRing computes the block offsets of hashes[from:from+batchGroup]
// (fewer at the end) into ring[from%batchRing...], starts fetching their
// lines and returns the index after the last one planned. from is a
// multiple of batchGroup, so the span does not wrap around the ring.
func (f *Blocked) planRing(hashes []uint64, from int, ring *[batchRing]uint64) int {
	end := min(from+batchGroup, len(hashes))
	r := ring[from&(batchRing-1):][:end-from]
	for i, h := range hashes[from:end] {
		r[i] = f.offset(h)
	}
	prefetchLines(f.words, r, f.concurrent)
	return end
}

// AddBatch inserts every hash, like AddHash in order, and returns how many
// were new. Like ContainsBatch it prefetches the lines of the next group
// while it updates the current one (with AddHash: on amd64 the assembly
// leaf, which recomputes the block offset, one multiply). It does not
// allocate.
func (f *Blocked) AddBatch(hashes []uint64) int {
	var offs [2][batchGroup]uint64
	added := 0
	cur := f.plan(hashes, &offs[0])
	for g := 0; len(hashes) > 0; g ^= 1 {
		rest := hashes[cur:]
		next := f.plan(rest, &offs[g^1])
		for _, h := range hashes[:cur] {
			if f.AddHash(h) {
				added++
			}
		}
		hashes, cur = rest, next
	}
	return added
}

// plan computes the block offsets of up to batchGroup leading hashes into
// offs, starts fetching their lines, and returns how many it took.
func (f *Blocked) plan(hashes []uint64, offs *[batchGroup]uint64) int {
	g := min(len(hashes), batchGroup)
	for i, h := range hashes[:g] {
		offs[i] = f.offset(h)
	}
	prefetchLines(f.words, offs[:g], f.concurrent)
	return g
}
