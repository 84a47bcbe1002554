package bloom

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// This file exposes the standard Filter's state and its bit array as raw
// bytes, for owners that persist a filter in their own format or move it
// in chunks (the server's BF.SCANDUMP / BF.LOADCHUNK).
//
// The raw form of a Filter of m bits is m/8 bytes: the words of the bit
// array in order, each little-endian, so bit b of the array is bit b%8 of
// byte b/8. Which bits a key sets depends on the filter's layout (see
// Filter, "Probes"), which an owner persists with the bytes.

// Image is the complete state of a standard Filter, as persisted by its
// container encoding: the bit array as words (bit b is bit b%64 of word
// b/64), the probe count, the design capacity and FPR, the count of adds
// reported new, the hasher and the layout of the probe derivation.
type Image struct {
	Words     []uint64
	K         int
	Capacity  int
	DesignFPR float64
	Count     int
	Hasher    hashing.Hasher
	// Layout is Layout1 or Layout2 (Filter.Layout), never guessed: a zero
	// Layout is refused, since the same words mean different keys in each.
	Layout uint8
}

// Image returns a copy of f's state; O(m/64).
func (f *Filter) Image() Image {
	return Image{
		Words:     append([]uint64(nil), f.words...),
		K:         f.k,
		Capacity:  f.capacity,
		DesignFPR: f.design,
		Count:     f.count,
		Hasher:    f.hasher,
		Layout:    f.layout,
	}
}

// NewFromImage returns a Filter holding img's state. img.Words becomes the
// filter's bit array without a copy: the caller must not use it
// afterwards (pass a copy to keep it). A zero DesignFPR is computed from
// the size with fpmath.StandardFPR, as New does. Invalid images (no words,
// more than MaxBytes, k outside [1, MaxHashFuncs], a non-positive
// capacity, a negative count, a design FPR outside (0, 1]) return an error
// wrapping bloomery.ErrInvalidParams. It counts the set bits (O(m/64)).
func NewFromImage(img Image) (*Filter, error) {
	const ctx = "bloom: from image"
	n := uint64(len(img.Words))
	switch {
	case n == 0 || n*8 > MaxBytes:
		return nil, fmt.Errorf("%s: %d words is not a positive size within %d bytes: %w", ctx, n, uint64(MaxBytes), bloomery.ErrInvalidParams)
	case !layoutOK(bloomery.KindBloom, img.Layout):
		return nil, fmt.Errorf("%s: layout %d is not %d or %d: %w", ctx, img.Layout, Layout1, Layout2, bloomery.ErrInvalidParams)
	case img.K < 1 || img.K > MaxHashFuncs:
		return nil, fmt.Errorf("%s: k=%d outside [1, %d]: %w", ctx, img.K, MaxHashFuncs, bloomery.ErrInvalidParams)
	case img.Capacity < 1:
		return nil, fmt.Errorf("%s: capacity %d must be positive: %w", ctx, img.Capacity, bloomery.ErrInvalidParams)
	case img.Count < 0:
		return nil, fmt.Errorf("%s: negative count %d: %w", ctx, img.Count, bloomery.ErrInvalidParams)
	case img.DesignFPR != 0 && !(img.DesignFPR > 0 && img.DesignFPR <= 1):
		return nil, fmt.Errorf("%s: design FPR %v outside (0, 1]: %w", ctx, img.DesignFPR, bloomery.ErrInvalidParams)
	}
	m := n * 64
	design := img.DesignFPR
	if design == 0 {
		design = fpmath.StandardFPR(float64(m), float64(img.Capacity), img.K)
	}
	f := &Filter{
		words:    img.Words,
		m:        m,
		k:        img.K,
		capacity: img.Capacity,
		design:   design,
		count:    img.Count,
		ones:     popcount(img.Words),
		hasher:   img.Hasher,
		inline:   inlineHashOf(img.Hasher),
		layout:   img.Layout,
	}
	f.setProbes()
	return f, nil
}

// RawLen returns the size in bytes of f's raw bit array, m/8.
func (f *Filter) RawLen() uint64 { return f.m / 8 }

// ReadRaw copies the raw bit array from byte offset off into dst and
// returns the number of bytes copied: min(len(dst), RawLen()-off), 0 when
// off >= RawLen(). It does not allocate. Safe for concurrent use with
// other readers.
func (f *Filter) ReadRaw(dst []byte, off uint64) int {
	total := f.RawLen()
	if off >= total {
		return 0
	}
	n := int(min(uint64(len(dst)), total-off))
	var buf [8]byte
	for i := 0; i < n; {
		p := off + uint64(i)
		binary.LittleEndian.PutUint64(buf[:], f.words[p/8])
		c := copy(dst[i:n], buf[p%8:])
		i += c
	}
	return n
}

// WriteRaw overwrites the raw bit array from byte offset off with src,
// keeping the count of set bits (FillRatio) exact; Len is unchanged. A
// range outside the array returns an error wrapping bloomery.ErrCorrupt
// and changes nothing. O(len(src)); it does not allocate. It needs
// exclusive access.
func (f *Filter) WriteRaw(off uint64, src []byte) error {
	total := f.RawLen()
	end := off + uint64(len(src))
	if end < off || end > total {
		return fmt.Errorf("bloom: raw write [%d, +%d) outside the %d-byte array: %w", off, len(src), total, bloomery.ErrCorrupt)
	}
	var buf [8]byte
	for len(src) > 0 {
		w := &f.words[off/8]
		binary.LittleEndian.PutUint64(buf[:], *w)
		c := copy(buf[off%8:], src)
		nw := binary.LittleEndian.Uint64(buf[:])
		f.ones = f.ones - uint64(bits.OnesCount64(*w)) + uint64(bits.OnesCount64(nw))
		*w = nw
		src = src[c:]
		off += uint64(c)
	}
	return nil
}
