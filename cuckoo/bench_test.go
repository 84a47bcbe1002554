package cuckoo

import (
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// BenchmarkContains: queries against a filter at design load (94%).
func BenchmarkContains(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20, 1 << 23} {
		for _, fb := range []int{8, 12, 16} {
			f, _ := New(Params{Capacity: n, FingerprintBits: fb})
			in := filtertest.Hashes(n, 1)
			for _, h := range in {
				f.AddHash(h)
			}
			out := filtertest.Hashes(n, 2)
			for _, c := range []struct {
				name string
				hs   []uint64
			}{{"positive", in}, {"negative", out}} {
				b.Run(fmt.Sprintf("n=%d/f=%d/%s", n, fb, c.name), func(b *testing.B) {
					i, hit := 0, 0
					for b.Loop() {
						if f.ContainsHash(c.hs[i]) {
							hit++
						}
						if i++; i == len(c.hs) {
							i = 0
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
				})
			}
		}
	}
}

// BenchmarkAdd: inserts into a filter filled from empty to design load
// (the cost includes the eviction walks near full load).
func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20, 1 << 23} {
		b.Run(fmt.Sprintf("n=%d/f=12", n), func(b *testing.B) {
			hs := filtertest.Hashes(n, 3)
			f, _ := New(Params{Capacity: n, FingerprintBits: 12})
			i := 0
			for b.Loop() {
				if i == n {
					b.StopTimer()
					f, _ = New(Params{Capacity: n, FingerprintBits: 12})
					i = 0
					b.StartTimer()
				}
				f.AddHash(hs[i])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
		})
	}
}

// BenchmarkAddDelete: one delete and one re-insert at design load.
func BenchmarkAddDelete(b *testing.B) {
	n := 1 << 20
	f, _ := New(Params{Capacity: n, FingerprintBits: 12})
	hs := filtertest.Hashes(n, 4)
	for _, h := range hs {
		f.AddHash(h)
	}
	i := 0
	for b.Loop() {
		f.DeleteHash(hs[i])
		f.AddHash(hs[i])
		if i++; i == n {
			i = 0
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/op")
}

// BenchmarkInsertBatch: the fill of BenchmarkAdd through InsertBatch, in
// calls of 1024 hashes (the prefetch pipeline runs from a 4 MiB table,
// here at n=2^23).
func BenchmarkInsertBatch(b *testing.B) {
	const chunk = 1024
	for _, n := range []int{1 << 16, 1 << 20, 1 << 23} {
		b.Run(fmt.Sprintf("n=%d/f=12", n), func(b *testing.B) {
			hs := filtertest.Hashes(n, 3)
			f, _ := New(Params{Capacity: n, FingerprintBits: 12})
			i := 0
			for b.Loop() {
				if i == n {
					b.StopTimer()
					f, _ = New(Params{Capacity: n, FingerprintBits: 12})
					i = 0
					b.StartTimer()
				}
				if _, err := f.InsertBatch(hs[i:min(n, i+chunk)]); err != nil {
					b.Fatal(err)
				}
				i = min(n, i+chunk)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunk), "ns/key")
		})
	}
}
