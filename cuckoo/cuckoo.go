// Package cuckoo is a cuckoo filter (Fan, Andersen, Kaminsky and
// Mitzenmacher, CoNEXT 2014): an approximate-membership filter that stores
// a short fingerprint of every key in one of two candidate buckets, and
// therefore supports Delete and Count as well as Add and Contains.
//
// # Layout
//
// The table is m buckets of [BucketSize] = 4 slots; a slot holds an f-bit
// fingerprint, 8 <= f <= 16, and the value 0 marks an empty slot. Buckets
// are packed back to back with no padding: bucket i occupies bits
// [4f*i, 4f*(i+1)) of a little-endian bit string, so a 12-bit filter costs
// exactly 48 bits per bucket (12 bits per slot), not 64. Since 4f <= 64
// and a bucket starts on a bit offset that is a multiple of 4, one
// unaligned 64-bit load at byte 4f*i/8 always holds the whole bucket
// (4f + 4 <= 64 for odd f, 4f <= 64 with shift 0 for even f). The table
// carries 8 zero bytes of padding so that the load at the last bucket stays
// in bounds. The bucket count m is any positive integer, not a power of
// two, so memory follows the capacity (no doubling to the next power).
//
// # Hashing
//
// A key is hashed once to 64 bits h (package hashing). The first bucket is
// i1 = Reduce(h, m), which uses the high bits of h; the fingerprint is
// tag = 1 + Reduce(h<<32, 2^f - 1), which uses the low 32 bits, uniform
// over the non-zero f-bit values. The alternate bucket is a function of
// the bucket index and the fingerprint only (partial-key cuckoo hashing),
// so a fingerprint can be moved without its key:
//
//	y(tag) = Reduce(tag * 0x9E3779B97F4A7C15, m), forced odd when m is even
//	alt(i, tag) = (y(tag) - i) mod m
//
// alt is an involution for every m: alt(alt(i, t), t) = y - (y - i) = i
// (mod m), so either bucket of a key finds the other. For even m, y is odd,
// so y - 2i is odd and alt(i, t) != i: every key has two distinct buckets
// (the "stable" scheme of fastfilter_cpp, which needs an even count). For
// odd m, exactly one bucket per fingerprint is its own partner; a key that
// lands there has 4 slots instead of 8, which is correct but costs a
// little load. Because the pair {i, alt(i, t)} is a function of (i, t),
// two keys that share a fingerprint and one bucket share both buckets, so
// removing "a copy of t from bucket i" can never take a copy that another
// key needs elsewhere.
//
// # Insert, kicks and the victim slot
//
// Add places the fingerprint in a free slot of i1 or i2. If both are full
// it first looks for a stored fingerprint of i1, then of i2, whose other
// bucket has a free slot, reading the other buckets of one bucket's
// residents in slot order up to the first with room, and moves it there
// to make room. Only if none can move does it evict a random slot,
// carry the evicted fingerprint to its alternate bucket, and repeat
// (trying the same breadth-first move at each full bucket it reaches), at
// most [MaxKicks] = 500 times. If the
// walk does not end, the fingerprint still in hand is kept in a one-entry
// victim slot, which lookups check: nothing is ever dropped, and that
// insert succeeded. While the victim slot is occupied, an insert succeeds
// only if one of its two buckets has a free slot (no kicks); otherwise it
// returns [bloomery.ErrFull] and the filter is left exactly as it was.
// The next successful Delete moves the victim back into the table.
//
// With buckets of 4 the walk succeeds up to about 95% load. New sizes the
// table for Capacity keys at [DesignLoad] = 94%: m = ceil(n / (4 * 0.94)),
// or at the lower load Params.Load asks for (faster inserts, more space).
//
// # False-positive rate and space
//
// A negative query compares its fingerprint with the occupied slots of two
// buckets, 8*load of them on average, so (fpmath.CuckooFPR)
//
//	FPR = 1 - (1 - 1/(2^f - 1))^(8*load)  ≈ 8*load / 2^f,
//
// 3.0% at f = 8, 0.19% at f = 12, 0.012% at f = 16 (load 0.95), and space is
// f/load bits per key: 12.8 bits per key at f = 12 and load 0.94. Choose
// f >= log2(1/FPR) + 3.
//
// # Multisets and deletion
//
// The filter is a multiset of fingerprints: adding a key twice stores two
// copies, and each Delete removes one, so adding a key k times and deleting
// it k times leaves it absent (up to the false-positive rate). A key's two
// buckets hold at most 8 copies (9 with the victim slot).
//
// Delete only keys that were added. Deleting a key that was never added
// removes the fingerprint of some other key that shares its fingerprint
// and bucket pair (this happens with the false-positive probability), and
// that key then reads as absent: a false negative. Filters cannot tell the
// difference, so callers must keep that invariant (or confirm membership
// against the authoritative data before deleting).
//
// # Costs and concurrency
//
// Contains touches one or two buckets (the second only when the first
// does not hold the fingerprint; a bucket occasionally straddles two cache
// lines) and does not allocate. Add is usually one bucket access, two
// when the first bucket is full, and near full load up to 4 more for the
// one-move relocation of each of i1 and i2 (filling from empty to 94%
// load, about 1 in 9 inserts needs it, and about 1 in 45 then walks, 3 to
// 4 steps on average; from 90% to 94% load, 1 in 3 walks, 4.3 steps on
// average). Filling a 12-bit filter from empty to 94% load reads 2.11
// distinct cache lines per insert (build tag cuckootrace, 10^6 keys). Tables of 8 MiB and more are backed by
// transparent huge pages where Linux allows it.
// No method allocates except construction and encoding.
//
// Bulk loads should use [Filter.InsertBatch] (or [Filter.AddBatch]): it
// stores exactly what InsertHash in turn would, but on tables of 4 MiB
// and more it prefetches each key's buckets 16 to 48 keys ahead, so the
// cache misses of many inserts overlap. Filling 10^7 keys from empty to
// 94% load it took 0.6-0.75x the thread CPU time of per-key InsertHash
// on the development VM (see batch.go for the pipeline). Likewise bulk
// queries should use [Filter.ContainsBatch], which on those tables
// prefetches both buckets of each key 32 to 47 keys ahead: at 10^8 keys
// (12-bit, uint64 keys, benchreport -sizes 1e8 -only cuckoo) it took 50
// ns a key where a loop of ContainsHash took 96 (present) to 107
// (absent); at 10^7, 42 against 85 to 99.
//
// Two per-key changes were measured and not kept (12-bit, 10^7 keys,
// thread CPU time per load band, same process, interleaved): loading both
// buckets at the start of every insert, so that a full first bucket does
// not cost a second serial miss, was 1.8x slower below 50% load (an extra
// cache line per insert; 100 against 55 ns) and no faster above 70%; and
// a two-move breadth-first search (the 32 buckets two moves from i1 and
// i2 read together) before the eviction walk raised the cache lines per
// insert from 2.36 to 2.84 (13.3 instead of 9.0 between 85% and 94%
// load) with no gain in time. Per-key insert time follows the number of
// cache lines read more than the number of serial misses. Placing each
// fingerprint in the less full of its two buckets (both read at once)
// was slower still: it keeps the buckets balanced, but every insert reads
// two lines (per-key string inserts at 10^7 keys, interleaved with
// seiflotfy/cuckoofilter in one process: 0.66x its speed against 0.76x).
//
// Per-key insert speed is a matter of sizing: most of the cost is in the
// last third of the fill, so a table sized with room to spare fills
// faster. Sized to end at 60% load (Params.Load = 0.6, 20 bits per key at
// f = 12, FPR 0.12%), per-key inserts of 10^7 keys ran
// 1.15x (string keys) and 1.68x (uint64 hashes) the speed of
// seiflotfy/cuckoofilter, whose power-of-two table also ends at 60% there;
// at DesignLoad, 0.81x and 1.11x (docs/benchmarks.md). At seiflotfy's FPR
// (1.8% at 10^7 keys) 9 fingerprint bits suffice. Filled to Load = 0.85
// (10.6 bits per key, 1.3% FPR, against its 13.4 bits), such a filter
// inserted per key at 1.04-1.14x (strings) and 1.22-1.33x (uint64 hashes)
// its speed over three rounds; filled to DesignLoad (9.6 bits per key),
// at 0.84-1.13x.
//
// Why the alternate bucket is not windowed: a Vacuum-filter style
// alternate (Wang et al., VLDB 2019), i XOR d(tag) inside an aligned
// window of W buckets for half of the fingerprints and the reflection
// across the table for the other half, was measured (build tag
// cuckootrace, 3*10^5 keys filled to 94%). The load at the first failed
// walk stays near the reflection's (0.970 at W = 16 and 10^6 keys, 0.972
// at W = 64 and 10^5 keys, against 0.973), the FPR is unchanged, and the
// distinct cache lines read per insert fall from 2.36 to 1.96 at W = 16
// and 2.15 at W = 64 (from 9.0 to 6.6 and 7.6 between 85% and 94% load).
// But bucket i has only W - 1 partners within its window, so two windowed
// fingerprints share their bucket pair with probability 1/(W-1) (about
// 1/4095 with the reflection at 12 bits), and a key's copies then compete
// with them for the same 8 slots: at W = 16 eight copies of one key no
// longer fit at 47% load (TestRepeatThenDelete fails). The timing gain on
// the shared machine was within the noise (build 0.89x to 0.90x of the
// reflection's time at 10^7 keys, ±30% between repetitions), so the
// format keeps the reflection.
//
// Why placement stays first-fit (the first bucket whenever it has room):
// load-aware placement was measured and not kept (12-bit, filling to 94%
// load; cache lines from the cuckootrace build and thread CPU time per
// load band, both at 10^7 keys, 9 alternated fills in one process).
// Storing the fingerprint in the less loaded of its two buckets, both
// loads issued together ("power of two choices"), leaves more buckets
// with room (24% instead of 20% at 92% load, 10^6 keys) and reads fewer
// lines near full load (3.99 instead of 5.26 per insert from 85% to 90%,
// 8.15 instead of 11.33 from 90% to 94%; 477 against 658 ns), but every insert
// then reads two buckets (2.19 lines instead of 1.14 below 50% load;
// 150 against 58 ns), 2.59 lines per insert over the whole fill against
// 2.11, and the fill took 1.38x the time. Starting it at 50% load
// balances too late (10.1 lines from 90% to 94%) and took 1.17x; reading
// the second bucket only when the first has a single free slot left, and
// taking the one with more room, reads the fewest lines (2.09) but adds a
// dependent miss and an unpredictable branch below 50% load, 1.20x;
// loading both buckets from 50% load with first-fit placement and a
// branch-free select (same slots as now), 1.09x. (The unchanged code
// against itself: 1.08x, the noise of the shared machine.) A spread
// placement also leaves about half of the fingerprints in the second
// bucket, which a positive Contains reads last. Nor can the walk choose a
// cheaper victim: the other buckets of a full bucket's residents are
// spread over the whole table, so at 10^7 keys (10^6 cache lines) the
// buckets a next step would read are almost never in a line the insert
// has already read.
//
// A Filter is not safe for concurrent use when any goroutine mutates it
// (Add, Insert, Delete and their batch forms); concurrent read-only calls
// (Contains, Count, ...) are safe.
//
// # Persistence
//
// AppendBinary writes the container format (kind cuckoo, layout 1); the
// params and payload are documented in docs/format/cuckoo.md and at
// [Filter.AppendBinary].
package cuckoo

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Fixed design constants.
const (
	// BucketSize is the number of fingerprint slots per bucket.
	BucketSize = 4
	// MinFingerprintBits and MaxFingerprintBits bound the fingerprint width.
	MinFingerprintBits = 8
	MaxFingerprintBits = 16
	// DesignLoad is the load factor at which the filter holds Capacity keys.
	DesignLoad = 0.94
	// MaxKicks bounds the eviction walk of one insert.
	MaxKicks = 500
	// MaxCapacity bounds Params.Capacity (about 32 GiB at 16 bits).
	MaxCapacity = 1 << 34
	// DefaultFingerprintBits is used when Params sets neither the width nor an FPR.
	DefaultFingerprintBits = 12
)

