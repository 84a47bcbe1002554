package fuse

import (
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestPositionsInBounds checks the geometry facts ContainsHash relies on
// when it reads cells without bounds checks (cell_unsafe.go): for every
// segment length the format allows, segment counts from 1 up, and hashes
// at the extremes and at random, position j of a key lies in the j-th
// segment after its first position's, and so below geo.cells.
func TestPositionsInBounds(t *testing.T) {
	xs := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 63, 1<<63 - 1}
	r := uint64(99)
	for range 2000 {
		r += 0x9e3779b97f4a7c15
		xs = append(xs, hashing.Mix64(r))
	}
	for _, arity := range []int{3, 4} {
		for segLog := uint(minSegmentLog); segLog <= maxSegmentLog; segLog++ {
			for _, segCount := range []uint64{1, 2, 3, 7, 100, 12345, 1 << 20} {
				g := makeGeometry(arity, segLog, segCount)
				for _, x := range xs {
					p := positionsOf(g, arity, x)
					seg0 := p[0] >> segLog
					if seg0 >= segCount {
						t.Fatalf("arity %d segLog %d segCount %d x %#x: first position %d outside the first %d segments", arity, segLog, segCount, x, p[0], segCount)
					}
					for j, h := range p {
						if h>>segLog != seg0+uint64(j) || h >= g.cells {
							t.Fatalf("arity %d segLog %d segCount %d x %#x: position %d = %d (segment %d, %d cells)", arity, segLog, segCount, x, j, h, h>>segLog, g.cells)
						}
					}
				}
			}
		}
	}
}

// TestZeroFilter checks that the zero Filter (no fingerprint array, probe
// 0) answers false without reading cells.
func TestZeroFilter(t *testing.T) {
	var f8 Filter[uint8]
	var f16 Filter[uint16]
	for _, h := range []uint64{0, 1, ^uint64(0)} {
		if f8.ContainsHash(h) || f16.ContainsHash(h) {
			t.Fatalf("zero filter contains %#x", h)
		}
	}
}
