package bloom

import (
	"fmt"
	"math/rand/v2"

	"github.com/bloomery/bloomery/hashing"
	"testing"
)

// filledFilter returns a filter for n keys at fpr holding the hashes of
// keys 0..n-1 of a fixed-seed stream, and those hashes.
func filledFilter(t testing.TB, n int, fpr float64, seed uint64) (*Filter, []uint64) {
	t.Helper()
	f, err := NewForCapacity(n, fpr)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = r.Uint64()
		f.AddHash(hs[i])
	}
	return f, hs
}

// lowerBatchMin runs ContainsBatch's pipeline from arrays of min bytes
// until t ends, so that tests reach it without 64 MiB arrays.
func lowerBatchMin(t testing.TB, min int) {
	old := filterBatchMinBytes
	filterBatchMinBytes = min
	t.Cleanup(func() { filterBatchMinBytes = old })
}

// TestFilterContainsBatchEqualsContainsHash checks ContainsBatch against
// ContainsHash for every k from 1 to 40 (both sides of filterBatchMaxK),
// on arrays just below and at filterBatchMinBytes (lowered to 1 MiB), for present keys,
// absent keys and a mix, at batch lengths around the chunk size and the
// pipeline's distances. The
// arrays are filled with random words (each bit set with probability 1/2,
// the design fill) plus 3000 added keys, so absent keys exit at every
// probe position and some of them are false positives.
func TestFilterContainsBatchEqualsContainsHash(t *testing.T) {
	skipUnderRace(t)
	lowerBatchMin(t, 1<<20)
	r := rand.New(rand.NewPCG(7, 7))
	for _, layout := range []uint8{Layout1, Layout2} {
		for _, bytes := range []int{filterBatchMinBytes - 64, filterBatchMinBytes} {
			for k := 1; k <= 40; k++ {
				m := uint64(bytes * 8)
				f := newFilter(m, k, int(m)/(2*k)+1, hashing.Hasher{}, layout)
				if got := len(f.words) * 8; got != bytes {
					t.Fatalf("array %d bytes, want %d", got, bytes)
				}
				for i := range f.words {
					f.words[i] = r.Uint64()
				}
				present := make([]uint64, 3000)
				for i := range present {
					present[i] = r.Uint64()
					f.AddHash(present[i])
				}
				hs := make([]uint64, 0, 2*len(present)+3)
				for _, h := range present {
					hs = append(hs, h, r.Uint64())
				}
				hs = append(hs, r.Uint64(), present[0], r.Uint64())
				out := make([]bool, len(hs)+1)
				fp := 0
				for _, l := range []int{0, 1, 2, 7, 8, 9, 16, 17, 23, 24, 25, 47, 48, 49, 55, 56, 57, 100, len(hs)} {
					for i := range out {
						out[i] = i%3 == 0 // garbage the call must overwrite
					}
					f.ContainsBatch(hs[:l], out)
					for i, h := range hs[:l] {
						want := f.ContainsHash(h)
						if out[i] != want {
							t.Fatalf("layout %d, %d bytes k=%d len %d: out[%d]=%v, ContainsHash %v", layout, bytes, k, l, i, out[i], want)
						}
						if i%2 == 0 && i < 2*len(present) && !want {
							t.Fatalf("%d bytes k=%d: added key %d not found", bytes, k, i/2)
						}
						if l == len(hs) && i%2 == 1 && want {
							fp++
						}
					}
					if out[l] != (l%3 == 0) {
						t.Fatalf("ContainsBatch wrote past len(hashes)")
					}
				}
				if k <= 4 && fp == 0 {
					t.Fatalf("%d bytes k=%d: no false positive among %d absent keys at fill 1/2", bytes, k, len(present))
				}
			}
		}
	}
}

// TestFilterContainsBatchNoFalseNegatives: every one of 10^7 added keys
// answers true through the pipelined path (a 12 MB array at 1%, the
// threshold lowered to 8 MiB), and
// 10^7 absent keys answer ContainsHash's answer, true at the filter's
// estimated FPR within 15%.
func TestFilterContainsBatchNoFalseNegatives(t *testing.T) {
	skipUnderRace(t)
	lowerBatchMin(t, 8<<20)
	const n = 10_000_000
	f, hs := filledFilter(t, n, 0.01, 3)
	if len(f.words)*8 < filterBatchMinBytes {
		t.Fatalf("array %d bytes does not reach the pipelined path", len(f.words)*8)
	}
	out := make([]bool, n)
	f.ContainsBatch(hs, out)
	for i, ok := range out {
		if !ok {
			t.Fatalf("false negative at key %d", i)
		}
	}
	r := rand.New(rand.NewPCG(99, 2))
	for i := range hs {
		hs[i] = r.Uint64()
	}
	f.ContainsBatch(hs, out)
	fp := 0
	for i, ok := range out {
		if ok != f.ContainsHash(hs[i]) {
			t.Fatalf("absent key %d: batch %v", i, ok)
		}
		if ok {
			fp++
		}
	}
	want := f.EstimatedFPR() * n
	if got := float64(fp); got < 0.85*want || got > 1.15*want {
		t.Fatalf("%d false positives in %d, theory %.0f", fp, n, want)
	}
}

