package ribbon

import (
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

var benchSizes = []int{1_000_000, 10_000_000}

func reportPerKey(b *testing.B, keys int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keys), "ns/key")
}

// BenchmarkBuild builds from hashes with a reused Builder; it also reports
// bits/key (the 1e7 row is the second size).
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			keys := filtertest.Hashes(n, 1)
			var bl Builder
			var f *Filter
			for b.Loop() {
				var err error
				if f, err = bl.Build(keys, Params{FPR: 0.01}); err != nil {
					b.Fatal(err)
				}
			}
			reportPerKey(b, n)
			b.ReportMetric(f.Stats().BitsPerKey, "bits/key")
		})
	}
}

// BenchmarkBuildKeys includes hashing the keys (XXH3).
func BenchmarkBuildKeys(b *testing.B) {
	const n = 1_000_000
	keys := filtertest.Keys(n, 1)
	var bl Builder
	for b.Loop() {
		if _, err := bl.BuildKeys(keys, Params{FPR: 0.01}); err != nil {
			b.Fatal(err)
		}
	}
	reportPerKey(b, n)
}

func benchFilter(b *testing.B, n int) (*Filter, []uint64, []uint64) {
	keys := filtertest.Hashes(n, 1)
	f, err := Build(keys, Params{FPR: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	return f, keys, filtertest.Hashes(1<<16, 2)
}

// BenchmarkContainsHash queries absent keys (the usual case for a filter)
// and present keys one at a time.
func BenchmarkContainsHash(b *testing.B) {
	for _, n := range benchSizes {
		f, keys, absent := benchFilter(b, n)
		present := keys[:1<<16]
		for _, c := range []struct {
			name  string
			probe []uint64
		}{{"absent", absent}, {"present", present}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				hits := 0
				i := 0
				for b.Loop() {
					if f.ContainsHash(c.probe[i&(1<<16-1)]) {
						hits++
					}
					i++
				}
				reportPerKey(b, 1)
				_ = hits
			})
		}
	}
}

// BenchmarkContainsBatch queries absent keys 1024 at a time.
func BenchmarkContainsBatch(b *testing.B) {
	for _, n := range benchSizes {
		f, _, absent := benchFilter(b, n)
		out := make([]bool, 1024)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.ContainsBatch(absent[i:i+1024], out)
				i = (i + 1024) & (1<<16 - 1)
			}
			reportPerKey(b, 1024)
		})
	}
}

// BenchmarkContainsString queries 16-32 byte string keys (filtertest.Keys)
// one at a time through the key path (containsKey: on amd64 with XXH3 the
// hash and the query in one assembly function) and, for comparison, the
// Go hash chain ContainsHash(Hasher().Sum64String(key)). Probe keys are
// stored in one buffer, so fetching a key's bytes is no cache miss of
// its own.
func BenchmarkContainsString(b *testing.B) {
	const n, probes = 1_000_000, 1 << 16
	keys := filtertest.Keys(n, 1)
	f, err := BuildKeys(keys, Params{FPR: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	h := f.Hasher()
	for _, c := range []struct {
		name string
		src  [][]byte
	}{{"absent", filtertest.Keys(probes, 2)}, {"present", keys[:probes]}} {
		var buf []byte
		ends := make([]int, len(c.src))
		for i, k := range c.src {
			buf = append(buf, k...)
			ends[i] = len(buf)
		}
		all := string(buf)
		probe := make([]string, len(c.src))
		for i, e := range ends {
			probe[i] = all[e-len(c.src[i]) : e]
		}
		for _, q := range []struct {
			name string
			fn   func(string) bool
		}{
			{"key", f.ContainsString},
			{"hash", func(k string) bool { return f.ContainsHash(h.Sum64String(k)) }},
		} {
			b.Run(fmt.Sprintf("n=%d/%s/%s", n, c.name, q.name), func(b *testing.B) {
				hits, i := 0, 0
				for b.Loop() {
					if q.fn(probe[i&(probes-1)]) {
						hits++
					}
					i++
				}
				reportPerKey(b, 1)
				if c.name == "present" && hits != i {
					b.Fatalf("%d hits of %d present keys", hits, i)
				}
			})
		}
	}
}
