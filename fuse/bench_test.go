package fuse

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// benchSizes returns the key counts to benchmark: 10^6, plus the sizes in
// $BLOOMERY_BENCH_N (comma-free, one number, e.g. 100000000) when set, so
// that the n=10^8 figures can be reproduced without making every
// benchmark run allocate gigabytes.
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

type benchVariant struct {
	name  string
	build func(b *testing.B, hs []uint64) (contains func(uint64) bool, batch func([]uint64, []bool), size int)
}

func variant[T Fingerprint](name string, arity int) benchVariant {
	return benchVariant{name, func(b *testing.B, hs []uint64) (func(uint64) bool, func([]uint64, []bool), int) {
		f, err := Build[T](hs, Params{Arity: arity})
		if err != nil {
			b.Fatal(err)
		}
		return f.ContainsHash, f.ContainsBatch, f.SizeBytes()
	}}
}

var benchVariants = []benchVariant{
	variant[uint8]("fuse8", 3),
	variant[uint8]("fuse8-4", 4),
	variant[uint16]("fuse16", 3),
	variant[uint16]("fuse16-4", 4),
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes() {
		hs := filtertest.Hashes(n, 1)
		for _, arity := range []int{3, 4} {
			b.Run(fmt.Sprintf("fuse8/arity=%d/n=%s", arity, nName(n)), func(b *testing.B) {
				var bld Builder[uint8]
				var f *Filter[uint8]
				for b.Loop() {
					var err error
					f, err = bld.Build(hs, Params{Arity: arity})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
				b.ReportMetric(float64(f.SizeBytes())*8/float64(n), "bits/key")
			})
		}
	}
}

// sink keeps benchmark results alive.
var sink int

func BenchmarkContains(b *testing.B) {
	for _, n := range benchSizes() {
		hs := filtertest.Hashes(n, 1)
		probes := filtertest.Hashes(1<<20, 2)
		for _, v := range benchVariants {
			contains, _, _ := v.build(b, hs)
			for _, kind := range []string{"positive", "negative"} {
				qs := probes
				if kind == "positive" {
					qs = hs[:1<<19]
				}
				b.Run(fmt.Sprintf("%s/n=%s/%s", v.name, nName(n), kind), func(b *testing.B) {
					hits := 0
					i := 0
					for b.Loop() {
						if contains(qs[i&(len(qs)-1)]) {
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
}

func BenchmarkContainsBatch(b *testing.B) {
	const batch = 4096
	for _, n := range benchSizes() {
		hs := filtertest.Hashes(n, 1)
		probes := filtertest.Hashes(1<<20, 2)
		out := make([]bool, batch)
		for _, v := range benchVariants {
			_, containsBatch, _ := v.build(b, hs)
			b.Run(fmt.Sprintf("%s/n=%s/negative", v.name, nName(n)), func(b *testing.B) {
				i := 0
				for b.Loop() {
					containsBatch(probes[i:i+batch], out)
					i = (i + batch) & (len(probes) - 1)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/key")
			})
		}
	}
}
