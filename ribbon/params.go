package ribbon

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Params configures a Ribbon filter. Exactly one of FPR and BloomBitsPerKey
// is set.
type Params struct {
	// FPR is the target false-positive rate, in (2^-32, 0.5]. It need not
	// be a power of two: the filter mixes blocks of ⌊log2(1/FPR)⌋ and
	// ⌊log2(1/FPR)⌋+1 result columns to hit it (see the package doc).
	FPR float64
	// BloomBitsPerKey states the target the way a Bloom user thinks: the
	// filter aims at the false-positive rate that a 512-bit cache-line
	// blocked Bloom filter reaches at this many bits per key with its best
	// probe count (the k minimising fpmath.BlockedFPR, which is also the k
	// that package bloom's BlockedK picks: checked from 2.1 to 40 bits/key),
	// and then spends about 30 % fewer bits to get it. 10 means about
	// 0.957 % (7 probes).
	BloomBitsPerKey float64
	// Hasher hashes keys for BuildKeys and Contains; the zero value is
	// XXH3 with seed 0. Build takes hashes made with this hasher.
	Hasher hashing.Hasher
}

// MinFPR and MaxFPR bound Params.FPR: a result row holds at most 32
// columns, and below one column (FPR above 1/2) a filter is not useful.
const (
	MinFPR = 1.0 / (1 << 32) // exclusive
	MaxFPR = 0.5             // inclusive
)

// maxCols is the widest result row (columns), so results fit a uint32.
const maxCols = 32

// BloomEquivalentFPR returns the false-positive rate of a 512-bit blocked
// Bloom filter at bitsPerKey bits per key with the probe count k that
// minimises fpmath.BlockedFPR (the Poisson model of Putze, Sanders and
// Singler), searched over 1 <= k <= 32. It is the target that
// Params.BloomBitsPerKey stands for.
func BloomEquivalentFPR(bitsPerKey float64) float64 {
	if !(bitsPerKey > 0) {
		return 1
	}
	best := 1.0
	for k := 1; k <= 32; k++ {
		f := fpmath.BlockedFPR(bitsPerKey, 1, k, 512)
		if f < best {
			best = f
		} else if f > best*1.5 {
			break // past the minimum: the curve is unimodal in k
		}
	}
	return best
}

