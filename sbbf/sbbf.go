// Package sbbf implements the split-block Bloom filter (SBBF) of the Apache
// Parquet specification, byte-compatible with the filters that parquet-mr,
// parquet-rs and Arrow write into Parquet files.
//
// # Layout and probing
//
// The filter is z blocks of 256 bits, each block eight 32-bit words. A key
// is hashed to 64 bits h (XXH64 with seed 0 of the value's PLAIN encoding,
// see [HashInt64], [HashBytes] and friends). The high 32 bits choose the
// block, i = ((h >> 32) · z) >> 32 (multiply-shift, no modulo); the low 32
// bits x set exactly one bit in each of the eight words: bit
// (x · salt[w]) >> 27 (mod 2^32 product) of word w, with the eight odd salt
// constants of the specification. A query checks the same eight bits, so
// every operation touches one 32-byte block: one cache line.
//
// # False positives and sizing
//
// Keys land in blocks as a Poisson process with mean lambda = n/z. A word
// of a block holding i keys has its probed bit set with probability
// 1 - (31/32)^i, so
//
//	FPR = sum_i Pois(i; lambda) · (1 - (31/32)^i)^8   (fpmath.SBBFFPR),
//
// 1.26% at 10 bits per key and 1.01% at 10.5, the figures of the
// specification's sizing table. [Blocks] sizes a filter with this formula,
// as the specification describes. The Arrow, parquet-mr and parquet-rs
// writers instead use the standard-Bloom approximation
// m = -8·n / ln(1 - p^(1/8)) ([ArrowBytes]), which ignores the variance of
// block loads: asked for 1% it provisions 9.68 bits per key, which really
// gives about 1.46% (their power-of-two round-up usually hides this). Use
// [SizingArrow] only to reproduce their bitset sizes.
//
// The filter accepts any number of blocks (any multiple of 32 bytes), not
// only powers of two, as the specification requires of readers.
//
// # Estimates from the contents
//
// The filter counts its set bits. With fill f, the expected-fill relation
// f = 1 - e^(-lambda/32) gives lambda = -32 ln(1 - f), and [Filter.EstimatedFPR]
// is the Poisson formula at that lambda, so it tracks overfill and works
// for filters read from files whose key count is unknown.
//
// # Concurrency
//
// Queries may run concurrently with each other; Add and Union need
// exclusive access.
//
// # Persistence
//
// [Filter.AppendBinary] writes the Bloomery container (kind "sbbf", layout
// 1); [Filter.AppendParquet] writes the Parquet form (Thrift-compact
// BloomFilterHeader, then the bitset) and [ParseParquet] reads it;
// [ParquetColumns] and [ReadParquetFilter] find the filters of a Parquet
// file through its footer. docs/format/sbbf.md documents both layouts.
package sbbf

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// BlockBytes is the size of one block.
const BlockBytes = 32

// MaxBlocks bounds the number of blocks: the specification requires
// z < 2^31; a Parquet header's i32 numBytes further limits filters stored
// in Parquet files to 2^31 - 32 bytes.
const MaxBlocks = 1<<31 - 1

// Arrow writers clamp their filters to [32 B, 128 MiB].
const (
	ArrowMinBytes = 32
	ArrowMaxBytes = 128 << 20
)

// salt holds the specification's eight odd multipliers, one per word.
var salt = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// Parquet is the hasher the Parquet specification mandates: XXH64, seed 0.
var Parquet = hashing.XXH64(0)

// Sizing selects how New turns a capacity and an FPR into a size.
type Sizing uint8

const (
	// SizingPoisson (the default) picks the fewest blocks whose Poisson
	// FPR at Capacity keys meets the target, as the specification's sizing
	// table does.
	SizingPoisson Sizing = iota
	// SizingArrow reproduces the Arrow/parquet-mr/parquet-rs writers:
	// -8n/ln(1-p^(1/8)) bits, rounded up to a power of two and clamped to
	// [32 B, 128 MiB]. It under-provisions before the round-up.
	SizingArrow
)

