// Command cachepenetration shows the negative-lookup guard in front of a
// slow store: most lookups ask for ids that do not exist (a scraper, a bug,
// an attack), and without a filter every one of them costs a store read.
//
// It runs the same lookups twice, straight to the store and through a
// guard.Guard (Bloom filter + negative cache + monitor), and prints the
// store loads, the wall time and the saved loads:
//
//	go run ./examples/cachepenetration
//	go run ./examples/cachepenetration -keys 1000000 -lookups 200000 -absent 0.95 -latency 500us
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/guard"
)

// config is one run's parameters.
type config struct {
	keys      int           // rows in the store
	lookups   int           // lookups issued
	absent    float64       // fraction of lookups for ids that do not exist
	latency   time.Duration // cost of one store read
	workers   int           // concurrent clients
	fpr       float64       // filter's design FPR
	cacheSize int           // negative cache entries
	seed      uint64
}

// store is a slow key-value store that counts its reads.
type store struct {
	rows    map[string]int
	latency time.Duration
	loads   atomic.Int64
}

func (s *store) load(_ context.Context, key []byte) (int, bool, error) {
	s.loads.Add(1)
	time.Sleep(s.latency)
	v, ok := s.rows[string(key)]
	return v, ok, nil
}

// pass is the outcome of running the lookups one way.
type pass struct {
	loads   int64
	found   int64
	elapsed time.Duration
}

// result is what run reports.
type result struct {
	direct, guarded pass
	stats           guard.Stats
	filterBytes     int
}

func userID(i int) []byte { return fmt.Appendf(nil, "user:%d", i) }

// workload returns the ids looked up: a fraction absent of them above the
// store's range.
func workload(c config) [][]byte {
	r := rand.New(rand.NewPCG(c.seed, 1))
	ids := make([][]byte, c.lookups)
	for i := range ids {
		if r.Float64() < c.absent {
			ids[i] = userID(c.keys + r.IntN(10*c.keys))
		} else {
			ids[i] = userID(r.IntN(c.keys))
		}
	}
	return ids
}

// parallel runs fn over ids with c.workers goroutines.
func parallel(workers int, ids [][]byte, fn func(key []byte) bool) (found int64, elapsed time.Duration) {
	var next, hits atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ids)) {
					return
				}
				if fn(ids[i]) {
					hits.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return hits.Load(), time.Since(start)
}

func run(c config) (result, error) {
	s := &store{rows: make(map[string]int, c.keys), latency: c.latency}
	f, err := bloom.New(bloom.Params{Capacity: c.keys, FPR: c.fpr})
	if err != nil {
		return result{}, err
	}
	g, err := guard.New[int](f, guard.Options{NegativeCacheSize: c.cacheSize})
	if err != nil {
		return result{}, err
	}
	for i := range c.keys {
		k := userID(i)
		s.rows[string(k)] = i
		g.Add(k) // after the row is written
	}
	ids := workload(c)
	ctx := context.Background()
	var res result

	found, el := parallel(c.workers, ids, func(k []byte) bool {
		_, ok, _ := s.load(ctx, k)
		return ok
	})
	res.direct = pass{loads: s.loads.Load(), found: found, elapsed: el}

	s.loads.Store(0)
	var errs atomic.Int64
	found, el = parallel(c.workers, ids, func(k []byte) bool {
		_, ok, err := g.Lookup(ctx, k, s.load)
		if err != nil {
			errs.Add(1)
		}
		return ok
	})
	if errs.Load() > 0 {
		return res, fmt.Errorf("%d lookups failed", errs.Load())
	}
	res.guarded = pass{loads: s.loads.Load(), found: found, elapsed: el}
	res.stats = g.Stats()
	res.filterBytes = f.SizeBytes()
	return res, nil
}

func report(w io.Writer, c config, r result) {
	fmt.Fprintf(w, "store: %d rows, %v per read; %d lookups by %d clients, %.0f%% for ids that do not exist\n",
		c.keys, c.latency, c.lookups, c.workers, 100*c.absent)
	fmt.Fprintf(w, "filter: %d bytes (%.1f bits/key) at %.2g design FPR, negative cache %d keys\n\n",
		r.filterBytes, 8*float64(r.filterBytes)/float64(c.keys), c.fpr, c.cacheSize)
	fmt.Fprintf(w, "%-14s %10s %10s %12s\n", "", "found", "loads", "wall time")
	fmt.Fprintf(w, "%-14s %10d %10d %12v\n", "direct", r.direct.found, r.direct.loads, r.direct.elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "%-14s %10d %10d %12v\n", "guarded", r.guarded.found, r.guarded.loads, r.guarded.elapsed.Round(time.Millisecond))
	saved := r.direct.loads - r.guarded.loads
	fmt.Fprintf(w, "\nsaved loads: %d of %d (%.1f%%); filter rejected %d, negative cache answered %d, false positives loaded %d\n",
		saved, r.direct.loads, 100*float64(saved)/float64(max(1, r.direct.loads)),
		r.stats.Filtered, r.stats.CachedAbsent, r.stats.FalsePositives)
	m := r.stats.Monitor
	fmt.Fprintf(w, "measured FPR %.3f%% (estimated %.3f%%, design %.3f%%), alert: %v\n",
		100*m.MeasuredFPR, 100*m.EstimatedFPR, 100*m.DesignFPR, m.Alert)
}

func main() {
	c := config{seed: 1}
	flag.IntVar(&c.keys, "keys", 100_000, "rows in the store")
	flag.IntVar(&c.lookups, "lookups", 100_000, "lookups to issue")
	flag.Float64Var(&c.absent, "absent", 0.9, "fraction of lookups for ids that do not exist")
	flag.DurationVar(&c.latency, "latency", time.Millisecond, "simulated cost of one store read")
	flag.IntVar(&c.workers, "workers", 64, "concurrent clients")
	flag.Float64Var(&c.fpr, "fpr", 0.01, "filter's design false-positive rate")
	flag.IntVar(&c.cacheSize, "cache", 10_000, "negative cache size (0: none)")
	flag.Parse()
	if c.keys < 1 || c.lookups < 1 || c.workers < 1 || !(c.absent >= 0 && c.absent <= 1) || c.cacheSize < 0 {
		fmt.Fprintln(os.Stderr, "cachepenetration: -keys, -lookups and -workers must be positive, -absent in [0, 1], -cache >= 0")
		os.Exit(2)
	}
	r, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cachepenetration:", err)
		os.Exit(1)
	}
	report(os.Stdout, c, r)
}
