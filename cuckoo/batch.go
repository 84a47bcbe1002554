package cuckoo

import (
	"encoding/binary"

	"github.com/bloomery/bloomery/internal/prefetch"
)

// batchGroup is the number of keys whose buckets a batch insert requests
// together. The loop is software-pipelined in three stages over groups of
// batchGroup keys: while group g is inserted, the second buckets of group
// g+1 are requested where their first bucket was full, and the first
// buckets of group g+2 are requested. A bucket is thus asked for 16 to 32
// inserts before it is written, longer than a DRAM miss takes.
const batchGroup = 16

// InsertBatch adds one copy of each key whose hash is in hashes, in order,
// exactly as calling InsertHash on each in turn would: the table ends up
// byte for byte the same. It returns the number of hashes added. If one
// does not fit (the victim slot is in use and both its buckets are full),
// it stops there and returns that hash's index and an error wrapping
// bloomery.ErrFull: hashes[:n] were added, hashes[n:] were not, and the
// filter is as hashes[:n] left it.
//
// Cost: InsertHash issues its loads only when it reaches a key, so with a
// table larger than the cache each insert waits for its bucket's miss, and
// a mispredicted full-bucket branch discards the work of the inserts
// started behind it. InsertBatch prefetches (PREFETCHT0 on amd64, plain
// loads elsewhere) the first bucket of every key 16 to 32 keys ahead and,
// once that bucket has arrived, the second bucket of keys whose first
// bucket is full, so most inserts find their buckets in the cache. Kicks
// still read their buckets on demand. It does not allocate.
func (f *Filter) InsertBatch(hashes []uint64) (int, error) {
	return f.insertPipelined(hashes)
}

// AddBatch adds every hash like AddHash in order (a hash that does not fit
// is skipped, the later ones are still tried) and returns the number
// stored. It pipelines its loads as InsertBatch does and does not
// allocate.
func (f *Filter) AddBatch(hashes []uint64) int {
	stored := 0
	for len(hashes) > 0 {
		k, err := f.insertPipelined(hashes)
		stored += k
		if err == nil {
			break
		}
		// hashes[k] did not fit and left the filter unchanged; go on after it.
		hashes = hashes[k+1:]
	}
	return stored
}

// insertPipelined inserts hashes in order until one fails, returning the
// number inserted and the failure (nil when all were).
func (f *Filter) insertPipelined(hashes []uint64) (int, error) {
	var offs [2 * BucketSize * batchGroup]uint64
	group := func(s int) []uint64 { return hashes[min(len(hashes), s):min(len(hashes), s+batchGroup)] }
	f.prefetchFirst(group(0), &offs)
	f.prefetchFirst(group(batchGroup), &offs)
	f.prefetchFirst(group(2*batchGroup), &offs)
	f.prefetchSecond(group(0), &offs)
	f.prefetchSecond(group(batchGroup), &offs)
	f.prefetchThird(group(0), &offs)
	for s := 0; s < len(hashes); s += batchGroup {
		f.prefetchFirst(group(s+3*batchGroup), &offs)
		f.prefetchSecond(group(s+2*batchGroup), &offs)
		f.prefetchThird(group(s+batchGroup), &offs)
		for i, h := range hashes[s:min(len(hashes), s+batchGroup)] {
			if err := f.InsertHash(h); err != nil {
				return s + i, err
			}
		}
	}
	return len(hashes), nil
}

// prefetchFirst requests the first bucket of each hash (len(hs) <=
// batchGroup).
func (f *Filter) prefetchFirst(hs []uint64, offs *[2 * BucketSize * batchGroup]uint64) {
	for i, h := range hs {
		i1, _ := f.locate(h)
		offs[i] = i1 * f.bucketBits >> 3
	}
	f.prefetch(offs[:len(hs)])
}

// prefetchSecond requests the second bucket of each hash whose first
// bucket is full now (it may change before the key's turn; this is only a
// hint). The first buckets were requested a group earlier, so these reads
// usually hit the cache.
func (f *Filter) prefetchSecond(hs []uint64, offs *[2 * BucketSize * batchGroup]uint64) {
	k := 0
	for _, h := range hs {
		i1, tag := f.locate(h)
		bit := i1 * f.bucketBits
		w := binary.LittleEndian.Uint64(f.data[bit>>3:])
		if f.free(w>>(bit&7)) == 0 {
			offs[k] = f.alt(i1, tag) * f.bucketBits >> 3
			k++
		}
	}
	f.prefetch(offs[:k])
}

// prefetchThird requests, for each hash whose two buckets are both full
// now, the other buckets of its first bucket's 4 residents: the reads the
// insert's relocate step makes. Both buckets were requested earlier.
func (f *Filter) prefetchThird(hs []uint64, offs *[2 * BucketSize * batchGroup]uint64) {
	k := 0
	for _, h := range hs {
		i1, tag := f.locate(h)
		bit := i1 * f.bucketBits
		w := binary.LittleEndian.Uint64(f.data[bit>>3:]) >> (bit & 7)
		if f.free(w) != 0 {
			continue
		}
		i2 := f.alt(i1, tag)
		bit2 := i2 * f.bucketBits
		w2 := binary.LittleEndian.Uint64(f.data[bit2>>3:]) >> (bit2 & 7)
		if f.free(w2) != 0 {
			continue
		}
		for j := range BucketSize {
			offs[k] = f.alt(i1, w>>(uint(j)*f.fpBits)&f.fpMask) * f.bucketBits >> 3
			offs[k+1] = f.alt(i2, w2>>(uint(j)*f.fpBits)&f.fpMask) * f.bucketBits >> 3
			k += 2
		}
	}
	f.prefetch(offs[:k])
}

// prefetch starts loading the lines of f.data[off] for each offset, all
// in bounds. Without the amd64 assembly it loads one byte of each line
// instead: the loads are independent, so their misses still overlap.
func (f *Filter) prefetch(offs []uint64) {
	if len(offs) == 0 {
		return
	}
	if prefetch.Enabled {
		prefetch.Index8(&f.data[0], &offs[0], len(offs))
		return
	}
	var x byte
	for _, off := range offs {
		x |= f.data[off]
	}
	consume(x)
}

// consume keeps the compiler from discarding the loads in prefetch.
//
//go:noinline
func consume(byte) {}