// altMul spreads a fingerprint over 64 bits before Reduce picks y(tag).
const altMul = 0x9E3779B97F4A7C15

// errFull is returned by a failed insert; a fixed value so that the
// failure path does not allocate either.
var errFull = fmt.Errorf("cuckoo: both buckets full and victim slot in use: %w", bloomery.ErrFull)

// padding is the number of zero bytes after the packed table, so that a
// 64-bit load at any bucket's byte offset stays inside the slice.
const padding = 8

// Params configures New.
type Params struct {
	// Capacity is the number of keys the filter must hold at DesignLoad.
	// Required, 1..MaxCapacity.
	Capacity int
	// FingerprintBits is the fingerprint width f, 8..16. If zero, it is
	// derived from FPR; if both are zero it is DefaultFingerprintBits.
	FingerprintBits int
	// FPR is the target false-positive rate at Capacity keys, in (0, 1).
	// Set FingerprintBits or FPR, not both.
	FPR float64
	// Load is the load factor the table reaches at Capacity keys, in
	// (0, DesignLoad]; zero means DesignLoad. A lower load trades space
	// (f/Load bits per key) for faster inserts and a lower FPR: fewer
	// buckets are full, so fewer inserts read a second bucket or walk
	// (see "Costs and concurrency" in the package documentation).
	Load float64
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
}

