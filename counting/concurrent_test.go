package counting

import (
	"fmt"
	"sync"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// Writers add and delete their own keys while readers query keys whose
// adds have completed; run with -race. Afterwards the filter must equal,
// counter for counter, a sequential filter given the same net adds.
func TestConcurrent(t *testing.T) {
	for _, p := range []Params{{FPR: 0.01}, {FPR: 0.01, Blocked: true}, {FPR: 0.05, CounterBits: 8}} {
		t.Run(name(p), func(t *testing.T) {
			const workers = 4
			per := sizeN(50_000, 10_000)
			if filtertest.RaceEnabled { // every memory access instrumented
				per = 20_000
			}
			p.Capacity = workers * per
			p.Concurrent = true
			f := mustNew(t, p)
			if !f.Concurrent() {
				t.Fatal("Params.Concurrent ignored")
			}
			keys := make([][]uint64, workers)
			for w := range keys {
				keys[w] = filtertest.Hashes(per, uint64(100+w))
			}
			hot := filtertest.Hashes(8, 999) // shared keys, driven to saturation
			var wg sync.WaitGroup
			errs := make(chan error, 2*workers)
			for w := 0; w < workers; w++ {
				wg.Add(2)
				go func(ks []uint64) { // writer
					defer wg.Done()
					for i, h := range ks {
						f.AddHash(h)
						f.AddHash(hot[i%len(hot)])
						if i%3 == 0 {
							// add then delete an extra copy
							f.AddHash(h)
							if !f.DeleteHash(h) {
								errs <- fmt.Errorf("delete of a just-added key refused")
								return
							}
						}
					}
				}(keys[w])
				go func(ks []uint64) { // reader: keys of its writer, after they are added
					defer wg.Done()
					for i := 0; i < len(ks); i += 7 {
						for _, h := range hot {
							f.ContainsHash(h)
						}
						f.CountHash(ks[i])
					}
				}(keys[w])
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for w := range keys {
				filtertest.NoFalseNegatives(t, fmt.Sprintf("worker %d", w), f.ContainsHash, keys[w])
			}
			filtertest.NoFalseNegatives(t, "hot", f.ContainsHash, hot)
			checkTallies(t, f)
			if want := workers * per * 2; f.Len() != want {
				t.Errorf("Len %d, want %d", f.Len(), want)
			}
			// The same net operations, sequentially.
			q := p
			q.Concurrent = false
			g := mustNew(t, q)
			for w := range keys {
				for i, h := range keys[w] {
					g.AddHash(h)
					g.AddHash(hot[i%len(hot)])
				}
			}
			for i := uint64(0); i < f.m; i++ {
				if a, b := f.get(i), g.get(i); a != b {
					// Only a saturated counter may differ (the order of
					// a delete and the saturation matters).
					if a != f.cmax && b != g.cmax {
						t.Fatalf("counter %d: concurrent %d, sequential %d", i, a, b)
					}
				}
			}
		})
	}
}
