package cuckoo

import (
	"encoding/binary"
	"math/bits"

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
// prefetch pipeline. The pipeline's extra passes cost about 8-10 ns per
// key, which is worth paying only when the buckets are cache misses. On
// the development VM (32 MiB L3 shared with other tenants; 12-bit
// filters, median of 7 alternated fills, thread CPU time per key) a plain
// loop of InsertHash was faster up to a 3.8 MiB table (2.5*10^6 keys: 34
// against 42 ns; 10^6 keys: 28 against 37) and the pipeline from a
// 6.1 MiB one (4*10^6 keys: 52 against 75). A variable so that tests can
// run the pipeline on small tables.
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
// took 0.6-0.75x the thread CPU time of InsertHash per key on the
// development VM (medians of 3 to 7 alternated fills in one process; 28
// against 59 ns per key below 50% load, 365-480 against 460-665 from 90%
// to 94%). It does not allocate.
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
	// Key k's first bucket and fingerprint live in slot k&(batchRing-1) of
	// the rings from the first stage to the insert, 3 groups later.
	var p pipeline
	n := len(hashes)
	p.locate(f, hashes, 0)
	p.locate(f, hashes, batchGroup)
	p.locate(f, hashes, 2*batchGroup)
	p.second(f, 0, min(n, batchGroup))
	p.third(f, 0)
	p.second(f, batchGroup, min(n, 2*batchGroup))
	for s := 0; s < n; s += batchGroup {
		p.locate(f, hashes, s+3*batchGroup)
		p.third(f, s+batchGroup)
		p.second(f, s+2*batchGroup, min(n, s+3*batchGroup))
		for k := s; k < min(n, s+batchGroup); k++ {
			// InsertHash after locate, its fast path in line.
			traceInsert()
			i1, tag := p.i1[k&(batchRing-1)], p.tag[k&(batchRing-1)]
			bit := i1 * f.bucketBits
			off, sh := bit>>3, uint(bit&7)
			touch(off)
			w := binary.LittleEndian.Uint64(f.data[off:])
			if z := f.free(w >> sh); z != 0 {
				lane := uint(bits.TrailingZeros64(z)) + 1 - f.fpBits
				binary.LittleEndian.PutUint64(f.data[off:], w|tag<<(lane+sh))
			} else if !f.insertSlow(i1, tag) {
				return k, errFull
			}
			f.count++
		}
	}
	return n, nil
}

// batchRing is the length of the pipeline's rings: the 4 groups between a
// key's first stage and its insert.
const batchRing = 4 * batchGroup

// pipeline holds the located keys between the stages of a batch insert,
// and the offsets each stage prefetches.
type pipeline struct {
	i1, i2, tag [batchRing]uint64
	// full[g&1][:nfull[g&1]] lists the keys of group g whose first bucket
	// the second stage found full, for the third stage a group later.
	full  [2][batchGroup]int
	nfull [2]int
	offs  [2 * BucketSize * batchGroup]uint64
}

// locate computes the first bucket and fingerprint of hashes[s:s+batchGroup]
// (those that exist) and requests the first buckets.
func (p *pipeline) locate(f *Filter, hashes []uint64, s int) {
	e := min(len(hashes), s+batchGroup)
	if s >= e {
		return
	}
	for k := s; k < e; k++ {
		i1, tag := f.locate(hashes[k])
		p.i1[k&(batchRing-1)], p.tag[k&(batchRing-1)] = i1, tag
		p.offs[k-s] = i1 * f.bucketBits >> 3
	}
	f.prefetch(p.offs[:e-s])
}

// second requests the second bucket of each key in [s, e) whose first
// bucket is full now (it may change before the key's turn; this is only a
// hint) and lists those keys for third. The first buckets were requested
// a group earlier, so these reads usually hit the cache. The loop has no
// data-dependent branch: full or not is about as likely as not at
// moderate load, and a mispredicted branch costs more than the work.
func (p *pipeline) second(f *Filter, s, e int) {
	c := 0
	list := &p.full[s/batchGroup&1]
	for k := s; k < e; k++ {
		i1 := p.i1[k&(batchRing-1)]
		bit := i1 * f.bucketBits
		z := f.free(binary.LittleEndian.Uint64(f.data[bit>>3:]) >> (bit & 7))
		i2 := f.alt(i1, p.tag[k&(batchRing-1)])
		p.i2[k&(batchRing-1)] = i2
		p.offs[c&(batchGroup-1)] = i2 * f.bucketBits >> 3
		list[c&(batchGroup-1)] = k
		c += int((z|-z)>>63 ^ 1) // 1 when the bucket is full (z == 0)
	}
	p.nfull[s/batchGroup&1] = c
	f.prefetch(p.offs[:c])
}

