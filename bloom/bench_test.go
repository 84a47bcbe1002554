package bloom

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"unsafe"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// benchN is the number of keys of the benchmark filters: 10^6 by default,
// BLOOMERY_BENCH_N=100000000 for filters far larger than the cache (about
// 120 MB at 10 bits/key), where queries are dominated by DRAM misses.
func benchN(b *testing.B) int {
	if s := os.Getenv("BLOOMERY_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("BLOOMERY_BENCH_N=%q", s)
		}
		return n
	}
	return 1_000_000
}

// probeRing is the number of distinct query hashes a benchmark cycles
// through (large enough that the queried lines of a big
// filter are not cached).
const probeRing = 1 << 20

type benchFilter interface {
	AddHash(uint64) bool
	ContainsHash(uint64) bool
}

// benchFilters builds a filled standard and blocked filter of n keys at
// 10 bits/key, inserting n hashes from seed 1 (generated on the fly).
func benchFilters(b *testing.B, n int) map[string]benchFilter {
	f, err := New(Params{Capacity: n, BitsPerKey: 10})
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewBlocked(Params{Capacity: n, BitsPerKey: 10})
	if err != nil {
		b.Fatal(err)
	}
	s := filtertest.SplitMix64(1 * 0x2545f4914f6cdd1d) // = filtertest.Hashes(n, 1)
	buf := make([]uint64, 0, 4096)
	for i := 0; i < n; i++ {
		h := s.Next()
		f.AddHash(h)
		buf = append(buf, h)
		if len(buf) == cap(buf) || i == n-1 {
			g.AddBatch(buf)
			buf = buf[:0]
		}
	}
	return map[string]benchFilter{"standard": f, "blocked": g}
}

var cached struct {
	n       int
	filters map[string]benchFilter
}

func filtersFor(b *testing.B) (int, map[string]benchFilter) {
	n := benchN(b)
	if cached.n != n {
		cached.filters, cached.n = nil, 0
		cached.filters = benchFilters(b, n)
		cached.n = n
	}
	return n, cached.filters
}

func reportPerKey(b *testing.B, keys int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/key")
}

func BenchmarkAddHash(b *testing.B) {
	n := benchN(b)
	hs := filtertest.Hashes(min(n, probeRing), 3)
	for _, kind := range []string{"standard", "blocked"} {
		b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
			var f benchFilter
			if kind == "standard" {
				f, _ = New(Params{Capacity: n, BitsPerKey: 10})
			} else {
				f, _ = NewBlocked(Params{Capacity: n, BitsPerKey: 10})
			}
			i := 0
			for b.Loop() {
				f.AddHash(hs[i&(len(hs)-1)])
				i++
			}
			reportPerKey(b, i)
		})
	}
}

func BenchmarkAddBatch(b *testing.B) {
	n := benchN(b)
	hs := filtertest.Hashes(min(n, probeRing), 3)
	f, _ := NewBlocked(Params{Capacity: n, BitsPerKey: 10})
	b.Run(fmt.Sprintf("blocked/n=%d", n), func(b *testing.B) {
		keys := 0
		for b.Loop() {
			f.AddBatch(hs)
			keys += len(hs)
		}
		reportPerKey(b, keys)
	})
}

func BenchmarkAddKey(b *testing.B) {
	keys := filtertest.Keys(1<<16, 4)
	f, _ := New(Params{Capacity: 1 << 16, BitsPerKey: 10})
	g, _ := NewBlocked(Params{Capacity: 1 << 16, BitsPerKey: 10})
	for name, x := range map[string]interface{ Add([]byte) bool }{"standard": f, "blocked": g} {
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				x.Add(keys[i&(len(keys)-1)])
				i++
			}
			reportPerKey(b, i)
		})
	}
}

func BenchmarkContainsHash(b *testing.B) {
	n, filters := filtersFor(b)
	present := filtertest.Hashes(min(n, probeRing), 1)
	absent := filtertest.Hashes(probeRing, 2)
	for _, kind := range []string{"standard", "blocked"} {
		f := filters[kind]
		for _, q := range []struct {
			name   string
			hashes []uint64
		}{{"positive", present}, {"negative", absent}} {
			hs := q.hashes
			b.Run(fmt.Sprintf("%s/%s/n=%d", kind, q.name, n), func(b *testing.B) {
				i, j, hits := 0, 0, 0
				for b.Loop() {
					if f.ContainsHash(hs[j]) {
						hits++
					}
					i++
					if j++; j == len(hs) {
						j = 0
					}
				}
				reportPerKey(b, i)
				b.ReportMetric(float64(hits)/float64(i), "hit-rate")
			})
		}
	}
}

func BenchmarkContainsBatch(b *testing.B) {
	n, filters := filtersFor(b)
	f := filters["blocked"].(*Blocked)
	for _, q := range []struct {
		name string
		seed uint64
	}{{"positive", 1}, {"negative", 2}} {
		hs := filtertest.Hashes(min(n, probeRing), q.seed)
		out := make([]bool, len(hs))
		b.Run(fmt.Sprintf("blocked/%s/n=%d", q.name, n), func(b *testing.B) {
			keys := 0
			for b.Loop() {
				f.ContainsBatch(hs, out)
				keys += len(hs)
			}
			reportPerKey(b, keys)
		})
	}
}

// BenchmarkContainsBatchLoops times ContainsBatch's assembly loops that
// this CPU runs (scalar, avx512) and the Go pipeline on absent keys in
// chunks of 1024, as a caller batching requests would pass them:
//
//	BLOOMERY_BENCH_N=100000000 go test -run x -bench ContainsBatchLoops -count 5 ./bloom
func BenchmarkContainsBatchLoops(b *testing.B) {
	n, filters := filtersFor(b)
	f := filters["blocked"].(*Blocked)
	hs := filtertest.Hashes(probeRing, 2)
	out := make([]bool, 1024)
	loops := append([]batchLoop{{"go", func(_ unsafe.Pointer, _ uint64, h *uint64, o *bool, n, _, _ int) {
		f.containsBatchGo(unsafe.Slice(h, n), unsafe.Slice(o, n))
	}}}, batchLoops()...)
	for _, l := range loops {
		b.Run(fmt.Sprintf("%s/n=%d", l.name, n), func(b *testing.B) {
			keys, j := 0, 0
			for b.Loop() {
				l.fn(unsafe.Pointer(&f.words[0]), f.blocks, &hs[j], &out[0], len(out), f.k, asmBatchAhead)
				keys += len(out)
				if j += len(out); j == len(hs) {
					j = 0
				}
			}
			reportPerKey(b, keys)
		})
	}
}