// victim is the one-entry stash for a fingerprint whose eviction walk did
// not end. INVARIANT: used implies 1 <= tag <= 2^f-1 and index < m.
type victim struct {
	used  bool
	tag   uint64
	index uint64
}

// holds reports whether the victim slot holds fingerprint tag of a key
// whose buckets are i1 and i2: the third place every lookup checks.
func (v victim) holds(tag, i1, i2 uint64) bool {
	return v.used && v.tag == tag && (v.index == i1 || v.index == i2)
}

// Filter is a cuckoo filter. The zero value is not usable; call New.
type Filter struct {
	// data is the packed table followed by padding zero bytes.
	// INVARIANT: bits beyond the last bucket are zero.
	data       []byte
	buckets    uint64
	fpBits     uint   // f
	bucketBits uint64 // 4f
	bucketMask uint64 // low 4f bits
	fpMask     uint64 // low f bits = 2^f - 1
	ones       uint64 // 1 in the low bit of each of the 4 lanes
	highs      uint64 // 1 in the high bit of each lane
	capacity   int
	// count is the number of fingerprints held, victim included.
	count  int
	victim victim
	rng    uint64
	hasher hashing.Hasher
}

var (
	_ bloomery.Adder        = (*Filter)(nil)
	_ bloomery.Deleter      = (*Filter)(nil)
	_ bloomery.Counter      = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// FingerprintBitsFor returns the smallest fingerprint width whose FPR at
// DesignLoad is at most p, or an error wrapping bloomery.ErrInvalidParams
// if even 16 bits do not reach p. Widths below 8 are raised to 8.
func FingerprintBitsFor(p float64) (int, error) { return fingerprintBitsAt(p, DesignLoad) }

// FingerprintBitsAt is FingerprintBitsFor for a table that Capacity keys
// fill to load (Params.Load), in (0, DesignLoad]: the width New chooses
// for Params{FPR: p, Load: load}.
func FingerprintBitsAt(p, load float64) (int, error) {
	if err := checkLoad(load); err != nil {
		return 0, err
	}
	return fingerprintBitsAt(p, load)
}

// checkLoad accepts the loads New accepts for Params.Load, other than zero.
func checkLoad(load float64) error {
	if !(load > 0 && load <= DesignLoad) {
		return fmt.Errorf("cuckoo: load %v outside (0, %v]: %w", load, DesignLoad, bloomery.ErrInvalidParams)
	}
	return nil
}

// fingerprintBitsAt is FingerprintBitsAt without the check of load.
func fingerprintBitsAt(p, load float64) (int, error) {
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("cuckoo: FPR %v outside (0, 1): %w", p, bloomery.ErrInvalidParams)
	}
	for f := MinFingerprintBits; f <= MaxFingerprintBits; f++ {
		if fpmath.CuckooFPR(f, BucketSize, load) <= p {
			return f, nil
		}
	}
	return 0, fmt.Errorf("cuckoo: FPR %v needs fingerprints wider than %d bits (best %.3g): %w",
		p, MaxFingerprintBits, fpmath.CuckooFPR(MaxFingerprintBits, BucketSize, load), bloomery.ErrInvalidParams)
}

