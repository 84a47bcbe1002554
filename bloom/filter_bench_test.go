package bloom

import (
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// BenchmarkFilterMethodValue measures the standard filter the way the
// bench module's harness calls it: through method values (f.AddHash,
// f.ContainsHash) over a contiguous slice of hashes, so the compiler may
// inline the method into the value's wrapper, as it does for callers that
// hold a *Filter. Sizes as benchN (BLOOMERY_BENCH_N=10000000 or 100000000
// for filters far larger than the cache); 1% FPR (k=7), as the harness.
func BenchmarkFilterMethodValue(b *testing.B) {
	n := benchN(b)
	keys := filtertest.Hashes(n, 21)
	b.Run(fmt.Sprintf("add/n=%d", n), func(b *testing.B) {
		f, err := NewForCapacity(n, 0.01)
		if err != nil {
			b.Fatal(err)
		}
		add := f.AddHash
		i := 0
		for b.Loop() {
			if i == len(keys) {
				f.Reset()
				i = 0
			}
			add(keys[i])
			i++
		}
	})
	f, err := NewForCapacity(n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range keys {
		f.AddHash(h)
	}
	q := min(n, probeRing)
	present := make([]uint64, q)
	s := filtertest.SplitMix64(5)
	for i := range present {
		present[i] = keys[s.Next()%uint64(n)]
	}
	absent := filtertest.Hashes(q, 22)
	contains := f.ContainsHash
	for _, c := range []struct {
		name string
		hs   []uint64
	}{{"positive", present}, {"negative", absent}} {
		b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
			i, hits := 0, 0
			for b.Loop() {
				if contains(c.hs[i]) {
					hits++
				}
				if i++; i == len(c.hs) {
					i = 0
				}
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hit-rate")
		})
	}
}
