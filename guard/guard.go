// Package guard puts a filter in front of an authoritative store so that
// lookups for keys that do not exist cost nothing: the negative-lookup
// guard against cache penetration, and the building block of
// insert-if-absent and dedup paths.
//
// # The contract
//
// The filter is a fast path before the authoritative answer, never the
// authority. [Guard.Lookup] asks the filter; a "no" is final (a filter has
// no false negatives), so the store is not touched. A "maybe" goes to the
// caller's load function, whose answer is returned as is. When load finds
// nothing, the "maybe" was a false positive: the guard reports it to its
// monitor (so the measured FPR and the overfill alert see it) and, if a
// negative cache is configured, remembers the key as absent, so a hot false
// positive costs one load per cache residency instead of one per lookup.
//
// # Keeping the filter and the cache truthful
//
// Every key that can be found in the store must have been added with
// [Guard.Add]. Call Add after the write that makes the key visible has
// committed: between the commit and Add a lookup may answer "absent",
// which is the answer it would have got a moment earlier, before the write.
// Add also drops the key from the negative cache. A load that started
// before an Add and found nothing does not cache its answer (the guard
// counts adds; a load records "absent" only if no Add happened while it
// ran), so a stale "absent" can never outlive the Add that contradicts it.
// Deleting from the store needs nothing: the filter keeps saying "maybe",
// load finds nothing, and the key becomes a cached negative.
//
// # Concurrency and costs
//
// A Guard is safe for concurrent use. Lookups hold a read lock only while
// probing the filter and the cache (one hash, about two cache lines), never
// while load runs; Add takes the write lock. The negative cache holds at
// most Options.NegativeCacheSize keys, exactly (no false answers), evicting
// with CLOCK, the second-chance approximation of LRU: a hit sets a
// reference bit with an atomic store, so concurrent lookups never block
// each other. It is O(1) amortised per operation and copies each cached
// key once.
package guard

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/monitor"
)

// Options configures a Guard.
type Options struct {
	// NegativeCacheSize is the number of keys confirmed absent that the
	// guard remembers (0: no negative cache).
	NegativeCacheSize int
	// DesignFPR is passed to the monitor; zero means the filter's
	// Stats().DesignFPR.
	DesignFPR float64
	// MinNegatives is passed to the monitor (see monitor.Options).
	MinNegatives uint64
}

// LoadFunc reads key from the authoritative store: its value and whether
// it exists. An error is returned to the caller and nothing is recorded.
type LoadFunc[V any] func(ctx context.Context, key []byte) (V, bool, error)

// Guard answers lookups of V values by key in front of a store.
type Guard[V any] struct {
	mu   sync.RWMutex
	f    bloomery.Adder
	mon  *monitor.Filter
	neg  *negCache // nil without a negative cache
	adds atomic.Uint64

	lookups, filtered, cacheHits, loads, found, fps, errs, stale atomic.Uint64
}

// New returns a guard over f, which must already hold every key the store
// holds (build it from the store, or decode a persisted one). The guard
// takes ownership of f: add keys only through the guard.
func New[V any](f bloomery.Adder, o Options) (*Guard[V], error) {
	if f == nil {
		return nil, fmt.Errorf("guard: nil filter: %w", bloomery.ErrInvalidParams)
	}
	if o.NegativeCacheSize < 0 {
		return nil, fmt.Errorf("guard: negative cache size %d: %w", o.NegativeCacheSize, bloomery.ErrInvalidParams)
	}
	mon, err := monitor.New(f, monitor.Options{DesignFPR: o.DesignFPR, MinNegatives: o.MinNegatives})
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	g := &Guard[V]{f: f, mon: mon}
	if o.NegativeCacheSize > 0 {
		g.neg = newNegCache(o.NegativeCacheSize)
	}
	return g, nil
}

// Outcome says how a lookup was answered.
type Outcome uint8

const (
	// Filtered: the filter said no; load was not called.
	Filtered Outcome = iota
	// CachedAbsent: the filter said maybe, the negative cache said absent.
	CachedAbsent
	// Found: load found the key.
	Found
	// FalsePositive: the filter said maybe and load found nothing.
	FalsePositive
	// LoadError: load failed.
	LoadError
)