// targetFPR validates p and returns the target false-positive rate.
func (p Params) targetFPR(ctx string) (float64, error) {
	switch {
	case p.FPR != 0 && p.BloomBitsPerKey != 0:
		return 0, fmt.Errorf("%s: set FPR or BloomBitsPerKey, not both: %w", ctx, bloomery.ErrInvalidParams)
	case p.FPR != 0:
		if !(p.FPR > MinFPR && p.FPR <= MaxFPR) {
			return 0, fmt.Errorf("%s: FPR %v outside (2^-32, 0.5]: %w", ctx, p.FPR, bloomery.ErrInvalidParams)
		}
		return p.FPR, nil
	case p.BloomBitsPerKey != 0:
		if !(p.BloomBitsPerKey >= 1 && p.BloomBitsPerKey <= 64) {
			return 0, fmt.Errorf("%s: BloomBitsPerKey %v outside [1, 64]: %w", ctx, p.BloomBitsPerKey, bloomery.ErrInvalidParams)
		}
		f := BloomEquivalentFPR(p.BloomBitsPerKey)
		if !(f > MinFPR && f <= MaxFPR) {
			return 0, fmt.Errorf("%s: BloomBitsPerKey %v means FPR %v, outside (2^-32, 0.5]: %w", ctx, p.BloomBitsPerKey, f, bloomery.ErrInvalidParams)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%s: FPR or BloomBitsPerKey is required: %w", ctx, bloomery.ErrInvalidParams)
}

// columnsFor splits a target FPR into lower = ⌊log2(1/fpr)⌋ columns and
// the fraction of starts that use them (the rest use lower+1):
//
//	fpr = lp·2^-L + (1-lp)·2^-(L+1)  ⇒  lp = (fpr - 2^-(L+1)) / 2^-(L+1).
func columnsFor(fpr float64) (lower int, lowerPortion float64) {
	lower = int(math.Floor(-math.Log2(fpr)))
	// Guard the floor against rounding at exact powers of two.
	if math.Ldexp(1, -lower) < fpr {
		lower--
	}
	if math.Ldexp(1, -(lower+1)) >= fpr {
		lower++
	}
	lower = max(1, min(lower, maxCols-1))
	half := math.Ldexp(1, -(lower + 1))
	lp := (fpr - half) / half
	return lower, max(0, min(1, lp))
}

// Overhead (slots per key) by log2(slots), measured for this package's
// hashing and banding so that one seed fails about 1 time in 20 or less
// (TestOverheadTable re-measures it). Between the points the ratio is
// interpolated linearly in log2(slots); beyond the last point it grows by
// overheadSlope per doubling, the drift Dillinger and Walzer predict for a
// fixed 128-bit band width (the band's "reach" is fixed while the number of
// keys competing for the last free slots grows).
var overheadTable = [...]struct{ log2Slots, ratio float64 }{
	{8, 1.029}, {10, 1.023}, {12, 1.023}, {14, 1.026}, {16, 1.033}, {17, 1.036},
}

const overheadSlope = 0.0038

// overheadRatio returns slots/keys for a filter of about `slots` slots.
func overheadRatio(slots float64) float64 {
	l := math.Log2(max(slots, 256))
	t := overheadTable
	if l <= t[0].log2Slots {
		return t[0].ratio
	}
	for i := 1; i < len(t); i++ {
		if l <= t[i].log2Slots {
			a, b := t[i-1], t[i]
			return a.ratio + (b.ratio-a.ratio)*(l-a.log2Slots)/(b.log2Slots-a.log2Slots)
		}
	}
	last := t[len(t)-1]
	return last.ratio + overheadSlope*(l-last.log2Slots)
}

// slotsFor returns the number of slots (a multiple of 128, at least 256)
// for n distinct keys. The ratio depends on the slot count, so it is
// computed twice (once at n, once at the first estimate), which converges
// because the ratio grows only logarithmically.
func slotsFor(n int) uint64 {
	if n <= 0 {
		return 0
	}
	s := float64(n) * overheadRatio(float64(n))
	s = float64(n) * overheadRatio(s)
	m := uint64(math.Ceil(s/128)) * 128
	return max(m, 256)
}

// layout is the shape of a filter: everything but the solution words.
type layout struct {
	numBlocks  uint64 // blocks of 128 slots
	numStarts  uint64 // numBlocks*128 - 127: a key's 128 slots stay inside
	lower      int    // columns of blocks below upperStart
	upperStart uint64 // first block with lower+1 columns
}

// newLayout places n keys in slots for target fpr.
func newLayout(slots uint64, fpr float64) layout {
	lower, lp := columnsFor(fpr)
	l := layout{numBlocks: slots / 128, lower: lower}
	l.numStarts = slots - 127
	// The boundary nearest to lp. Rounding lp·numStarts/128 finds it
	// except next to the last block, which holds a single start: there
	// the next block up may be closer (it is, for lp = 1).
	u := min(uint64(math.Floor(lp*float64(l.numStarts)/128+0.5)), l.numBlocks)
	if u < l.numBlocks {
		l.upperStart = u + 1
		above := l.lowerFraction()
		l.upperStart = u
		if math.Abs(above-lp) < math.Abs(l.lowerFraction()-lp) {
			u++
		}
	}
	l.upperStart = u
	return l
}

// words is the number of uint64 solution words: two per column per block.
func (l layout) words() uint64 {
	return 2 * (l.numBlocks*uint64(l.lower) + l.numBlocks - l.upperStart)
}

// offset is the index of block b's first word.
func (l layout) offset(b uint64) uint64 {
	o := b * uint64(l.lower)
	if b > l.upperStart {
		o += b - l.upperStart
	}
	return 2 * o
}

// cols is the number of result columns of block b.
func (l layout) cols(b uint64) int {
	if b >= l.upperStart {
		return l.lower + 1
	}
	return l.lower
}

// lowerFraction is the realised fraction of starts in blocks with `lower`
// columns.
func (l layout) lowerFraction() float64 {
	if l.numStarts == 0 {
		return 0
	}
	return float64(min(l.upperStart*128, l.numStarts)) / float64(l.numStarts)
}

// fpr is the expected false-positive rate of the layout: a non-member's
// start is uniform, so it meets `lower` columns with probability
// lowerFraction and each column matches with probability 1/2.
func (l layout) fpr() float64 {
	if l.numBlocks == 0 {
		return 0
	}
	lp := l.lowerFraction()
	return lp*math.Ldexp(1, -l.lower) + (1-lp)*math.Ldexp(1, -(l.lower+1))
}

// Sizing is the shape of a Ribbon filter for n distinct keys.
type Sizing struct {
	// Slots is the number of solution rows (a multiple of 128), Blocks
	// Slots/128.
	Slots, Blocks uint64
	// LowerColumns is the number of result columns of the lower blocks;
	// blocks from UpperStartBlock on have LowerColumns+1.
	LowerColumns    int
	UpperStartBlock uint64
	// Bytes is the size of the solution, BitsPerKey Bytes*8/n.
	Bytes      uint64
	BitsPerKey float64
	// FPR is the expected false-positive rate of this shape (the realised
	// mix of lower and upper columns); TargetFPR what p asked for.
	FPR, TargetFPR float64
}

// Size returns the shape Build gives n distinct keys with parameters p
// when the first seed succeeds (the usual case; a build that has to grow
// is larger by 1/32 per growth). It computes what Build computes and
// allocates nothing.
func Size(n int, p Params) (Sizing, error) {
	fpr, err := p.targetFPR("ribbon: size")
	if err != nil {
		return Sizing{}, err
	}
	if n < 0 || uint64(n) > MaxKeys {
		return Sizing{}, fmt.Errorf("ribbon: size: %d keys: %w", n, bloomery.ErrInvalidParams)
	}
	s := Sizing{TargetFPR: fpr}
	if n == 0 {
		s.LowerColumns, _ = columnsFor(fpr)
		return s, nil
	}
	l := newLayout(slotsFor(n), fpr)
	s.Slots, s.Blocks = l.numBlocks*128, l.numBlocks
	s.LowerColumns, s.UpperStartBlock = l.lower, l.upperStart
	s.Bytes = 8 * l.words()
	s.BitsPerKey = float64(8*s.Bytes) / float64(n)
	s.FPR = l.fpr()
	return s, nil
}