// BucketsFor returns the bucket count New uses for n keys at the default
// load: ceil(n / (BucketSize * DesignLoad)), at least 1.
func BucketsFor(n int) uint64 { return bucketsAt(n, DesignLoad) }

// BucketsAt returns the bucket count New uses for n keys at load
// (Params.Load), in (0, DesignLoad]: ceil(n / (BucketSize * load)), at
// least 1.
func BucketsAt(n int, load float64) (uint64, error) {
	if err := checkLoad(load); err != nil {
		return 0, err
	}
	return bucketsAt(n, load), nil
}

// bucketsAt is ceil(n / (BucketSize * load)), at least 1.
func bucketsAt(n int, load float64) uint64 {
	return max(1, uint64(math.Ceil(float64(n)/(BucketSize*load))))
}

// TableBytes is the size of the packed table of m buckets of f-bit
// fingerprints, as persisted (without the in-memory padding).
func TableBytes(m uint64, f int) uint64 { return (m*BucketSize*uint64(f) + 7) / 8 }

// New returns an empty filter for p.Capacity keys.
func New(p Params) (*Filter, error) {
	if p.Capacity < 1 || uint64(p.Capacity) > MaxCapacity {
		return nil, fmt.Errorf("cuckoo: capacity %d outside 1..%d: %w", p.Capacity, uint64(MaxCapacity), bloomery.ErrInvalidParams)
	}
	load := p.Load
	switch {
	case load == 0:
		load = DesignLoad
	default:
		if err := checkLoad(load); err != nil {
			return nil, err
		}
	}
	f := p.FingerprintBits
	switch {
	case f != 0 && p.FPR != 0:
		return nil, fmt.Errorf("cuckoo: set FingerprintBits or FPR, not both: %w", bloomery.ErrInvalidParams)
	case f != 0:
		if f < MinFingerprintBits || f > MaxFingerprintBits {
			return nil, fmt.Errorf("cuckoo: fingerprint bits %d outside %d..%d: %w", f, MinFingerprintBits, MaxFingerprintBits, bloomery.ErrInvalidParams)
		}
	case p.FPR != 0:
		var err error
		if f, err = fingerprintBitsAt(p.FPR, load); err != nil {
			return nil, err
		}
	default:
		f = DefaultFingerprintBits
	}
	m := bucketsAt(p.Capacity, load)
	size := TableBytes(m, f) + padding
	if err := bloomery.CheckTableBytes("cuckoo", size); err != nil {
		return nil, err
	}
	flt := newFilter(m, f, p.Capacity, p.Hasher)
	flt.data = newTable(size)
	return flt, nil
}