// Params configures a filter.
type Params struct {
	// Capacity is the number of distinct keys the filter is designed for.
	Capacity int
	// FPR is the target false-positive rate at Capacity keys, in (0, 1);
	// used when BitsPerKey and Bytes are 0 (default 0.01).
	FPR float64
	// BitsPerKey, when set, sizes the filter to ceil(Capacity·BitsPerKey/256)
	// blocks.
	BitsPerKey float64
	// Bytes, when set, is the exact size: a positive multiple of 32.
	Bytes int
	// Sizing is the sizing rule used with FPR.
	Sizing Sizing
	// Hasher hashes keys. The zero value means [Parquet] (XXH64 seed 0),
	// the only hasher whose filters can be written into Parquet files.
	Hasher hashing.Hasher
}

// Blocks returns the number of blocks that holds n keys at FPR p by the
// Poisson formula (at least 1).
func Blocks(n int, p float64) int {
	if n <= 0 {
		return 1
	}
	l := fpmath.SBBFLambdaForFPR(p)
	if l <= 0 {
		return MaxBlocks
	}
	z := math.Ceil(float64(n) / l)
	return int(min(max(z, 1), MaxBlocks))
}

// ArrowBytes returns the bitset size the Arrow, parquet-mr and parquet-rs
// writers choose for ndv distinct values at FPR fpp (see the package doc
// for why it under-provisions).
func ArrowBytes(ndv int, fpp float64) int {
	bitsNeeded := fpmath.ArrowSBBFBits(float64(max(ndv, 0)), fpp)
	b := math.Ceil(bitsNeeded / 8)
	if !(b >= ArrowMinBytes) { // also NaN
		b = ArrowMinBytes
	}
	if b > ArrowMaxBytes {
		b = ArrowMaxBytes
	}
	return 1 << bits.Len64(uint64(b)-1)
}

// Filter is a split-block Bloom filter.
type Filter struct {
	words   []uint32 // 8 per block
	z       uint64   // blocks
	hasher  hashing.Hasher
	n       int // adds that set at least one bit (or an estimate, see Len)
	cap     int
	design  float64
	setBits uint64
}

var (
	_ bloomery.Adder        = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Size returns the bitset bytes New(p) would allocate (32 per block),
// without allocating. Its errors are New's. Cost: O(1).
func Size(p Params) (bytes int, err error) {
	z, err := blocksFor(p)
	if err != nil {
		return 0, err
	}
	if err := bloomery.CheckTableBytes("sbbf", uint64(z)*BlockBytes); err != nil {
		return 0, err
	}
	return z * BlockBytes, nil
}

// blocksFor returns the number of blocks New(p) allocates.
func blocksFor(p Params) (int, error) {
	if p.Capacity < 0 {
		return 0, fmt.Errorf("sbbf: capacity %d: %w", p.Capacity, bloomery.ErrInvalidParams)
	}
	var z int
	switch {
	case p.Bytes != 0:
		if p.Bytes < 0 || p.Bytes%BlockBytes != 0 || p.Bytes/BlockBytes > MaxBlocks {
			return 0, fmt.Errorf("sbbf: %d bytes is not a positive multiple of 32 below 2^36: %w", p.Bytes, bloomery.ErrInvalidParams)
		}
		z = p.Bytes / BlockBytes
	case p.Capacity == 0:
		return 0, fmt.Errorf("sbbf: zero capacity and no size: %w", bloomery.ErrInvalidParams)
	case p.BitsPerKey != 0:
		if !(p.BitsPerKey > 0 && p.BitsPerKey <= 1<<16) {
			return 0, fmt.Errorf("sbbf: bits/key %v: %w", p.BitsPerKey, bloomery.ErrInvalidParams)
		}
		zf := math.Ceil(float64(p.Capacity) * p.BitsPerKey / 256)
		if zf > MaxBlocks {
			return 0, fmt.Errorf("sbbf: %d keys at %v bits/key exceed 2^31 blocks: %w", p.Capacity, p.BitsPerKey, bloomery.ErrInvalidParams)
		}
		z = max(int(zf), 1)
	default:
		fpr := p.FPR
		if fpr == 0 {
			fpr = 0.01
		}
		if !(fpr > 0 && fpr < 1) {
			return 0, fmt.Errorf("sbbf: FPR %v outside (0, 1): %w", p.FPR, bloomery.ErrInvalidParams)
		}
		switch p.Sizing {
		case SizingPoisson:
			z = Blocks(p.Capacity, fpr)
			if z == MaxBlocks {
				return 0, fmt.Errorf("sbbf: %d keys at FPR %v need 2^31 blocks or more: %w", p.Capacity, fpr, bloomery.ErrInvalidParams)
			}
		case SizingArrow:
			z = ArrowBytes(p.Capacity, fpr) / BlockBytes
		default:
			return 0, fmt.Errorf("sbbf: unknown sizing %d: %w", p.Sizing, bloomery.ErrInvalidParams)
		}
	}
	return z, nil
}

// New returns an empty filter sized by p.
func New(p Params) (*Filter, error) {
	z, err := blocksFor(p)
	if err != nil {
		return nil, err
	}
	h := p.Hasher
	if h == (hashing.Hasher{}) {
		h = Parquet
	}
	if err := bloomery.CheckTableBytes("sbbf", uint64(z)*BlockBytes); err != nil {
		return nil, err
	}
	f := newBlocks(uint64(z), h)
	f.cap = p.Capacity
	if p.Capacity > 0 {
		f.design = fpmath.SBBFFPR(float64(p.Capacity) / float64(z))
	}
	return f, nil
}

// NewForCapacity returns a Parquet-hashed filter for n keys at FPR fpr,
// sized by the Poisson formula.
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{Capacity: n, FPR: fpr})
}

