package xor

import (
	"os"
	"strconv"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// benchSizes returns 10^6 plus $BLOOMERY_BENCH_N when set (e.g. 100000000).
func benchSizes() []int {
	ns := []int{1_000_000}
	if s := os.Getenv("BLOOMERY_BENCH_N"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	return ns
}

func nName(n int) string {
	switch n {
	case 1_000_000:
		return "1e6"
	case 10_000_000:
		return "1e7"
	case 100_000_000:
		return "1e8"
	}
	return strconv.Itoa(n)
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes() {
		hs := filtertest.Hashes(n, 1)
		b.Run("n="+nName(n), func(b *testing.B) {
			var bld Builder
			var f *Filter
			for b.Loop() {
				var err error
				if f, err = bld.Build(hs, Params{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
			b.ReportMetric(float64(f.SizeBytes())*8/float64(n), "bits/key")
		})
	}
}

var sink int

func BenchmarkContains(b *testing.B) {
	for _, n := range benchSizes() {
		hs := filtertest.Hashes(n, 1)
		f, err := Build(hs, Params{})
		if err != nil {
			b.Fatal(err)
		}
		probes := filtertest.Hashes(1<<20, 2)
		for _, kind := range []string{"positive", "negative"} {
			qs := probes
			if kind == "positive" {
				qs = hs[:1<<19]
			}
			b.Run("n="+nName(n)+"/"+kind, func(b *testing.B) {
				hits, i := 0, 0
				for b.Loop() {
					if f.ContainsHash(qs[i&(len(qs)-1)]) {
						hits++
					}
					i++
				}
				sink += hits
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
			})
		}
	}
}

func BenchmarkContainsBatch(b *testing.B) {
	const batch = 4096
	for _, n := range benchSizes() {
		f, err := Build(filtertest.Hashes(n, 1), Params{})
		if err != nil {
			b.Fatal(err)
		}
		probes := filtertest.Hashes(1<<20, 2)
		out := make([]bool, batch)
		b.Run("n="+nName(n)+"/negative", func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.ContainsBatch(probes[i:i+batch], out)
				i = (i + batch) & (len(probes) - 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/key")
		})
	}
}