func TestFilterContainsBatchAllocs(t *testing.T) {
	lowerBatchMin(t, 8<<20)
	f, hs := filledFilter(t, 200_000, 0.001, 5)   // 351 KB: plain path
	g, gs := filledFilter(t, 10_000_000, 0.01, 5) // 12 MB: pipeline (threshold lowered)
	out := make([]bool, 100)
	if a := testing.AllocsPerRun(10, func() {
		f.ContainsBatch(hs[:100], out)
		g.ContainsBatch(gs[:100], out)
		g.ContainsBatch(nil, out)
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// queryKind is a benchmark's query set: absent or present hashes.
type queryKind struct {
	name string
	hs   []uint64
}

// queryKinds returns n random (absent) hashes and n hashes drawn from the
// added ones (present), from seed.
func queryKinds(added []uint64, n int, seed uint64) []queryKind {
	r := rand.New(rand.NewPCG(seed, 1))
	absent, present := make([]uint64, n), make([]uint64, n)
	for i := range absent {
		absent[i] = r.Uint64()
		present[i] = added[r.IntN(len(added))]
	}
	return []queryKind{{"absent", absent}, {"present", present}}
}

// BenchmarkFilterContainsBatch compares ContainsBatch with a ContainsHash
// loop in batches of 100 hashes (a BF.MADD/BF.MEXISTS), absent and
// present keys, at filters for 10^6 (1.2 MB), 3*10^6, 6*10^6 and 10^7
// keys (12 MB) at 1%, and with the pipeline forced (pipe) on the 10^7
// filter, which is below its 64 MiB threshold.
func BenchmarkFilterContainsBatch(b *testing.B) {
	for _, n := range []int{1_000_000, 3_000_000, 6_000_000, 10_000_000} {
		f, hs := filledFilter(b, n, 0.01, 11)
		out := make([]bool, 100)
		for _, kind := range queryKinds(hs, 1<<16, 12) {
			b.Run(fmt.Sprintf("n=%d/%s/loop", n, kind.name), func(b *testing.B) {
				off := 0
				for b.Loop() {
					for i, h := range kind.hs[off : off+100] {
						out[i] = f.ContainsHash(h)
					}
					off = (off + 100) % (1<<16 - 100)
				}
			})
			b.Run(fmt.Sprintf("n=%d/%s/batch", n, kind.name), func(b *testing.B) {
				off := 0
				for b.Loop() {
					f.ContainsBatch(kind.hs[off:off+100], out)
					off = (off + 100) % (1<<16 - 100)
				}
			})
			if n == 10_000_000 {
				b.Run(fmt.Sprintf("n=%d/%s/pipe", n, kind.name), func(b *testing.B) {
					lowerBatchMin(b, 8<<20)
					off := 0
					for b.Loop() {
						f.ContainsBatch(kind.hs[off:off+100], out)
						off = (off + 100) % (1<<16 - 100)
					}
				})
			}
		}
	}
}

// BenchmarkFilterContainsBatchPipeline measures ContainsBatch's pipeline
// (pipe, forced on whatever the array size) against a ContainsHash loop
// (loop) in batches of 1024 hashes, absent and present keys, at benchN
// keys and 1% FPR: BLOOMERY_BENCH_N=100000000 for the 120 MB array the
// pipeline is for, 30000000 and 10000000 for the sizes below its
// threshold (the table in filter_batch.go).
func BenchmarkFilterContainsBatchPipeline(b *testing.B) {
	n := benchN(b)
	f, hs := filledFilter(b, n, 0.01, 13)
	out := make([]bool, 1024)
	for _, kind := range queryKinds(hs, probeRing, 14) {
		for _, pipe := range []bool{false, true} {
			mode := "loop"
			if pipe {
				mode = "pipe"
			}
			b.Run(fmt.Sprintf("n=%d/%s/%s", n, kind.name, mode), func(b *testing.B) {
				if pipe {
					lowerBatchMin(b, 0)
				}
				off := 0
				for b.Loop() {
					part := kind.hs[off : off+1024]
					if pipe {
						f.ContainsBatch(part, out)
					} else {
						for i, h := range part {
							out[i] = f.ContainsHash(h)
						}
					}
					off = (off + 1024) % len(kind.hs)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/key")
			})
		}
	}
}