func (o Outcome) String() string {
	names := [...]string{"filtered", "cached-absent", "found", "false-positive", "load-error"}
	if int(o) < len(names) {
		return names[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Lookup returns key's value and whether it exists, calling load only when
// neither the filter nor the negative cache can answer "absent".
func (g *Guard[V]) Lookup(ctx context.Context, key []byte, load LoadFunc[V]) (V, bool, error) {
	v, ok, _, err := g.LookupOutcome(ctx, key, load)
	return v, ok, err
}

// LookupOutcome is Lookup that also says how the answer was reached.
func (g *Guard[V]) LookupOutcome(ctx context.Context, key []byte, load LoadFunc[V]) (V, bool, Outcome, error) {
	var zero V
	g.lookups.Add(1)
	g.mu.RLock()
	maybe := g.f.Contains(key)
	cached := maybe && g.neg != nil && g.neg.contains(key)
	epoch := g.adds.Load()
	g.mu.RUnlock()
	if !maybe {
		g.filtered.Add(1)
		g.mon.Observe(false, false) // every "no" is a true negative
		return zero, false, Filtered, nil
	}
	if cached {
		// Not reported to the monitor: the miss was counted when it
		// was cached, and a hot key would otherwise swamp the measured
		// FPR of the filter.
		g.cacheHits.Add(1)
		return zero, false, CachedAbsent, nil
	}
	g.loads.Add(1)
	v, ok, err := load(ctx, key)
	if err != nil {
		g.errs.Add(1)
		return zero, false, LoadError, err
	}
	g.mon.Observe(true, ok)
	if ok {
		g.found.Add(1)
		return v, true, Found, nil
	}
	g.fps.Add(1)
	if g.neg != nil {
		g.mu.Lock()
		if g.adds.Load() == epoch {
			g.neg.add(key)
		} else {
			g.stale.Add(1)
		}
		g.mu.Unlock()
	}
	return zero, false, FalsePositive, nil
}

// Add records that key now exists in the store (call it after the write
// committed) and drops it from the negative cache. It reports whether the
// filter took the key as new.
func (g *Guard[V]) Add(key []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.adds.Add(1)
	if g.neg != nil {
		g.neg.remove(key)
	}
	return g.f.Add(key)
}

// MayContain answers from the filter and the negative cache only: false
// means the key is certainly absent from the store (given the contract);
// true means load it to know.
func (g *Guard[V]) MayContain(key []byte) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.f.Contains(key) && (g.neg == nil || !g.neg.contains(key))
}

// Report returns the monitor's report (measured and estimated FPR, alert),
// read under the guard's lock so that it never races with Add.
func (g *Guard[V]) Report() monitor.Report {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.mon.Report()
}

// Stats counts lookups by outcome.
type Stats struct {
	// Lookups is the number of Lookup calls; Filtered, CachedAbsent,
	// Loads, Found, FalsePositives and LoadErrors split them.
	Lookups, Filtered, CachedAbsent, Loads, Found, FalsePositives, LoadErrors uint64
	// StaleSkipped counts "absent" answers not cached because an Add ran
	// during the load.
	StaleSkipped uint64
	// NegativeCacheLen is the number of keys cached as absent.
	NegativeCacheLen int
	// SavedLoads is Filtered + CachedAbsent: lookups answered without the
	// store.
	SavedLoads uint64
	// Monitor is the filter's measured and estimated FPR.
	Monitor monitor.Report
}

// Stats returns a snapshot of the counters.
func (g *Guard[V]) Stats() Stats {
	s := Stats{
		Lookups:      g.lookups.Load(),
		Filtered:     g.filtered.Load(),
		CachedAbsent: g.cacheHits.Load(),
		Loads:        g.loads.Load(),
		Found:        g.found.Load(),
		LoadErrors:   g.errs.Load(),
		StaleSkipped: g.stale.Load(),
	}
	s.FalsePositives = g.fps.Load()
	s.SavedLoads = s.Filtered + s.CachedAbsent
	g.mu.RLock()
	if g.neg != nil {
		s.NegativeCacheLen = g.neg.len()
	}
	s.Monitor = g.mon.Report()
	g.mu.RUnlock()
	return s
}
