package xor

import (
	"math"
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestQueuePeel checks the queue-order peel used for large arrays against
// the depth-first one on the same graph of 10^6 keys (one duplicate pair
// included): each peels every distinct key (the same set, in another
// order) and leaves every cell empty, and the filter assigned from each
// order has no false negatives and the 2^-8 false-positive rate. A queue
// too small for the walk must overflow and hand over to the depth-first
// peel, which must finish the job.
func TestQueuePeel(t *testing.T) {
	hs := filtertest.Hashes(size(1_000_000, 100_000), 31)
	hs = append(hs, hs[999])
	blockLen := uint64(Cells(len(hs)) / 3)
	cells := int(3 * blockLen)
	var seed uint64
	var dups int
	var order []uint64
	var count []uint8
	var xors []uint64
	for attempt := uint64(0); ; attempt++ {
		seed = hashing.Mix64(500 + attempt)
		order = make([]uint64, len(hs))
		sortByFirst(hs, blockLen, seed, nil, order)
		count, xors = make([]uint8, cells), make([]uint64, cells)
		var ok bool
		if dups, ok = add(order, count, xors, blockLen); !ok {
			t.Fatal("add failed")
		}
		b := &Builder{count: slices.Clone(count), xors: slices.Clone(xors), order: make([]uint64, len(hs)), which: make([]uint8, len(hs))}
		if b.peel(blockLen, 0)+dups == len(hs) {
			break
		}
		if attempt == 10 {
			t.Fatal("no peelable seed in 10 attempts")
		}
	}
	if dups != 1 {
		t.Fatalf("%d duplicates, want 1", dups)
	}
	var sets [][]uint64
	for _, ringLen := range []int{0, queueLen(cells), 2 * peelLag} {
		if ringLen == 2*peelLag {
			c, x := slices.Clone(count), slices.Clone(xors)
			if _, done := peelQueue(c, x, make([]uint64, len(hs)), make([]uint8, len(hs)), make([]uint32, ringLen), blockLen); done {
				t.Fatalf("a queue of %d cells did not overflow", ringLen)
			}
		}
		b := &Builder{count: slices.Clone(count), xors: slices.Clone(xors), order: make([]uint64, len(hs)), which: make([]uint8, len(hs))}
		peeled := b.peel(blockLen, ringLen)
		if peeled+dups != len(hs) {
			t.Fatalf("queue %d: peeled %d of %d distinct keys", ringLen, peeled, len(hs)-dups)
		}
		for c := range b.count {
			if b.count[c] != 0 || b.xors[c] != 0 {
				t.Fatalf("queue %d: cell %d not empty after peeling", ringLen, c)
			}
		}
		f := &Filter{fps: b.assign(blockLen, peeled), seed: seed, blockLen: blockLen, n: peeled}
		filtertest.NoFalseNegatives(t, "queue peel", f.ContainsHash, hs)
		probes := 1_000_000
		got := filtertest.MeasureFPR(f.ContainsHash, probes, 79)
		filtertest.CheckFPR(t, "queue peel", got, math.Ldexp(1, -8), 0.15, probes)
		set := slices.Clone(b.order[:peeled])
		slices.Sort(set)
		sets = append(sets, set)
	}
	for i := 1; i < len(sets); i++ {
		if !slices.Equal(sets[i], sets[0]) {
			t.Fatal("the peels removed different keys")
		}
	}
}
