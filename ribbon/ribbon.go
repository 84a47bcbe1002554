package ribbon

import (
	"math/bits"
	"unsafe"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// Compile-time checks.
var (
	_ bloomery.Filter       = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Filter is a static standard Ribbon filter with 128-bit bands. It is
// immutable after Build or Decode and safe for concurrent queries.
//
// A query costs one 64-bit remix, five multiplications, and for each
// result column three AND-ed words and a parity, reading the key's block
// and the next one (2 to 5 cache lines, loaded together). No branch depends
// on the key, so the out-of-order core overlaps consecutive queries; on
// amd64 with AVX2 filters with at most 8 columns (FPR above about 0.4 %)
// are queried by an assembly kernel that evaluates all columns at once.
type Filter struct {
	data   []uint64 // interleaved solution, see layout; kernelPad zero words follow in its capacity
	l      layout
	n      int     // distinct keys
	seed   uint32  // banding seed (attempt ordinal)
	target float64 // design FPR
	hasher hashing.Hasher
	k      kernel // the assembly query's view of the filter
	simd   bool   // k is set: ContainsHash uses the assembly query
}

// kernelPad is the number of zero words after the solution (in the
// capacity of Filter.data): the assembly query reads 16 words from the
// start of a block and of the next one (which is the end of the solution
// after the last block), and ContainsBatch prefetches up to 31 words from
// the start of a block.
const kernelPad = 32

// newSolution allocates a zeroed solution of n words followed by
// kernelPad zero words of capacity, advised onto huge pages when large.
func newSolution(n uint64) []uint64 {
	s := make([]uint64, n, n+kernelPad)
	adviseHugePages(s)
	return s
}

// Kind returns bloomery.KindRibbon.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindRibbon }

// Hasher returns the hasher that Contains uses and that Build's hashes
// must come from.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// Len returns the number of distinct keys the filter was built from.
func (f *Filter) Len() int { return f.n }

// SizeBytes returns the size of the solution (the only table a query
// reads).
func (f *Filter) SizeBytes() int { return 8 * len(f.data) }

// EstimatedFPR returns the expected false-positive rate of this filter:
// the realised mix lp·2^-L + (1-lp)·2^-(L+1), lp being the fraction of
// starts that fall in blocks with L columns.
func (f *Filter) EstimatedFPR() float64 { return f.l.fpr() }

// DesignFPR returns the target the filter was built for.
func (f *Filter) DesignFPR() float64 { return f.target }

// Seed returns the banding seed (the attempt that succeeded).
func (f *Filter) Seed() uint32 { return f.seed }

// Slots returns the number of slots (rows of the solution), a multiple of
// 128.
func (f *Filter) Slots() int { return int(f.l.numBlocks * 128) }

// Stats describes the filter. FingerprintBits is the number of result
// columns of the lower blocks (the upper ones have one more); Extra holds
// "slots", "blocks", "lower_columns", "upper_start_block",
// "lower_fraction", "avg_columns", "slots_per_key" and "seed".
func (f *Filter) Stats() bloomery.Stats {
	s := bloomery.Stats{
		Kind:            bloomery.KindRibbon,
		Len:             f.n,
		Cap:             f.n,
		SizeBytes:       f.SizeBytes(),
		FingerprintBits: f.l.lower,
		DesignFPR:       f.target,
		EstimatedFPR:    f.EstimatedFPR(),
	}
	slots := float64(f.l.numBlocks * 128)
	if f.n > 0 {
		s.BitsPerKey = float64(8*s.SizeBytes) / float64(f.n)
		s.FillRatio = float64(f.n) / slots
	}
	avg := 0.0
	if f.l.numBlocks > 0 {
		avg = float64(f.l.words()/2) / float64(f.l.numBlocks)
	}
	perKey := 0.0
	if f.n > 0 {
		perKey = slots / float64(f.n)
	}
	s.Overfilled = bloomery.IsOverfilled(s.EstimatedFPR, s.DesignFPR)
	s.Extra = []bloomery.Stat{
		{Name: "slots", Value: slots},
		{Name: "blocks", Value: float64(f.l.numBlocks)},
		{Name: "lower_columns", Value: float64(f.l.lower)},
		{Name: "upper_start_block", Value: float64(f.l.upperStart)},
		{Name: "lower_fraction", Value: f.l.lowerFraction()},
		{Name: "avg_columns", Value: avg},
		{Name: "slots_per_key", Value: perKey},
		{Name: "seed", Value: float64(f.seed)},
	}
	return s
}

// Contains reports whether key may be in the set: false means certainly
// not. It does not allocate.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// Hash constants of the row derivation (arbitrary odd 64-bit numbers with
// balanced bits; persisted filters depend on them: layout 1).
const (
	mulLo     = 0xf1357aea2e62a9c5
	mulHi     = 0xd1b54a32d192ed03
	mulResult = 0xaef17502108ef2d9
)

// remix turns a key hash into the word that defines the key's equation for
// one banding seed: a bijection of h, different and independent-looking
// for every seed, so a failed seed gives a fresh system.
func remix(h uint64, seed uint32) uint64 { return hashing.Remix(h, uint64(seed)+1) }

// row derives a key's equation from its remixed hash x:
//
//   - start = Reduce(x, numStarts): the high bits of x, uniform over the
//     starts (computed by the caller);
//   - coefficients: 128 bits, lo = x·mulLo with bit 0 forced to 1 (the
//     row's leading 1, which banding relies on), hi = (x ^ x>>31)·mulHi;
//   - result: the high 32 bits of x·mulResult, masked by the caller to the
//     columns in use.
//
// The three products use different multipliers, so the result bits are
// not a linear (GF(2)) function of the coefficient bits, which the FPR
// argument needs (see the package doc).
func row(x uint64) (lo, hi uint64, r uint32) {
	lo = x*mulLo | 1
	hi = (x ^ x>>31) * mulHi
	r = uint32((x * mulResult) >> 32)
	return
}

// shift128 returns c<<o (a) and c>>(128-o) (b) for 0 <= o < 128, both as
// (low, high) word pairs: a is the part of a 128-bit row starting at slot
// offset o that lies in the start block, b the part that spills into the
// next block.
func shift128(lo, hi uint64, o uint) (a0, a1, b0, b1 uint64) {
	if o < 64 {
		a0 = lo << o
		a1 = hi<<o | lo>>(64-o) // lo>>64 is 0 in Go
		b0 = hi >> (64 - o)     // 0 when o == 0
		return
	}
	o -= 64
	a1 = lo << o
	b0 = lo>>(64-o) | hi<<o
	b1 = hi >> (64 - o)
	return
}

// containsGeneric is the portable query (ContainsHash where the assembly
// kernel does not apply), without data-dependent branches.
//
// The 128 slots s..s+127 of a row span three 64-slot halves: half h = o>>6
// of the start block (o = s mod 128), the half after it (the start
// block's second half or the next block's first), and the half after
// that. With t = o mod 64 the row's coefficients split over them as
//
//	m0 = lo<<t, m1 = hi<<t | lo>>(64-t), m2 = hi>>(64-t),
//
// the same shifts whichever half the row starts in: only the word indices
// depend on h. Inside a block of c columns, column j's two words are at
// 2j and 2j+1, so the three halves of column j are words 2j+h of the start
// block, 2j+1+h·(2c-1) of it (that is, word 2j of the next block when
// h = 1), and 2j+h of the next block. A row with o = 0 lies in its start
// block alone (m2 = 0) and the next block may not exist: the third word
// is then read from the start block and masked out. A column costs three
// loads, three ANDs and a popcount; bit 0 of popcount ^ r>>j is column
// j's mismatch, and ORing the mismatches needs no branch.
func (f *Filter) containsGeneric(h uint64) bool {
	l := &f.l
	if l.numBlocks == 0 {
		return false
	}
	x := remix(h, f.seed)
	s := hashing.Reduce(x, l.numStarts)
	blk := s >> 7
	lower := uint64(l.lower)
	above := int64(blk) - int64(l.upperStart)
	up := uint64(^above) >> 63 // 1 iff blk >= upperStart
	cols := lower + up
	off := 2 * (blk*lower + uint64(above)&-up)
	o := s & 127
	hf := o >> 6
	t := o & 63
	nz := (o + 127) >> 7 // 1 iff o != 0
	lo, hi, r32 := row(x)
	m0 := lo << t
	m1 := hi<<t | lo>>1>>((63-t)&63)
	m2 := hi >> 1 >> ((63 - t) & 63)
	w0 := off + hf
	w1 := off + 1 + hf*(2*cols-1)
	w2 := off + 2*cols*nz + hf
	// The last words read are w1+2(cols-1) and w2+2(cols-1) (w0 < w1).
	// Build and Decode guarantee that they exist, so this test never
	// fails; it keeps a corrupt layout from reading outside the solution.
	d := f.data
	if w1+2*cols > uint64(len(d))+1 || w2+2*cols > uint64(len(d))+1 {
		return true
	}
	base := unsafe.Pointer(unsafe.SliceData(d))
	pa := unsafe.Add(base, 8*w0)
	pb := unsafe.Add(base, 8*w1)
	pc := unsafe.Add(base, 8*w2)
	r := uint64(r32)
	var miss uint64
	for j := uint64(0); j < 2*cols; j += 2 {
		a := *(*uint64)(unsafe.Add(pa, 8*j))
		b := *(*uint64)(unsafe.Add(pb, 8*j))
		c := *(*uint64)(unsafe.Add(pc, 8*j))
		miss |= uint64(bits.OnesCount64(a&m0^b&m1^c&m2)) ^ r
		r >>= 1
	}
	return miss&1 == 0
}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// works in groups of 16 keys: first it locates every key's start block and
// prefetches the four cache lines from its first word on (the words a
// query reads lie in the 4·cols <= 32 words from there when cols <= 8),
// then it answers the keys, whose lines are in flight or in cache by then.
// out must have len(out) >= len(hashes). It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	_ = out[:len(hashes)]
	if f.l.numBlocks == 0 {
		clear(out[:len(hashes)])
		return
	}
	const group = 16
	var offs [4 * group]uint64
	l := &f.l
	lower := uint64(l.lower)
	for len(hashes) > 0 {
		g := min(len(hashes), group)
		for i, h := range hashes[:g] {
			s := hashing.Reduce(remix(h, f.seed), l.numStarts)
			blk := s >> 7
			above := int64(blk) - int64(l.upperStart)
			up := uint64(^above) >> 63 // 1 iff blk >= upperStart
			off := 2 * (blk*lower + uint64(above)&-up)
			offs[4*i] = off
			offs[4*i+1] = off + 8
			offs[4*i+2] = off + 16
			offs[4*i+3] = off + 24
		}
		prefetch(f.data, offs[:4*g])
		for i, h := range hashes[:g] {
			out[i] = f.ContainsHash(h)
		}
		hashes, out = hashes[g:], out[g:]
	}
}