func newBlocks(z uint64, h hashing.Hasher) *Filter {
	return &Filter{words: make([]uint32, 8*z), z: z, hasher: h}
}

// block returns the words of the block that h maps to.
func (f *Filter) block(h uint64) *[8]uint32 {
	i := ((h >> 32) * f.z) >> 32
	return (*[8]uint32)(f.words[8*i : 8*i+8])
}

// AddHash inserts a key by its hash (made with the filter's hasher; for
// Parquet, XXH64 seed 0 of the PLAIN encoding) and reports whether any bit
// was newly set. Cost: one block (one cache line); no allocation.
func (f *Filter) AddHash(h uint64) bool {
	b := f.block(h)
	x := uint32(h)
	var added uint64
	for w := range 8 {
		m := uint32(1) << ((x * salt[w]) >> 27)
		if b[w]&m == 0 {
			b[w] |= m
			added++
		}
	}
	f.setBits += added
	if added != 0 {
		f.n++
		return true
	}
	return false
}

// Add hashes key with the filter's hasher and inserts it. For Parquet the
// key is the value's PLAIN encoding (BYTE_ARRAY without length prefix).
func (f *Filter) Add(key []byte) bool { return f.AddHash(f.hasher.Sum64(key)) }

// AddString is Add for a string, without copying it.
func (f *Filter) AddString(key string) bool { return f.AddHash(f.hasher.Sum64String(key)) }

// ContainsHash reports whether a key with hash h may be in the filter.
// Cost: one block; branch-free (the eight word tests are OR-ed into one
// miss mask); no allocation.
func (f *Filter) ContainsHash(h uint64) bool {
	b := f.block(h)
	x := uint32(h)
	var miss uint32
	for w := range 8 {
		miss |= ^b[w] & (uint32(1) << ((x * salt[w]) >> 27))
	}
	return miss == 0
}

// Contains hashes key with the filter's hasher and queries it.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]); len(out) must be
// >= len(hashes). The block loads of consecutive keys are independent, so
// the processor overlaps their cache misses.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	for i, h := range hashes {
		b := f.block(h)
		x := uint32(h)
		var miss uint32
		for w := range 8 {
			miss |= ^b[w] & (uint32(1) << ((x * salt[w]) >> 27))
		}
		out[i] = miss == 0
	}
}

// Kind returns bloomery.KindSBBF.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindSBBF }

// Hasher returns the filter's hasher.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// NumBlocks returns z, the number of 256-bit blocks.
func (f *Filter) NumBlocks() int { return int(f.z) }

