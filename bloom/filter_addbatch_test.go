package bloom

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestFilterAddHashBatchEqualsAddHash checks AddHashBatch against AddHash
// key by key on a twin filter, for k from 1 to 40 (both sides of
// addBatchMaxK), on arrays just below and at addBatchMinBytes, over
// batches of lengths around the group size that repeat hashes within and
// across batches and mix in hashes already present: the reports, the
// returned count, Len, the set-bit count and every word must be equal.
func TestFilterAddHashBatchEqualsAddHash(t *testing.T) {
	skipUnderRace(t)
	r := rand.New(rand.NewPCG(11, 3))
	for _, layout := range []uint8{Layout1, Layout2} {
		for _, bytes := range []int{addBatchMinBytes - 64, addBatchMinBytes} {
			for k := 1; k <= 40; k++ {
				m := uint64(bytes * 8)
				seq := newFilter(m, k, int(m)/(2*k)+1, hashing.Hasher{}, layout)
				bat := newFilter(m, k, int(m)/(2*k)+1, hashing.Hasher{}, layout)
				pool := make([]uint64, 400)
				for i := range pool {
					pool[i] = r.Uint64()
				}
				for _, l := range []int{0, 1, 7, 8, 9, 16, 17, 64, 100, 300} {
					hs := make([]uint64, l)
					for i := range hs {
						hs[i] = pool[r.IntN(len(pool))]
					}
					out := make([]bool, l+1)
					for i := range out {
						out[i] = i%2 == 0 // garbage the call must overwrite
					}
					wantN := 0
					want := make([]bool, l)
					for i, h := range hs {
						want[i] = seq.AddHash(h)
						if want[i] {
							wantN++
						}
					}
					got := bat.AddHashBatch(hs, out)
					if got != wantN {
						t.Fatalf("%d bytes k=%d len %d: %d new, AddHash %d", bytes, k, l, got, wantN)
					}
					if out[l] != (l%2 == 0) {
						t.Fatal("AddHashBatch wrote past len(hashes)")
					}
					if !slices.Equal(out[:l], want) {
						t.Fatalf("%d bytes k=%d len %d: reports %v, AddHash %v", bytes, k, l, out[:l], want)
					}
					if bat.Len() != seq.Len() || bat.ones != seq.ones || !slices.Equal(bat.words, seq.words) {
						t.Fatalf("layout %d, %d bytes k=%d len %d: filters differ (Len %d/%d, ones %d/%d)", layout, bytes, k, l, bat.Len(), seq.Len(), bat.ones, seq.ones)
					}
					if n := bat.AddHashBatch(hs, nil); n != 0 {
						t.Fatalf("re-adding a batch reported %d new hashes", n)
					}
					if !slices.Equal(bat.words, seq.words) {
						t.Fatal("re-adding a batch changed the filter")
					}
				}
			}
		}
	}
}

// TestFilterAddHashBatchReports: the per-hash reports equal AddHash's on a
// twin, on a prefetching-size array, including repeats within a batch.
func TestFilterAddHashBatchReports(t *testing.T) {
	skipUnderRace(t)
	const n = 6_000_000 // 10.8 MB at 0.1%: the prefetching path
	seq, err := NewForCapacity(n, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	bat, _ := NewForCapacity(n, 0.001)
	if len(bat.words)*8 < addBatchMinBytes {
		t.Fatalf("array %d bytes does not reach the prefetching path", len(bat.words)*8)
	}
	hs := filtertest.Hashes(n, 8)
	for i := 5; i < len(hs); i += 7 {
		hs[i] = hs[i-3] // repeats within a batch
	}
	out := make([]bool, 100)
	for i := 0; i < len(hs); i += 100 {
		b := hs[i:min(i+100, len(hs))]
		bat.AddHashBatch(b, out)
		for j, h := range b {
			if want := seq.AddHash(h); out[j] != want {
				t.Fatalf("hash %d: batch reported %v, AddHash %v", i+j, out[j], want)
			}
		}
	}
	if !slices.Equal(bat.words, seq.words) || bat.Len() != seq.Len() {
		t.Fatal("filters differ")
	}
	filtertest.NoFalseNegatives(t, "AddHashBatch", bat.ContainsHash, hs)
}

func TestFilterAddHashBatchAllocs(t *testing.T) {
	f, _ := NewForCapacity(10_000, 0.01)    // 12 KB: plain path
	g, _ := NewForCapacity(8_000_000, 0.01) // 9.6 MB: prefetching
	hs := filtertest.Hashes(100, 9)
	out := make([]bool, len(hs))
	filtertest.ZeroAllocs(t, "AddHashBatch", func() {
		f.AddHashBatch(hs, out)
		g.AddHashBatch(hs, out)
		g.AddHashBatch(hs, nil)
	})
}