// NewForCapacity returns an empty filter for n keys at false-positive rate
// fpr (the narrowest fingerprint that reaches it at DesignLoad).
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{Capacity: n, FPR: fpr})
}

// newFilter sets up the derived fields; the caller supplies data.
func newFilter(m uint64, f, capacity int, h hashing.Hasher) *Filter {
	fb := uint(f)
	var ones uint64
	for j := uint(0); j < BucketSize; j++ {
		ones |= 1 << (j * fb)
	}
	bb := uint64(BucketSize * f)
	return &Filter{
		buckets:    m,
		fpBits:     fb,
		bucketBits: bb,
		bucketMask: ^uint64(0) >> (64 - bb),
		fpMask:     1<<fb - 1,
		ones:       ones,
		highs:      ones << (fb - 1),
		capacity:   capacity,
		rng:        0x2545F4914F6CDD1D,
		hasher:     h,
	}
}

// Kind returns bloomery.KindCuckoo.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindCuckoo }

// Hasher returns the filter's hasher.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// FingerprintBits returns the fingerprint width f.
func (f *Filter) FingerprintBits() int { return int(f.fpBits) }

// Buckets returns the bucket count m.
func (f *Filter) Buckets() int { return int(f.buckets) }

// Len returns the number of fingerprints held (a key added twice counts
// twice), including the victim slot.
func (f *Filter) Len() int { return f.count }

// Cap returns the design capacity: the keys the filter holds at DesignLoad.
func (f *Filter) Cap() int { return f.capacity }

// SizeBytes returns the memory held by the table (with its 8-byte padding).
func (f *Filter) SizeBytes() int { return len(f.data) }

// LoadFactor returns the fraction of slots holding a fingerprint.
func (f *Filter) LoadFactor() float64 {
	return float64(f.count) / float64(f.buckets*BucketSize)
}

// Full reports whether the victim slot is occupied: from then on an
// insert succeeds only where a bucket has a free slot.
func (f *Filter) Full() bool { return f.victim.used }

// EstimatedFPR returns the false-positive rate at the current load,
// 1 - (1 - 1/(2^f-1))^(8*load).
func (f *Filter) EstimatedFPR() float64 {
	return fpmath.CuckooFPR(int(f.fpBits), BucketSize, f.LoadFactor())
}

// DesignFPR returns the false-positive rate at Cap keys.
func (f *Filter) DesignFPR() float64 {
	return fpmath.CuckooFPR(int(f.fpBits), BucketSize, float64(f.capacity)/float64(f.buckets*BucketSize))
}

