package bloom

import "math/bits"

// addBatchMinBytes is the smallest array on which AddHashBatch prefetches.
// Below it the probes hit L2 or L3 and locating each probe twice costs
// more than the misses it hides; an
// add reads all k words (no early exit), yet on the server's BF.MADD of
// 100 items into a 1.2 MB link (BF.RESERVE 0.01 1000000, the lines partly
// evicted between commands) prefetching still measured slower: server
// CPU 0.226-0.236 µs per item with it, 0.200-0.222 without, in three
// alternated runs of each (loadgen run -shape bf.madd -procs 2 -d 3s).
const addBatchMinBytes = 8 << 20

// addBatchMaxK bounds k for AddHashBatch's prefetching (prefetchGroup's
// offsets, on the stack); larger k take the plain loop.
const addBatchMaxK = 32

// filterGroup is the number of hashes AddHashBatch locates and prefetches
// at a time (prefetchGroup), one group ahead of the adds.
const filterGroup = 8

// AddHashBatch adds every hash in order, exactly as successive AddHash
// calls would: the bits set, Len and the counts of set bits are the same.
// When out is not nil (len(out) must then be at least len(hashes)) it sets
// out[i] to what AddHash(hashes[i]) would have reported (a hash repeated
// later in the batch reports false there). It returns how many hashes were
// new.
//
// On arrays of addBatchMinBytes (8 MiB) or more (and k <= 32) it locates and
// prefetches all k probe words of the next 8 hashes before it sets those
// of the current 8, so the misses of independent keys overlap instead of
// each add waiting for its own (see ContainsBatch). It does not allocate.
// Like AddHash it must not run concurrently with any other use of f.
func (f *Filter) AddHashBatch(hashes []uint64, out []bool) int {
	if out != nil {
		out = out[:len(hashes)]
	}
	added := 0
	if f.k == 0 || f.k > addBatchMaxK || len(f.words)*8 < addBatchMinBytes || len(hashes) <= filterGroup {
		for i, h := range hashes {
			ok := addHash(f, h)
			if out != nil {
				out[i] = ok
			}
			if ok {
				added++
			}
		}
		return added
	}
	var offs [filterGroup * addBatchMaxK]uint64
	cur := f.prefetchGroup(hashes, &offs)
	at := 0
	for len(hashes) > 0 {
		rest := hashes[cur:]
		next := f.prefetchGroup(rest, &offs)
		for i, h := range hashes[:cur] {
			ok := addHash(f, h)
			if out != nil {
				out[at+i] = ok
			}
			if ok {
				added++
			}
		}
		hashes, at, cur = rest, at+cur, next
	}
	return added
}

// prefetchGroup locates all k probe words of up to filterGroup leading
// hashes, starts fetching them and returns how many hashes it took. The
// probe sequence is ContainsHash's (see Filter, "Probes" and "Word and
// bit"), so every offset is below len(f.words). offs is scratch: the
// prefetches do not read it after they are issued.
func (f *Filter) prefetchGroup(hashes []uint64, offs *[filterGroup * addBatchMaxK]uint64) int {
	n := min(len(hashes), filterGroup)
	k, l := f.k, f.layout
	w := uint64(len(f.words))
	c := 0
	for _, h := range hashes[:n] {
		d := step(h, l)
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
