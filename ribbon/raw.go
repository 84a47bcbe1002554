package ribbon

import (
	"encoding/binary"
	"math/bits"

	"github.com/bloomery/bloomery/hashing"
)

// This file exposes a built filter's solution as raw bytes and queries it
// in place, for engines that store the filter inside their own files (the
// Pebble adapter keeps it in an sstable's filter block and gets it back as
// a slice of a cache buffer): no decode, no copy, no allocation.
//
// The raw form is the interleaved solution (see the package doc): word i
// at bytes [8i, 8i+8), little-endian. Its shape is a RawLayout, which the
// caller stores next to it.

// RawLayout is everything a query needs besides the solution words.
type RawLayout struct {
	// Blocks is the number of 128-slot blocks (Slots/128).
	Blocks uint64
	// LowerColumns is the number of result columns of blocks below
	// UpperStart; blocks from UpperStart on have one more.
	LowerColumns int
	UpperStart   uint64
	// Seed is the banding seed (Filter.Seed).
	Seed uint32
}

// RawLayout returns f's shape for MayContainRaw.
func (f *Filter) RawLayout() RawLayout {
	return RawLayout{Blocks: f.l.numBlocks, LowerColumns: f.l.lower, UpperStart: f.l.upperStart, Seed: f.seed}
}

// AppendRaw appends f's solution words, little-endian, to dst: 8*Words()
// bytes, to be queried with MayContainRaw and f.RawLayout().
func (f *Filter) AppendRaw(dst []byte) []byte {
	return f.appendPersisted(dst)
}

// RawSize returns the size in bytes of the raw solution of layout l, or
// 0 and false when l is not a shape a filter can have (no blocks, columns
// outside [1, 31], UpperStart beyond Blocks, or sizes that overflow).
func (l RawLayout) RawSize() (uint64, bool) {
	if l.Blocks == 0 || l.Blocks > MaxKeys || l.LowerColumns < 1 || l.LowerColumns >= maxCols ||
		l.UpperStart > l.Blocks {
		return 0, false
	}
	lay := layout{numBlocks: l.Blocks, lower: l.LowerColumns, upperStart: l.UpperStart}
	return 8 * lay.words(), true
}

// MayContainRaw reports whether a key with hash h (from the filter's
// hasher) may be in the filter whose raw solution is data and whose shape
// is l: false means certainly not. It answers exactly like
// (*Filter).ContainsHash on the filter that produced data and l. When
// len(data) does not match l (RawSize), it answers true, failing open: it
// never panics and never gives a false negative because of bad input. It
// reads one or two blocks, does not allocate and is safe for concurrent
// use (it only reads).
func MayContainRaw(data []byte, l RawLayout, h uint64) bool {
	size, ok := l.RawSize()
	if !ok || uint64(len(data)) != size {
		return true
	}
	lay := layout{numBlocks: l.Blocks, numStarts: l.Blocks*128 - 127, lower: l.LowerColumns, upperStart: l.UpperStart}
	x := remix(h, l.Seed)
	s := hashing.Reduce(x, lay.numStarts)
	blk := s >> 7
	cols := uint64(lay.cols(blk))
	off := 8 * lay.offset(blk)
	next := off
	if s&127 != 0 {
		next += 16 * cols
	}
	cur := data[off : off+16*cols : off+16*cols]
	nxt := data[next : next+16*cols : next+16*cols]
	lo, hi, r := row(x)
	a0, a1, b0, b1 := shift128(lo, hi, uint(s&127))
	le := binary.LittleEndian
	for j := uint64(0); j < cols; j++ {
		c, n := cur[16*j:16*j+16], nxt[16*j:16*j+16]
		w := le.Uint64(c)&a0 ^ le.Uint64(c[8:])&a1 ^ le.Uint64(n)&b0 ^ le.Uint64(n[8:])&b1
		if (uint32(bits.OnesCount64(w))^r)&1 != 0 {
			return false
		}
		r >>= 1
	}
	return true
}