// Stats describes the filter. Extra holds "buckets" and "victim" (1 while
// the victim slot is occupied, i.e. the filter is full).
func (f *Filter) Stats() bloomery.Stats {
	est, design := f.EstimatedFPR(), f.DesignFPR()
	v := 0.0
	if f.victim.used {
		v = 1
	}
	return bloomery.Stats{
		Kind:            bloomery.KindCuckoo,
		Len:             f.count,
		Cap:             f.capacity,
		SizeBytes:       f.SizeBytes(),
		BitsPerKey:      float64(f.SizeBytes()*8) / float64(f.capacity),
		FingerprintBits: int(f.fpBits),
		FillRatio:       f.LoadFactor(),
		DesignFPR:       design,
		EstimatedFPR:    est,
		Overfilled:      bloomery.IsOverfilled(est, design),
		Extra: []bloomery.Stat{
			{Name: "buckets", Value: float64(f.buckets)},
			{Name: "victim", Value: v},
		},
	}
}

// locate derives the first bucket and the fingerprint from a hash.
func (f *Filter) locate(h uint64) (i1, tag uint64) {
	return hashing.Reduce(h, f.buckets), hashing.Reduce(h<<32, f.fpMask) + 1
}

// alt returns the other bucket of a fingerprint stored in bucket i. It is
// an involution: alt(alt(i, t), t) == i for every m, i < m and t.
func (f *Filter) alt(i, tag uint64) uint64 {
	m := f.buckets
	y := hashing.Reduce(tag*altMul, m)
	y |= 1 &^ m // odd when m is even
	// (y - i) mod m without a data-dependent branch: add m back when the
	// subtraction borrows.
	j, borrow := bits.Sub64(y, i, 0)
	return j + m&-borrow
}

// bucket returns the 4f bits of bucket i.
func (f *Filter) bucket(i uint64) uint64 {
	bit := i * f.bucketBits
	touch(bit >> 3)
	return binary.LittleEndian.Uint64(f.data[bit>>3:]) >> (bit & 7) & f.bucketMask
}

// match returns, for bucket contents b, a word whose lowest set bit is the
// high bit of the lowest lane equal to tag, or 0 if no lane is (the
// classic "has zero lane" test, applied to b XOR tag in every lane; higher
// set bits may be spurious, the lowest one is exact).
func (f *Filter) match(b, tag uint64) uint64 {
	x := b ^ tag*f.ones
	return (x - f.ones) &^ x & f.highs
}

// ContainsHash reports whether a key with hash h may be in the filter.
func (f *Filter) ContainsHash(h uint64) bool {
	i1, tag := f.locate(h)
	// Early exit on a hit in the first bucket, where inserts put most
	// fingerprints. When the branch predicts "not there" (a run of
	// absent keys, the common case in front of a store) the processor
	// loads the second bucket speculatively, overlapping the two misses as
	// a branch-free query would; when it predicts "there" (a run of
	// hits) the second load is skipped. Measured at 10^7 keys (thread CPU
	// time, same process): present keys 20-30% faster than loading both
	// buckets unconditionally, absent keys 5-20% faster, and a random 50/50
	// mix, where the branch mispredicts, the same.
	if f.match(f.bucket(i1), tag) != 0 {
		return true
	}
	i2 := f.alt(i1, tag)
	if f.match(f.bucket(i2), tag) != 0 {
		return true
	}
	return f.victim.holds(tag, i1, i2)
}

// Contains reports whether key may be in the filter.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// CountHash returns how many stored fingerprints match a key with hash h
// in its two buckets and the victim slot: at least the number of times
// the key was added and not deleted, more if other keys collide.
func (f *Filter) CountHash(h uint64) int {
	i1, tag := f.locate(h)
	n := f.countIn(i1, tag)
	i2 := f.alt(i1, tag)
	if i2 != i1 {
		n += f.countIn(i2, tag)
	}
	if f.victim.holds(tag, i1, i2) {
		n++
	}
	return n
}

// Count is CountHash of the key's hash.
func (f *Filter) Count(key []byte) int { return f.CountHash(f.hasher.Sum64(key)) }

func (f *Filter) countIn(i, tag uint64) int {
	b := f.bucket(i)
	n := 0
	for j := uint(0); j < BucketSize; j++ {
		if b>>(j*f.fpBits)&f.fpMask == tag {
			n++
		}
	}
	return n
}

