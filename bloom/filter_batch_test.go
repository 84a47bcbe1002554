package bloom

import (
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestFilterContainsBatch checks that the batch query answers exactly as
// ContainsHash, key by key, for probe counts below, at and above the
// early stop after the third (k = 1, 2, 3, 4, 8, 9, 20), on added keys (all true) and on
// absent keys (false positives included), for batch lengths that are
// not multiples of four.
func TestFilterContainsBatch(t *testing.T) {
	const n = 1 << 16
	for _, k := range []int{1, 2, 3, 4, 8, 9, 20} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			f, err := New(Params{Capacity: n, BitsPerKey: 10, HashFuncs: k})
			if err != nil {
				t.Fatal(err)
			}
			added := filtertest.Hashes(n, 7)
			for _, h := range added {
				f.AddHash(h)
			}
			absent := filtertest.Hashes(1<<20, 8)
			out := make([]bool, len(absent))
			for _, l := range []int{0, 1, 3, 4, 5, 7, 8, 9, 63, 1000} {
				f.ContainsBatch(added[:l], out[:l])
				for i := range l {
					if !out[i] {
						t.Fatalf("len %d: added hash %d reported absent", l, i)
					}
				}
			}
			f.ContainsBatch(added, out[:len(added)])
			for i := range added {
				if !out[i] {
					t.Fatalf("added hash %d reported absent", i)
				}
			}
			f.ContainsBatch(absent, out)
			fp := 0
			for i, h := range absent {
				if out[i] != f.ContainsHash(h) {
					t.Fatalf("absent hash %d: batch %v, ContainsHash %v", i, out[i], !out[i])
				}
				if out[i] {
					fp++
				}
			}
			// The batch must agree with the single query on both answers.
			if fp == 0 || fp == len(absent) {
				t.Fatalf("%d false positives of %d: the test does not exercise both answers", fp, len(absent))
			}
		})
	}
}

func TestFilterContainsBatchZeroAllocs(t *testing.T) {
	f, err := NewForCapacity(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	hs := filtertest.Hashes(100, 1)
	out := make([]bool, len(hs))
	if a := testing.AllocsPerRun(100, func() { f.ContainsBatch(hs, out) }); a != 0 {
		t.Fatalf("%v allocations per batch", a)
	}
}

// BenchmarkFilterContainsBatch compares the batch query with a loop of
// ContainsHash on a standard filter of benchN keys at 10 bits/key, half
// the queries of added keys.
func BenchmarkFilterContainsBatch(b *testing.B) {
	n, fs := filtersFor(b)
	f := fs["standard"].(*Filter)
	added := filtertest.Hashes(min(n, probeRing/2), 1)
	qs := append(added, filtertest.Hashes(probeRing/2, 99)...)
	for i := range qs { // interleave present and absent
		j := int(uint64(i) * 0x9e3779b97f4a7c15 % uint64(len(qs)))
		qs[i], qs[j] = qs[j], qs[i]
	}
	out := make([]bool, 100)
	b.Run("loop", func(b *testing.B) {
		i := 0
		for b.Loop() {
			for j := range out {
				out[j] = f.ContainsHash(qs[(i+j)&(len(qs)-1)])
			}
			i += len(out)
		}
		reportPerKey(b, b.N*len(out))
	})
	b.Run("batch", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s := i & (len(qs) - 1)
			f.ContainsBatch(qs[s:s+len(out)], out)
			i += len(out)
			if i&(len(qs)-1) > len(qs)-len(out) {
				i = 0
			}
		}
		reportPerKey(b, b.N*len(out))
	})
}
