package bloom

import (
	"math/bits"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestAddHashPortable checks the assembly AddHash (on amd64) against the
// portable Go loop: the same bits, fill count, Len and "was new" answers,
// for k from 1 to 32 and sizes from one word up, with keys added twice so
// both answers occur. Under -tags purego or off amd64 it compares the Go
// loop with itself and still checks the counts against a popcount.
func TestAddHashPortable(t *testing.T) {
	for _, c := range []struct {
		n   int
		bpk float64
		k   int
	}{{1, 10, 1}, {5, 10, 3}, {1000, 10, 7}, {1000, 3, 32}, {100000, 9.59, 7}, {100000, 20, 14}} {
		a, err := New(Params{Capacity: c.n, BitsPerKey: c.bpk, HashFuncs: c.k})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(Params{Capacity: c.n, BitsPerKey: c.bpk, HashFuncs: c.k})
		hs := filtertest.Hashes(2*c.n, uint64(c.k))
		hs = append(hs, hs[:c.n]...) // repeats: every one must answer "not new"
		for i, h := range hs {
			x, y := a.AddHash(h), addHashGo(b, h)
			if x != y {
				t.Fatalf("n=%d k=%d: add %d answered %v, portable loop %v", c.n, c.k, i, x, y)
			}
			if i >= 2*c.n && x {
				t.Fatalf("n=%d k=%d: repeated key %d reported new", c.n, c.k, i)
			}
		}
		for i := range a.words {
			if a.words[i] != b.words[i] {
				t.Fatalf("n=%d k=%d: word %d is %#x, portable loop gives %#x", c.n, c.k, i, a.words[i], b.words[i])
			}
		}
		var ones uint64
		for _, w := range a.words {
			ones += uint64(bits.OnesCount64(w))
		}
		if a.ones != ones || b.ones != ones || a.count != b.count {
			t.Fatalf("n=%d k=%d: ones %d / %d (popcount %d), count %d / %d", c.n, c.k, a.ones, b.ones, ones, a.count, b.count)
		}
		filtertest.NoFalseNegatives(t, "asm-built filter", a.ContainsHash, hs)
	}
}