// third requests, for each key of the group starting at s that second
// listed and whose second bucket is full too, the other buckets of both
// buckets' residents: the reads of the insert's relocation step.
func (p *pipeline) third(f *Filter, s int) {
	c := 0
	g := s / batchGroup & 1
	for _, k := range p.full[g][:p.nfull[g]] {
		i2 := p.i2[k&(batchRing-1)]
		bit2 := i2 * f.bucketBits
		w2 := binary.LittleEndian.Uint64(f.data[bit2>>3:]) >> (bit2 & 7)
		if f.free(w2) != 0 {
			continue
		}
		i1 := p.i1[k&(batchRing-1)]
		bit := i1 * f.bucketBits
		w := binary.LittleEndian.Uint64(f.data[bit>>3:]) >> (bit & 7)
		for j := range BucketSize {
			p.offs[c] = f.alt(i1, w>>(uint(j)*f.fpBits)&f.fpMask) * f.bucketBits >> 3
			p.offs[c+1] = f.alt(i2, w2>>(uint(j)*f.fpBits)&f.fpMask) * f.bucketBits >> 3
			c += 2
		}
	}
	p.nfull[g] = 0
	f.prefetch(p.offs[:c])
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

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes). It does not allocate.
//
// On tables of pipelineMinBytes (4 MiB) and more it is software
// pipelined: it locates both buckets of the keys two groups (32 keys)
// ahead, 16 at a time, and prefetches their lines (both lines of a bucket
// that straddles two), then checks the current 16 with no branch on the
// data: both buckets are read and matched, where ContainsHash stops at a
// hit in the first. A loop of ContainsHash calls overlaps the misses of
// consecutive keys only as far as the reorder window reaches, and its
// early exit mispredicts on a mix of present and absent keys. Smaller
// tables, in the cache, take the plain loop.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	n := len(hashes)
	if len(f.data) < pipelineMinBytes || n <= batchGroup {
		for i, h := range hashes {
			out[i] = f.ContainsHash(h)
		}
		return
	}
	var q queryRing
	q.locate(f, hashes, 0)
	q.locate(f, hashes, batchGroup)
	v := f.victim
	for s := 0; s < n; s += batchGroup {
		q.locate(f, hashes, s+2*batchGroup)
		for k := s; k < min(n, s+batchGroup); k++ {
			r := k & (queryRingLen - 1)
			i1, i2, tag := q.i1[r], q.i2[r], q.tag[r]
			hit := f.match(f.bucket(i1), tag) | f.match(f.bucket(i2), tag)
			if v.holds(tag, i1, i2) {
				hit = 1 // the victim slot, as ContainsHash checks it
			}
			out[k] = hit != 0
		}
	}
}

// queryRingLen is the length of ContainsBatch's rings: the 3 groups
// between a key's location and its check, rounded up to a power of two.
const queryRingLen = 4 * batchGroup

// queryRing holds the located keys of ContainsBatch between the two
// stages, and the offsets a stage prefetches.
type queryRing struct {
	i1, i2, tag [queryRingLen]uint64
	offs        [4 * batchGroup]uint64
}

// locate computes both buckets and the fingerprint of
// hashes[s:s+batchGroup] (those that exist) and requests the lines the
// checks will read: the 8 bytes from each bucket's first byte, which
// cross into the next line for 7 byte offsets in 64.
func (q *queryRing) locate(f *Filter, hashes []uint64, s int) {
	e := min(len(hashes), s+batchGroup)
	if s >= e {
		return
	}
	c := 0
	for k := s; k < e; k++ {
		i1, tag := f.locate(hashes[k])
		i2 := f.alt(i1, tag)
		r := k & (queryRingLen - 1)
		q.i1[r], q.i2[r], q.tag[r] = i1, i2, tag
		o1, o2 := i1*f.bucketBits>>3, i2*f.bucketBits>>3
		q.offs[c], q.offs[c+1], q.offs[c+2], q.offs[c+3] = o1, o1+7, o2, o2+7
		c += 4
	}
	f.prefetch(q.offs[:c])
}
