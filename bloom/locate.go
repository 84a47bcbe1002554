package bloom

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// BlockedLocate returns where a key with hash h lives in a blocked filter
// of the given number of 512-bit blocks with k probes: its block index,
// hashing.Reduce(h, blocks), and the probe bits inside that block, one
// mask per 64-bit word (mask j covers bits 64j..64j+63 of the block). It
// is exactly the computation of (*Blocked).AddHash and ContainsHash, so an
// external store (redisfilter keeps blocks in Redis) that sets and tests
// these bits holds the same bit array as an in-process Blocked.
//
// blocks must be positive and k in [1, MaxHashFuncs]. It does not
// allocate.
func BlockedLocate(h uint64, blocks uint64, k int) (block uint64, masks [8]uint64) {
	return hashing.Reduce(h, blocks), blockedMasks(h, k)
}

// BlockedImage is the complete state of a Blocked filter, as persisted by
// its container encoding: the bit array as words (block i is Words[8i:8i+8];
// bit b of a block is bit b%64 of word b/64), the probe count, the design
// capacity and FPR, the count of adds reported new, and the hasher.
type BlockedImage struct {
	Words     []uint64
	K         int
	Capacity  int
	DesignFPR float64
	Count     int
	Hasher    hashing.Hasher
}

// Image returns a copy of f's state. The words are copied (atomically
// loaded in concurrent mode); O(m/64).
func (f *Blocked) Image() BlockedImage {
	w := make([]uint64, len(f.words))
	for i := range w {
		w[i] = f.load(i)
	}
	return BlockedImage{
		Words:     w,
		K:         f.k,
		Capacity:  f.capacity,
		DesignFPR: f.design,
		Count:     f.Len(),
		Hasher:    f.hasher,
	}
}

// NewBlockedFromImage returns a Blocked filter holding img's state (the
// words are copied into a fresh, cache-line-aligned array). A zero
// DesignFPR is computed from the capacity with fpmath.BlockedFPR, as
// NewBlocked does. Invalid images (no words, a word count that is not a
// multiple of 8, k outside [1, MaxHashFuncs], a non-positive capacity, a
// negative count, a design FPR outside (0, 1]) return an error wrapping
// bloomery.ErrInvalidParams. The result is not in concurrent mode.
func NewBlockedFromImage(img BlockedImage) (*Blocked, error) {
	const ctx = "bloom: blocked from image"
	n := uint64(len(img.Words))
	switch {
	case n == 0 || n%8 != 0 || n*8 > MaxBytes:
		return nil, fmt.Errorf("%s: %d words is not a positive multiple of 8 within %d bytes: %w", ctx, n, uint64(MaxBytes), bloomery.ErrInvalidParams)
	case img.K < 1 || img.K > MaxHashFuncs:
		return nil, fmt.Errorf("%s: k=%d outside [1, %d]: %w", ctx, img.K, MaxHashFuncs, bloomery.ErrInvalidParams)
	case img.Capacity < 1:
		return nil, fmt.Errorf("%s: capacity %d must be positive: %w", ctx, img.Capacity, bloomery.ErrInvalidParams)
	case img.Count < 0:
		return nil, fmt.Errorf("%s: negative count %d: %w", ctx, img.Count, bloomery.ErrInvalidParams)
	case img.DesignFPR != 0 && !(img.DesignFPR > 0 && img.DesignFPR <= 1):
		return nil, fmt.Errorf("%s: design FPR %v outside (0, 1]: %w", ctx, img.DesignFPR, bloomery.ErrInvalidParams)
	}
	blocks := n / 8
	design := img.DesignFPR
	if design == 0 {
		design = fpmath.BlockedFPR(float64(blocks*BlockBits), float64(img.Capacity), img.K, BlockBits)
	}
	f := &Blocked{
		words:    alignedWords(n),
		blocks:   blocks,
		k:        img.K,
		capacity: img.Capacity,
		design:   design,
		count:    int64(img.Count),
		hasher:   img.Hasher,
		inline:   inlineHashOf(img.Hasher),
	}
	copy(f.words, img.Words)
	f.ones = popcount(f.words)
	return f, nil
}

// BlockedSize returns the number of 512-bit blocks and the probe count k
// that NewBlocked(p) would use, without allocating the bit array (for
// stores that keep the array elsewhere, possibly larger than memory).
// Errors are NewBlocked's.
func BlockedSize(p Params) (blocks uint64, k int, err error) { return blockedSize(p) }
