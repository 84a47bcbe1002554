package ribbon

import (
	"math/bits"

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
// A query costs one 64-bit remix, three multiplications, and for each
// result column up to four AND-ed words and one popcount, reading the
// key's block and the next one (1 to 3 cache lines); a non-member stops at
// the first column that disagrees, after two columns on average.
type Filter struct {
	data   []uint64 // interleaved solution, see layout
	l      layout
	n      int     // distinct keys
	seed   uint32  // banding seed (attempt ordinal)
	target float64 // design FPR
	hasher hashing.Hasher
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

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.l.numBlocks == 0 {
		return false
	}
	x := remix(h, f.seed)
	s := hashing.Reduce(x, f.l.numStarts)
	off, next := f.blocks(s)
	return f.check(x, s, off, next, f.data[off], f.data[next])
}

// blocks returns the offsets of the first words of the start block of s
// and of the next block. When s is a multiple of 128 the key's row lies
// in its start block alone and the next block may not exist: next is then
// off again, and the query's shifted row for it is zero. Otherwise the next
// block exists, because s+127 < slots.
func (f *Filter) blocks(s uint64) (off, next uint64) {
	blk := s >> 7
	off = f.l.offset(blk)
	next = off
	if s&127 != 0 {
		next += 2 * uint64(f.l.cols(blk))
	}
	return off, next
}

// check evaluates the equation of remixed hash x with start s against the
// solution; off and next are the offsets from blocks(s), first and second
// the words f.data[off] and f.data[next] (loaded early by ContainsBatch).
func (f *Filter) check(x, s, off, next, first, second uint64) bool {
	lo, hi, r := row(x)
	a0, a1, b0, b1 := shift128(lo, hi, uint(s&127))
	cols := uint64(f.l.cols(s >> 7))
	d := f.data
	cur := d[off : off+2*cols : off+2*cols]
	nxt := d[next : next+2*cols : next+2*cols]
	w := first&a0 ^ cur[1]&a1 ^ second&b0 ^ nxt[1]&b1
	if (uint32(bits.OnesCount64(w))^r)&1 != 0 {
		return false
	}
	for j := 2; j+1 < len(cur) && j+1 < len(nxt); j += 2 {
		r >>= 1
		w := cur[j]&a0 ^ cur[j+1]&a1 ^ nxt[j]&b0 ^ nxt[j+1]&b1
		if (uint32(bits.OnesCount64(w))^r)&1 != 0 {
			return false
		}
	}
	return true
}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// works in groups of 16: first every key's start and one load from each
// of its two blocks, which lets the CPU overlap the cache misses of the
// group; then the column checks, which find the lines in cache. out must have
// len(out) >= len(hashes). It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	_ = out[:len(hashes)]
	if f.l.numBlocks == 0 {
		clear(out[:len(hashes)])
		return
	}
	const group = 16
	var xs, ss, offs, nexts, firsts, seconds [group]uint64
	for len(hashes) > 0 {
		g := min(len(hashes), group)
		for i := 0; i < g; i++ {
			x := remix(hashes[i], f.seed)
			s := hashing.Reduce(x, f.l.numStarts)
			off, next := f.blocks(s)
			xs[i], ss[i], offs[i], nexts[i] = x, s, off, next
			firsts[i], seconds[i] = f.data[off], f.data[next]
		}
		for i := 0; i < g; i++ {
			out[i] = f.check(xs[i], ss[i], offs[i], nexts[i], firsts[i], seconds[i])
		}
		hashes, out = hashes[g:], out[g:]
	}
}
