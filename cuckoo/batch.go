package cuckoo

import (
	"encoding/binary"

	"github.com/bloomery/bloomery/internal/prefetch"
)

// batchGroup is the number of keys whose buckets a batch insert requests
// together. The loop is software-pipelined in four stages over groups of
// batchGroup keys: while group g is inserted, the first buckets of group
// g+3 are requested; for group g+2, whose first buckets were requested a
// group earlier, the second buckets of keys whose first bucket is full;
// and for group g+1, the 8 buckets the relocation step would read (the
// other buckets of both full buckets' residents) of keys whose two
// buckets are both full. Each stage's requests go out 16 to 31 inserts
// before they are needed, longer than a DRAM miss takes. The peeks only
// decide what to request: earlier inserts may change a bucket before the
// key's turn, which costs a wasted or a missing prefetch, never a wrong
// result.
const batchGroup = 16

// pipelineMinBytes is the table size from which the batch inserts use the
// prefetch pipeline. The pipeline's extra passes cost about 15-25 ns per
// key, which is worth paying only when the buckets are cache misses: on
// the development VM (32 MiB L3 shared by many processes) a plain loop
// of InsertHash was faster up to a 3.8 MiB table (2.5*10^6 keys at 12
// bits: 31 against 47 ns per key) and the pipeline from a 6.1 MiB one
// (4*10^6 keys: 57 against 67). A variable so that tests can run the
// pipeline on small tables.
var pipelineMinBytes = 4 << 20

// InsertBatch adds one copy of each key whose hash is in hashes, in order,
// exactly as calling InsertHash on each in turn would: the table ends up
// byte for byte the same. It returns the number of hashes added. If one
// does not fit (the victim slot is in use and both its buckets are full),
// it stops there and returns that hash's index and an error wrapping
// bloomery.ErrFull: hashes[:n] were added, hashes[n:] were not, and the
// filter is as hashes[:n] left it.
//
// Cost: InsertHash issues its loads only when it reaches a key, so on a
// table larger than the cache each insert waits for its bucket's miss,
// and a mispredicted full-bucket branch discards the inserts the
// processor had started behind it. InsertBatch prefetches (PREFETCHT0 on
// amd64, plain loads elsewhere) each key's first bucket, its second
// bucket when the first is full, and the relocation step's 8 buckets when
// both are (see batchGroup), so most inserts find their buckets in the
// cache; only eviction walks beyond the relocation step still read on
// demand. Filling a 12-bit filter for 10^7 keys from empty to 94% load
// took 0.60-0.65x the thread CPU time of InsertHash per key on the
// development VM (cmd in the package doc). It does not allocate.
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
// number inserted and the failure (nil when all were). Tables smaller
// than pipelineMinBytes take a plain loop.
func (f *Filter) insertPipelined(hashes []uint64) (int, error) {
	if len(f.data) < pipelineMinBytes {
		for i, h := range hashes {
			if err := f.InsertHash(h); err != nil {
				return i, err
			}
		}
		return len(hashes), nil
	}
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
