package bloom

// batchGroup is the number of keys whose cache lines a batch operation
// requests together. The batch loops are software-pipelined: the lines of
// group g+1 are prefetched before the keys of group g are probed, so about
// 16-32 independent misses are always in flight.
const batchGroup = 16

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes).
//
// It computes the block addresses of the next group of 16 hashes and
// prefetches their lines (PREFETCHT0 on amd64, plain loads elsewhere)
// before probing the current group with a branch-free in-line check, so
// independent DRAM misses overlap instead of being paid one after
// another: on a filter much larger than the cache this costs a fraction
// of a dependent miss per key. It does not allocate.
func (f *Blocked) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	var offs [2][batchGroup]uint64
	cur := f.plan(hashes, &offs[0])
	for g := 0; len(hashes) > 0; g ^= 1 {
		rest := hashes[cur:]
		next := f.plan(rest, &offs[g^1])
		if f.concurrent {
			for i, h := range hashes[:cur] {
				out[i] = f.containsAtomic(offs[g][i], h)
			}
		} else {
			for i, h := range hashes[:cur] {
				out[i] = f.containsFlat(offs[g][i], h)
			}
		}
		hashes, out, cur = rest, out[cur:], next
	}
}

// AddBatch inserts every hash, like AddHash in order, and returns how many
// were new. Like ContainsBatch it prefetches the lines of the next group
// while it updates the current one. It does not allocate.
func (f *Blocked) AddBatch(hashes []uint64) int {
	var offs [2][batchGroup]uint64
	added := 0
	cur := f.plan(hashes, &offs[0])
	for g := 0; len(hashes) > 0; g ^= 1 {
		rest := hashes[cur:]
		next := f.plan(rest, &offs[g^1])
		if f.concurrent {
			for i, h := range hashes[:cur] {
				if f.addAtomic(offs[g][i], h) {
					added++
				}
			}
		} else {
			for i, h := range hashes[:cur] {
				if f.add(offs[g][i], h) {
					added++
				}
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
