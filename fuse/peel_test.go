package fuse

import (
	"math"
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestQueuePeel checks the queue-order peel used for large arrays against
// the depth-first one on the same 10^6-key graphs (one duplicate pair
// included), for both arities: each peels every distinct key (the same
// set, in another order), and the filter assigned from each order has no
// false negatives and the 2^-8 false-positive rate. A queue too small for
// the walk must hand over to the depth-first peel and still peel
// everything.
func TestQueuePeel(t *testing.T) {
	n := size(1_000_000, 100_000)
	if filtertest.RaceEnabled {
		n = 100_000 // the race detector makes the 10^6-key walks slow
	}
	hs := filtertest.Hashes(n, 21)
	hs = append(hs, hs[4321])
	for _, arity := range []int{3, 4} {
		g := newGeometry(arity, len(hs))
		var graph Builder[uint8]
		var seed uint64
		var dups int
		for attempt := uint64(0); ; attempt++ {
			seed = hashing.Mix64(1000 + attempt)
			graph.order = make([]uint64, len(hs))
			graph.count = make([]uint8, g.cells)
			graph.xors = make([]uint64, g.cells)
			bySegment(hs, seed, g.segCount, make([]uint32, g.segCount), graph.order)
			var ok bool
			if arity == 3 {
				dups, ok = add3(graph.order, graph.count, graph.xors, g.span, g.segLen)
			} else {
				dups, ok = add4(graph.order, graph.count, graph.xors, g.span, g.segLen)
			}
			if !ok {
				t.Fatal("add failed")
			}
			// Depth first on a copy, to find a seed that peels.
			var b Builder[uint8]
			b.count, b.xors = slices.Clone(graph.count), slices.Clone(graph.xors)
			b.order, b.which = make([]uint64, len(hs)), make([]uint8, len(hs))
			if b.peel(g, 0)+dups == len(hs) {
				break
			}
			if attempt == 10 {
				t.Fatal("no peelable seed in 10 attempts")
			}
		}
		if dups != 1 {
			t.Fatalf("arity %d: %d duplicates, want 1", arity, dups)
		}
		var sets [][]uint64
		for _, ringLen := range []int{0, minRing, 2 * peelLag} {
			var b Builder[uint8]
			b.count, b.xors = slices.Clone(graph.count), slices.Clone(graph.xors)
			b.order, b.which = make([]uint64, len(hs)), make([]uint8, len(hs))
			if ringLen == 2*peelLag {
				// The small queue must really overflow.
				ring := make([]uint32, ringLen)
				var done bool
				c, x := slices.Clone(graph.count), slices.Clone(graph.xors)
				if arity == 3 {
					_, done = peel3Queue(c, x, b.order, b.which, ring, g.span, g.segLen)
				} else {
					_, done = peel4Queue(c, x, b.order, b.which, ring, g.span, g.segLen)
				}
				if done {
					t.Fatalf("arity %d: a queue of %d cells did not overflow", arity, ringLen)
				}
			}
			peeled := b.peel(g, ringLen)
			if peeled+dups != len(hs) {
				t.Fatalf("arity %d, queue %d: peeled %d of %d distinct keys", arity, ringLen, peeled, len(hs)-dups)
			}
			for c := range b.count {
				if b.count[c] != 0 || b.xors[c] != 0 {
					t.Fatalf("arity %d, queue %d: cell %d not empty after peeling", arity, ringLen, c)
				}
			}
			f := &Filter[uint8]{seed: seed, geo: g, probe: arity, n: peeled, fps: b.assign(g, peeled)}
			filtertest.NoFalseNegatives(t, "queue peel", f.ContainsHash, hs)
			probes := size(1_000_000, 200_000)
			got := filtertest.MeasureFPR(f.ContainsHash, probes, 78)
			filtertest.CheckFPR(t, "queue peel", got, math.Ldexp(1, -8), 0.15, probes)
			set := slices.Clone(b.order[:peeled])
			slices.Sort(set)
			sets = append(sets, set)
		}
		for i := 1; i < len(sets); i++ {
			if !slices.Equal(sets[i], sets[0]) {
				t.Fatalf("arity %d: the peels removed different keys", arity)
			}
		}
	}
}

// TestBuildQueuePeel builds filters large enough to be peeled in queue
// order and checks them for false negatives, before and after a
// marshal/unmarshal round trip.
func TestBuildQueuePeel(t *testing.T) {
	if filtertest.Short() || filtertest.RaceEnabled {
		t.Skip("2*10^6 keys")
	}
	n := 2_000_000
	hs := filtertest.Hashes(n, 22)
	for _, arity := range []int{3, 4} {
		if g := newGeometry(arity, n); g.cells < fifoMinCells {
			t.Fatalf("arity %d: %d cells, below fifoMinCells", arity, g.cells)
		}
		f, err := Build[uint8](hs, Params{Arity: arity})
		if err != nil {
			t.Fatal(err)
		}
		filtertest.NoFalseNegatives(t, "queue-peeled build", f.ContainsHash, hs)
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		g, err := Decode[uint8](data, hashing.Expect{})
		if err != nil {
			t.Fatal(err)
		}
		filtertest.NoFalseNegatives(t, "queue-peeled build, decoded", g.ContainsHash, hs)
	}
}
