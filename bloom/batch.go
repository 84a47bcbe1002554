package bloom

import "sync/atomic"

// batchGroup is the number of keys whose cache lines a batch operation
// touches before probing any of them. Sixteen independent loads fit easily
// in the out-of-order window of current cores and cover the ~10-16 line
// fill buffers, so their DRAM misses overlap.
const batchGroup = 16

// touch loads one word of each line of a group so that the misses are in
// flight together; the loaded values are folded into a word handed to
// consume, which keeps the compiler from discarding the loads.
//
//go:noinline
func consume(uint64) {}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes). For each group of 16 hashes it first
// computes the block addresses and loads one word of each block, so that
// the 16 cache misses overlap, then probes the (now arriving) lines: on a
// filter much larger than the cache this costs a fraction of a dependent
// miss per key. It does not allocate.
func (f *Blocked) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	var offs [batchGroup]uint64
	for len(hashes) > 0 {
		g := min(len(hashes), batchGroup)
		f.touch(hashes[:g], &offs)
		if f.concurrent {
			for i, h := range hashes[:g] {
				out[i] = f.containsAtomic(offs[i], h)
			}
		} else {
			for i, h := range hashes[:g] {
				out[i] = f.contains(offs[i], h)
			}
		}
		hashes, out = hashes[g:], out[g:]
	}
}

// AddBatch inserts every hash, like AddHash in order, and returns how many
// were new. Like ContainsBatch it touches the lines of each group of 16
// before updating them. It does not allocate.
func (f *Blocked) AddBatch(hashes []uint64) int {
	var offs [batchGroup]uint64
	added := 0
	for len(hashes) > 0 {
		g := min(len(hashes), batchGroup)
		f.touch(hashes[:g], &offs)
		if f.concurrent {
			for i, h := range hashes[:g] {
				if f.addAtomic(offs[i], h) {
					added++
				}
			}
		} else {
			for i, h := range hashes[:g] {
				if f.add(offs[i], h) {
					added++
				}
			}
		}
		hashes = hashes[g:]
	}
	return added
}

// touch computes the first word of each hash's block into offs and loads
// that word, so the group's misses are issued back to back.
func (f *Blocked) touch(hashes []uint64, offs *[batchGroup]uint64) {
	words := f.words
	var sink uint64
	if f.concurrent {
		for i, h := range hashes {
			off := f.offset(h)
			offs[i] = off
			sink |= atomic.LoadUint64(&words[off])
		}
	} else {
		for i, h := range hashes {
			off := f.offset(h)
			offs[i] = off
			sink |= words[off]
		}
	}
	consume(sink)
}