// Len returns the number of Add calls that set a bit. For a filter read
// from a Parquet file, whose header carries no count, it is the estimate
// z·lambda from the fill; after Union it is the sum of both counts (an
// upper bound).
func (f *Filter) Len() int { return f.n }

// Cap returns the design capacity (0 when unknown, as for filters read
// from Parquet files or built with an explicit size and no capacity).
func (f *Filter) Cap() int { return f.cap }

// SizeBytes returns the bitset size, 32 bytes per block.
func (f *Filter) SizeBytes() int { return int(f.z) * BlockBytes }

// FillRatio returns the fraction of bits set.
func (f *Filter) FillRatio() float64 { return float64(f.setBits) / float64(f.z*256) }

// EstimatedFPR returns the Poisson-formula FPR at the lambda implied by the
// current fill (see the package doc). O(1).
func (f *Filter) EstimatedFPR() float64 {
	return fpmath.SBBFFPR(fpmath.SBBFLambdaFromFill(f.FillRatio()))
}

// ContentFPR returns the exact FPR of the current contents for uniform
// hashes: the mean over blocks of the product over words of (bits set)/32.
// It reads the whole bitset: O(size).
func (f *Filter) ContentFPR() float64 {
	sum := 0.0
	for i := uint64(0); i < f.z; i++ {
		b := (*[8]uint32)(f.words[8*i : 8*i+8])
		p := 1.0
		for _, w := range b {
			p *= float64(bits.OnesCount32(w)) / 32
		}
		sum += p
	}
	return sum / float64(f.z)
}

// Stats describes the filter; "contentFPR" in Extra is [Filter.ContentFPR].
func (f *Filter) Stats() bloomery.Stats {
	est := f.EstimatedFPR()
	s := bloomery.Stats{
		Kind:         bloomery.KindSBBF,
		Len:          f.n,
		Cap:          f.cap,
		SizeBytes:    f.SizeBytes(),
		HashFuncs:    8,
		FillRatio:    f.FillRatio(),
		DesignFPR:    f.design,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, f.design),
	}
	if d := max(f.cap, f.n); d > 0 {
		s.BitsPerKey = float64(s.SizeBytes) * 8 / float64(d)
	}
	s.Extra = []bloomery.Stat{
		{Name: "blocks", Value: float64(f.z)},
		{Name: "lambda", Value: fpmath.SBBFLambdaFromFill(s.FillRatio)},
		{Name: "contentFPR", Value: f.ContentFPR()},
	}
	return s
}

// Clone returns an independent copy.
func (f *Filter) Clone() *Filter {
	g := *f
	g.words = append([]uint32(nil), f.words...)
	return &g
}

// Union ORs other into f. Both must have the same number of blocks and the
// same hasher, else the error wraps bloomery.ErrIncompatible and f is
// unchanged. Len becomes the sum of both counts (an upper bound).
func (f *Filter) Union(other *Filter) error {
	if f.z != other.z {
		return fmt.Errorf("sbbf: union of %d and %d blocks: %w", f.z, other.z, bloomery.ErrIncompatible)
	}
	if !f.hasher.Equal(other.hasher) {
		return fmt.Errorf("sbbf: union of filters hashed with %v and %v: %w", f.hasher, other.hasher, bloomery.ErrIncompatible)
	}
	var set uint64
	for i, w := range other.words {
		f.words[i] |= w
		set += uint64(bits.OnesCount32(f.words[i]))
	}
	f.setBits = set
	f.n += other.n
	f.cap = max(f.cap, other.cap)
	if f.cap > 0 {
		f.design = fpmath.SBBFFPR(float64(f.cap) / float64(f.z))
	}
	return nil
}

// Merge returns the union of a and b as a new filter (see [Filter.Union]).
func Merge(a, b *Filter) (*Filter, error) {
	c := a.Clone()
	if err := c.Union(b); err != nil {
		return nil, err
	}
	return c, nil
}

// countBits recomputes setBits from the words.
func (f *Filter) countBits() {
	var set uint64
	for _, w := range f.words {
		set += uint64(bits.OnesCount32(w))
	}
	f.setBits = set
}
