package fuse

import (
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestSingles checks the eight-at-a-time count test against one for every
// byte value in every position, with the other bytes set to values that
// do and do not say one key.
func TestSingles(t *testing.T) {
	for _, fill := range []uint8{0, 4, 5, 7, 8, 0x84, 0xff} {
		for pos := range 8 {
			for v := range 256 {
				var w uint64
				for j := range 8 {
					b := fill
					if j == pos {
						b = uint8(v)
					}
					w |= uint64(b) << (8 * j)
				}
				got := singles(w)
				for j := range 8 {
					if want := one(uint8(w >> (8 * j))); int(got>>(8*j+7)&1) != want {
						t.Fatalf("singles(%#016x) byte %d: bit %d, want %d", w, j, got>>(8*j+7)&1, want)
					}
				}
				if got&^0x8080808080808080 != 0 {
					t.Fatalf("singles(%#016x) = %#x has bits outside bit 7 of each byte", w, got)
				}
			}
		}
	}
}

// refQueuePeel is the queue peel as it was before the word-at-a-time scan
// and the prefetches: one cell per scan step. Both arities.
func refQueuePeel(arity int, count []uint8, xors, order []uint64, which []uint8, ring []uint32, g geometry) (peeled int, ok bool) {
	mask, room := uint64(len(ring)-1), uint64(len(ring)-arity)
	var head, tail uint64
	lag := uint64(peelLag)
	for i, ci := range count {
		ring[tail&mask] = uint32(i)
		tail += uint64(one(ci))
		if i == len(count)-1 {
			lag = 0
		}
		for tail-head > lag {
			if tail-head > room {
				return peeled, false
			}
			c := ring[head&mask]
			head++
			cc := count[c]
			if cc&^3 != 4 {
				continue
			}
			x := xors[c]
			order[peeled] = x
			which[peeled] = cc & 3
			peeled++
			p := positionsOf(g, arity, x)
			for j, h := range p {
				xors[h] ^= x
				cj := (count[h] - 4) ^ uint8(j)
				count[h] = cj
				ring[tail&mask] = uint32(h)
				tail += uint64(one(cj))
			}
		}
	}
	return peeled, true
}

// TestAheadSameResult checks that the prefetching add and the
// word-at-a-time, prefetching queue peel give exactly what the plain add
// and the cell-by-cell queue peel give (the counts and XORs after adding,
// the duplicates found, and the peel order with its position indices),
// on graphs of fifoMinCells and more with duplicates, for both arities,
// and with a queue small enough to overflow.
func TestAheadSameResult(t *testing.T) {
	n := size(2_000_000, 200_000)
	if filtertest.RaceEnabled {
		n = 200_000
	}
	hs := filtertest.Hashes(n, 31)
	for i := range 50 {
		hs[i*(n/50)] = hs[i*(n/50)+7]
	}
	for _, arity := range []int{3, 4} {
		g := newGeometry(arity, n)
		if n >= 2_000_000 && g.cells < fifoMinCells {
			t.Fatalf("arity %d: %d cells, below fifoMinCells", arity, g.cells)
		}
		order := make([]uint64, n)
		bySegment(hs, hashing.Mix64(6), g.segCount, make([]uint32, g.segCount), order)
		count, xors := make([]uint8, g.cells), make([]uint64, g.cells)
		var dups int
		var ok bool
		if arity == 3 {
			dups, ok = add3(order, count, xors, g.span, g.segLen)
		} else {
			dups, ok = add4(order, count, xors, g.span, g.segLen)
		}
		count2, xors2 := make([]uint8, g.cells), make([]uint64, g.cells)
		dups2, ok2 := addAhead(arity, order, count2, xors2, g.span, g.segLen)
		if !ok || !ok2 || dups != dups2 || dups == 0 || !slices.Equal(count, count2) || !slices.Equal(xors, xors2) {
			t.Fatalf("arity %d: addAhead gave ok %v dups %d, add ok %v dups %d, or other cells", arity, ok2, dups2, ok, dups)
		}
		for _, ringLen := range []int{2 * int(g.segLen), 2 * peelLag} {
			c1, x1 := slices.Clone(count), slices.Clone(xors)
			o1, w1 := make([]uint64, n), make([]uint8, n)
			p1, done1 := refQueuePeel(arity, c1, x1, o1, w1, make([]uint32, ringLen), g)
			c2, x2 := slices.Clone(count), slices.Clone(xors)
			o2, w2 := make([]uint64, n), make([]uint8, n)
			var p2 int
			var done2 bool
			if arity == 3 {
				p2, done2 = peel3Queue(c2, x2, o2, w2, make([]uint32, ringLen), g.span, g.segLen)
			} else {
				p2, done2 = peel4Queue(c2, x2, o2, w2, make([]uint32, ringLen), g.span, g.segLen)
			}
			if p1 != p2 || done1 != done2 || !slices.Equal(o1, o2) || !slices.Equal(w1, w2) || !slices.Equal(c1, c2) || !slices.Equal(x1, x2) {
				t.Fatalf("arity %d, queue %d: peeled %d (done %v), reference %d (done %v), or another order or graph", arity, ringLen, p2, done2, p1, done1)
			}
			// Duplicates the add missed cannot be peeled (Build then
			// deduplicates), so not every key goes.
			if ringLen > 2*peelLag && (!done1 || p1 < n-n/100) {
				t.Fatalf("arity %d: reference peel got %d of %d keys (done %v)", arity, p1, n-dups, done1)
			}
			if ringLen == 2*peelLag && done1 {
				t.Fatalf("arity %d: a queue of %d cells did not overflow", arity, ringLen)
			}
		}
	}
}