// InsertHash adds one copy of a key with hash h. It returns an error
// wrapping bloomery.ErrFull, and leaves the filter exactly as it was, when
// the victim slot is occupied and both of the key's buckets are full.
//
// The common case, a free slot in the first bucket, is this straight-line
// code: one load, a SWAR test for an empty lane, one store, no calls. At
// low load nearly every insert ends here, and with large tables the
// processor overlaps the cache misses of consecutive inserts, so the fewer
// instructions each one takes the more misses are in flight at once.
func (f *Filter) InsertHash(h uint64) error {
	traceInsert()
	i1, tag := f.locate(h)
	bit := i1 * f.bucketBits
	off, sh := bit>>3, uint(bit&7)
	touch(off)
	w := binary.LittleEndian.Uint64(f.data[off:])
	if z := f.free(w >> sh); z != 0 {
		lane := uint(bits.TrailingZeros64(z)) + 1 - f.fpBits
		binary.LittleEndian.PutUint64(f.data[off:], w|tag<<(lane+sh))
		f.count++
		return nil
	}
	if !f.insertSlow(i1, tag) {
		return errFull
	}
	f.count++
	return nil
}

// insertSlow stores tag, whose first bucket i1 is full, in its alternate
// bucket, or else (unless the victim slot is in use) by kicking. It
// reports false, having changed nothing, only when both buckets are full
// and the victim slot is in use.
func (f *Filter) insertSlow(i1, tag uint64) bool {
	i2 := f.alt(i1, tag)
	if f.place(i2, tag) {
		return true
	}
	if f.victim.used {
		return false
	}
	f.kick(i1, i2, tag)
	return true
}

// Insert adds one copy of key; see InsertHash.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(f.hasher.Sum64(key)) }

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error { return f.InsertHash(f.hasher.Sum64String(key)) }

// AddHash adds one copy of a key with hash h and reports whether it was
// stored: false means the filter is full (see InsertHash) and unchanged.
//
// Unlike a Bloom filter's Add, true does not mean the key was new: the
// filter is a multiset and every successful Add stores another copy, which
// one Delete removes. Callers that want set semantics test Contains first.
func (f *Filter) AddHash(h uint64) bool { return f.InsertHash(h) == nil }

// Add is AddHash of the key's hash.
func (f *Filter) Add(key []byte) bool { return f.InsertHash(f.hasher.Sum64(key)) == nil }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) bool {
	return f.InsertHash(f.hasher.Sum64String(key)) == nil
}

// free returns, for a word whose low 4f bits are a bucket, a word whose
// lowest set bit is the high bit of the bucket's lowest empty lane, or 0
// if the bucket is full (match against the zero fingerprint).
func (f *Filter) free(w uint64) uint64 {
	x := w & f.bucketMask
	return (x - f.ones) &^ x & f.highs
}

// kick places tag, whose buckets i1 and i2 are both full, by moving
// fingerprints to their other buckets. It first tries to move one resident
// of i1 or i2 straight to a free slot (relocate). Failing that, it walks:
// evict a random resident of the current full bucket, put the fingerprint
// in hand in its place, and carry the evicted one to its other bucket; if
// that bucket is full too, try to move one of its residents out (relocate)
// before evicting again. A walk longer than MaxKicks evictions leaves the
// fingerprint in hand in the victim slot. Nothing is ever dropped: every
// fingerprint is at all times in one of its two buckets, in hand, or in
// the victim slot. REQUIRES: !f.victim.used.
func (f *Filter) kick(i1, i2, tag uint64) {
	// One bucket's residents at a time: at moderate load i1's usually
	// suffice, and reading i2's other buckets too would cost 4 more cache
	// lines (measured: 4-9% slower builds at 10^7 keys than one round of 8).
	if f.relocate(i1, tag) || (i2 != i1 && f.relocate(i2, tag)) {
		return
	}
	r := f.rand()
	i := i1
	if r&1 != 0 {
		i = i2
	}
	for n := 0; n < MaxKicks; n++ {
		if n&31 == 0 {
			r = f.rand()
		}
		tag = f.swap(i, uint(r>>(2*(n&31)))&3, tag)
		i = f.alt(i, tag)
		// Bucket i was loaded by the relocate that just failed, so these
		// two reads are cache hits.
		if f.place(i, tag) || f.relocate(i, tag) {
			return
		}
	}
	f.victim = victim{used: true, tag: tag, index: i}
}

