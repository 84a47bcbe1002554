package xor

import (
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestPrefetchPathsSameResult checks that the prefetching construction
// phases used on large arrays (addPrefetch, peelPrefetch and assign's
// prefetching loop) give exactly what the plain loops give: the same cell
// counts and XORs, the same peel order and the same fingerprint array.
// Prefetches are hints, so any difference would be a bug in the grouping.
// A duplicate pair exercises the duplicate path of add.
func TestPrefetchPathsSameResult(t *testing.T) {
	n := 900_000 // 1.1 M cells: above prefetchMinCells
	hs := filtertest.Hashes(n, 11)
	hs = append(hs, hs[12345])
	blockLen := uint64(Cells(len(hs)) / 3)
	cells := int(3 * blockLen)
	if cells < prefetchMinCells {
		t.Fatalf("%d cells do not reach prefetchMinCells %d", cells, prefetchMinCells)
	}
	seed := hashing.Mix64(43) // a seed whose graph peels completely
	order := make([]uint64, len(hs))
	sortByFirst(hs, blockLen, seed, nil, order)

	type state struct {
		order  []uint64
		which  []uint8
		count  []uint8
		xors   []uint64
		stack  []uint32
		dups   int
		ok     bool
		peeled int
	}
	run := func(pf bool) state {
		s := state{
			order: slices.Clone(order),
			which: make([]uint8, len(hs)),
			count: make([]uint8, cells),
			xors:  make([]uint64, cells),
			stack: make([]uint32, cells+3),
		}
		if pf {
			s.dups, s.ok = addPrefetch(s.order, s.count, s.xors, blockLen)
		} else {
			s.dups, s.ok = add(s.order, s.count, s.xors, blockLen)
		}
		if !s.ok {
			t.Fatalf("add (prefetch %v) failed", pf)
		}
		if pf {
			s.peeled = peelPrefetch(s.count, s.xors, s.order, s.which, s.stack, blockLen)
		} else {
			s.peeled = peel(s.count, s.xors, s.order, s.which, s.stack, blockLen)
		}
		return s
	}
	plain, pref := run(false), run(true)
	if plain.dups != 1 || pref.dups != 1 {
		t.Errorf("dups: plain %d, prefetch %d, want 1", plain.dups, pref.dups)
	}
	if plain.peeled+plain.dups != len(hs) {
		t.Fatalf("plain peel: %d of %d keys", plain.peeled, len(hs))
	}
	if pref.peeled != plain.peeled || !slices.Equal(pref.order[:pref.peeled], plain.order[:plain.peeled]) ||
		!slices.Equal(pref.which[:pref.peeled], plain.which[:plain.peeled]) {
		t.Fatal("peelPrefetch gives a different peel order than peel")
	}
	if !slices.Equal(pref.count, plain.count) || !slices.Equal(pref.xors, plain.xors) {
		t.Fatal("cells differ after peeling")
	}

	// assign prefetches for arrays of prefetchMinCells and more; compare
	// with the plain reverse loop.
	b := &Builder{order: plain.order, which: plain.which}
	got := b.assign(blockLen, plain.peeled)
	want := make([]uint8, cells)
	for k := plain.peeled - 1; k >= 0; k-- {
		x := plain.order[k]
		p := positions(x, blockLen)
		want[p[plain.which[k]%3]] = fingerprint(x) ^ want[p[0]] ^ want[p[1]] ^ want[p[2]]
	}
	if !slices.Equal(got, want) {
		t.Fatal("assign with prefetching gives a different array")
	}
	f := &Filter{fps: got, seed: seed, blockLen: blockLen, n: plain.peeled}
	for _, h := range hs {
		if !f.ContainsHash(h) {
			t.Fatal("false negative")
		}
	}
}
