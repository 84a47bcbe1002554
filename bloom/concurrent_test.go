package bloom

import (
	"sync"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestConcurrentAdd has several goroutines add disjoint shares of 10^6
// keys (single and batch adds) while others query, on one concurrent
// Blocked filter; run it with -race. Afterwards no key may be missing and
// Len must equal the number of adds that reported new.
func TestConcurrentAdd(t *testing.T) {
	t.Parallel()
	n := million()
	f, err := NewBlocked(Params{Capacity: n, FPR: 0.01, Concurrent: true})
	if err != nil {
		t.Fatal(err)
	}
	keys := filtertest.Hashes(n, 51)
	const writers = 4
	var wg sync.WaitGroup
	newCounts := make([]int, writers)
	for w := range writers {
		wg.Go(func() {
			share := keys[w*n/writers : (w+1)*n/writers]
			half := len(share) / 2
			for _, h := range share[:half] {
				if f.AddHash(h) {
					newCounts[w]++
				}
			}
			newCounts[w] += f.AddBatch(share[half:])
			// What this goroutine added is visible to it at once.
			filtertest.NoFalseNegatives(t, "own keys", f.ContainsHash, share[:1000])
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			out := make([]bool, 64)
			probes := filtertest.Hashes(64, 52)
			// Bounded, so the readers overlap the writers without
			// starving them of the two cores.
			for range 5000 {
				select {
				case <-stop:
					return
				default:
				}
				f.ContainsBatch(probes, out)
				f.ContainsHash(probes[0])
				_ = f.Len()
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	filtertest.NoFalseNegatives(t, "concurrent blocked", f.ContainsHash, keys)
	total := 0
	for _, c := range newCounts {
		total += c
	}
	if f.Len() != total {
		t.Errorf("Len %d, adds reported new %d", f.Len(), total)
	}
	if float64(n-total) > 0.01*float64(n) {
		t.Errorf("%d of %d adds reported not new", n-total, n)
	}
	// The concurrent filter holds exactly the bits a sequential one would.
	g, _ := NewBlocked(Params{Capacity: n, FPR: 0.01})
	g.AddBatch(keys)
	if f.FillRatio() != g.FillRatio() {
		t.Errorf("fill %v concurrent, %v sequential", f.FillRatio(), g.FillRatio())
	}
	a, _ := f.MarshalBinary()
	f.SetConcurrent(false)
	if f.FillRatio() != g.FillRatio() {
		t.Errorf("after SetConcurrent(false): fill %v, want %v", f.FillRatio(), g.FillRatio())
	}
	b, _ := f.MarshalBinary()
	if string(a) != string(b) {
		t.Error("encoding depends on the mode")
	}
}