// relocate looks at the other bucket of each of the 4 fingerprints in the
// full bucket b. If one of those buckets has a free slot, it moves the
// first such fingerprint (in slot order) there, stores tag in the slot it
// vacated, and reports true; otherwise it changes nothing.
//
// A plain random walk's steps are serial: each bucket to visit is known
// only once the previous one has been read, so a walk of k steps costs k
// consecutive cache misses, and near design load walks of 10 or more steps
// are common. The 4 buckets examined here are all known once b is read.
// They are read in slot order and the scan stops at the first with room
// (the processor, predicting "full", still issues the next reads early):
// reading all 4 before testing any, as an earlier version did, read 2.36
// distinct cache lines per insert filling to 94% load instead of 2.11,
// and was about 4% slower at 10^7 keys (median of 7 alternated fills,
// thread CPU time; 13% slower from 70% to 94% load).
func (f *Filter) relocate(b, tag uint64) bool {
	w := f.bucket(b)
	for j := range BucketSize {
		a := f.alt(b, w>>(uint(j)*f.fpBits)&f.fpMask)
		if f.free(f.bucket(a)) != 0 {
			f.place(a, f.swap(b, uint(j), tag))
			return true
		}
	}
	return false
}

// place puts tag in the first free slot of bucket i, if there is one.
func (f *Filter) place(i, tag uint64) bool {
	bit := i * f.bucketBits
	off, sh := bit>>3, uint(bit&7)
	touch(off)
	w := binary.LittleEndian.Uint64(f.data[off:])
	z := f.match(w>>sh&f.bucketMask, 0)
	if z == 0 {
		return false
	}
	lane := uint(bits.TrailingZeros64(z)) + 1 - f.fpBits
	binary.LittleEndian.PutUint64(f.data[off:], w|tag<<(lane+sh))
	return true
}

// remove clears one slot of bucket i holding tag, if there is one.
func (f *Filter) remove(i, tag uint64) bool {
	bit := i * f.bucketBits
	off, sh := bit>>3, uint(bit&7)
	touch(off)
	w := binary.LittleEndian.Uint64(f.data[off:])
	z := f.match(w>>sh&f.bucketMask, tag)
	if z == 0 {
		return false
	}
	lane := uint(bits.TrailingZeros64(z)) + 1 - f.fpBits
	binary.LittleEndian.PutUint64(f.data[off:], w&^(f.fpMask<<(lane+sh)))
	return true
}

// swap stores tag in slot j of bucket i and returns the previous content.
func (f *Filter) swap(i uint64, j uint, tag uint64) uint64 {
	bit := i * f.bucketBits
	off, sh := bit>>3, uint(bit&7)+j*f.fpBits
	touch(off)
	w := binary.LittleEndian.Uint64(f.data[off:])
	old := w >> sh & f.fpMask
	binary.LittleEndian.PutUint64(f.data[off:], w&^(f.fpMask<<sh)|tag<<sh)
	return old
}

// Walk returns the state of the eviction walk's random choices. The table
// and this state together decide where every later insert lands, so a
// caller that saves the table (AppendBinary) and replays inserts made
// after it on the decoded copy must restore the state with SetWalk, or
// the copy takes other walks and an insert that fitted the original can
// fail on it. The container format does not record it.
func (f *Filter) Walk() uint64 { return f.rng }

// SetWalk restores a state Walk returned. Zero, which the walk never
// reaches, is ignored.
func (f *Filter) SetWalk(state uint64) {
	if state != 0 {
		f.rng = state
	}
}

// rand is xorshift64: enough to pick eviction slots; the walk's
// correctness does not depend on its quality.
func (f *Filter) rand() uint64 {
	x := f.rng
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	f.rng = x
	return x
}

// DeleteHash removes one copy of a key with hash h and reports whether a
// matching fingerprint was found. Delete only keys that were added (see
// the package documentation): deleting another key can remove a colliding
// key's fingerprint and cause a false negative. A successful delete moves
// a fingerprint waiting in the victim slot back into the table.
func (f *Filter) DeleteHash(h uint64) bool {
	i1, tag := f.locate(h)
	i2 := f.alt(i1, tag)
	if f.victim.holds(tag, i1, i2) {
		f.victim = victim{}
		f.count--
		return true
	}
	if !f.remove(i1, tag) && !f.remove(i2, tag) {
		return false
	}
	f.count--
	if f.victim.used {
		v := f.victim
		f.victim = victim{}
		// One of the deleted key's buckets now has a free slot, but not
		// necessarily one of the victim's, so this may kick.
		if !f.place(v.index, v.tag) {
			f.insertSlow(v.index, v.tag)
		}
	}
	return true
}

// Delete is DeleteHash of the key's hash.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.hasher.Sum64(key)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(f.hasher.Sum64String(key)) }
