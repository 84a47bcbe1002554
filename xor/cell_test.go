package xor

import (
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestPositionsInBounds checks the fact ContainsHash relies on when it
// reads cells without bounds checks (cell_unsafe.go): position j of any
// hash lies in block j, so below 3*blockLen, for block lengths from the
// smallest Build makes to the largest Decode accepts.
func TestPositionsInBounds(t *testing.T) {
	xs := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 63, 1<<63 - 1}
	r := uint64(7)
	for range 2000 {
		r += 0x9e3779b97f4a7c15
		xs = append(xs, hashing.Mix64(r))
	}
	for _, blockLen := range []uint64{uint64(Cells(1) / 3), 11, 1000, 1<<20 + 3, 1<<31 - 1, 1 << 40} {
		for _, x := range xs {
			for j, p := range positions(x, blockLen) {
				if p < uint64(j)*blockLen || p >= uint64(j+1)*blockLen {
					t.Fatalf("blockLen %d x %#x: position %d = %d outside block %d", blockLen, x, j, p, j)
				}
			}
		}
	}
}

// TestZeroFilter checks that the zero Filter (no array) answers false
// without reading cells.
func TestZeroFilter(t *testing.T) {
	var f Filter
	for _, h := range []uint64{0, 1, ^uint64(0)} {
		if f.ContainsHash(h) {
			t.Fatalf("zero filter contains %#x", h)
		}
	}
}
