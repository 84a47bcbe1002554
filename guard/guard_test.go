package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// store is a fake authoritative store that counts its loads.
type store struct {
	mu    sync.RWMutex
	data  map[string]int
	loads atomic.Int64
	// during, if set, runs inside load after the read (a concurrent
	// writer committing while the load is in flight).
	during func(key []byte)
}

func newStore() *store { return &store{data: map[string]int{}} }

func (s *store) put(k string, v int) {
	s.mu.Lock()
	s.data[k] = v
	s.mu.Unlock()
}

func (s *store) load(_ context.Context, key []byte) (int, bool, error) {
	s.loads.Add(1)
	s.mu.RLock()
	v, ok := s.data[string(key)]
	s.mu.RUnlock()
	if s.during != nil {
		s.during(key)
	}
	return v, ok, nil
}

func newGuard(t testing.TB, n int, fpr float64, cache int) (*Guard[int], *store) {
	t.Helper()
	f, err := bloom.New(bloom.Params{Capacity: n, FPR: fpr})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New[int](f, Options{NegativeCacheSize: cache})
	if err != nil {
		t.Fatal(err)
	}
	return g, newStore()
}

func key(prefix string, i int) []byte { return fmt.Appendf(nil, "%s-%d", prefix, i) }

// TestSavedLoads: present keys are always found; of 10^6 absent lookups
// only the filter's false positives reach the store.
func TestSavedLoads(t *testing.T) {
	const n = 100_000
	probes := 1_000_000
	if filtertest.Short() {
		probes = 200_000
	}
	g, s := newGuard(t, n, 0.01, 0)
	for i := range n {
		s.put(string(key("user", i)), i)
		g.Add(key("user", i))
	}
	ctx := context.Background()
	for i := range n {
		v, ok, err := g.Lookup(ctx, key("user", i), s.load)
		if err != nil || !ok || v != i {
			t.Fatalf("present key %d: %v %v %v", i, v, ok, err)
		}
	}
	s.loads.Store(0)
	for i := range probes {
		if _, ok, _ := g.Lookup(ctx, key("absent", i), s.load); ok {
			t.Fatal("absent key found")
		}
	}
	st := g.Stats()
	loads := s.loads.Load()
	if uint64(loads) != st.FalsePositives || st.Filtered+st.FalsePositives != uint64(probes) {
		t.Fatalf("store loads %d, stats %+v", loads, st)
	}
	measured := float64(loads) / float64(probes)
	filtertest.CheckFPR(t, "wasted loads", measured, g.Report().EstimatedFPR, 0.15, probes)
	r := st.Monitor
	if r.Alert || r.FalsePositives != st.FalsePositives || r.MeasuredFPR != float64(loads)/float64(probes) {
		t.Fatalf("monitor %+v", r)
	}
	t.Logf("%d absent lookups: %d loads (%.3f%%), %d saved", probes, loads, 100*measured, st.SavedLoads)
}

func findFalsePositive(t *testing.T, g *Guard[int]) []byte {
	t.Helper()
	for i := range 1_000_000 {
		k := key("fp", i)
		if g.MayContain(k) {
			return k
		}
	}
	t.Fatal("no false positive found")
	return nil
}

func TestNegativeCacheHotFalsePositive(t *testing.T) {
	g, s := newGuard(t, 1000, 0.05, 16)
	for i := range 1000 {
		s.put(string(key("user", i)), i)
		g.Add(key("user", i))
	}
	hot := findFalsePositive(t, g)
	ctx := context.Background()
	for i := range 100 {
		_, ok, out, err := g.LookupOutcome(ctx, hot, s.load)
		want := CachedAbsent
		if i == 0 {
			want = FalsePositive
		}
		if ok || err != nil || out != want {
			t.Fatalf("lookup %d of the hot false positive: %v %v %v", i, ok, out, err)
		}
	}
	if s.loads.Load() != 1 {
		t.Fatalf("%d loads for one hot false positive, want 1", s.loads.Load())
	}
	if g.MayContain(hot) {
		t.Fatal("MayContain of a cached absent key")
	}
	// The key is created: Add must make it visible at once.
	s.put(string(hot), 7)
	g.Add(hot)
	if v, ok, out, _ := g.LookupOutcome(ctx, hot, s.load); !ok || v != 7 || out != Found {
		t.Fatalf("after Add: %v %v %v", v, ok, out)
	}
	st := g.Stats()
	if st.CachedAbsent != 99 || st.FalsePositives != 1 || st.Found != 1 || st.Monitor.FalsePositives != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAddDuringLoad: a writer commits and calls Add while a lookup's load
// is in flight; the load's "absent" must not be cached.
func TestAddDuringLoad(t *testing.T) {
	g, s := newGuard(t, 1000, 0.05, 16)
	for i := range 1000 {
		s.put(string(key("user", i)), i)
		g.Add(key("user", i))
	}
	hot := findFalsePositive(t, g)
	s.during = func(k []byte) {
		s.during = nil
		s.put(string(k), 42)
		g.Add(k)
	}
	ctx := context.Background()
	if _, ok, out, _ := g.LookupOutcome(ctx, hot, s.load); ok || out != FalsePositive {
		t.Fatalf("racing lookup: %v %v", ok, out)
	}
	if v, ok, _ := g.Lookup(ctx, hot, s.load); !ok || v != 42 {
		t.Fatal("a stale 'absent' was cached across the Add")
	}
	if g.Stats().StaleSkipped != 1 {
		t.Fatalf("stale %d", g.Stats().StaleSkipped)
	}
}

func TestLoadError(t *testing.T) {
	g, _ := newGuard(t, 1000, 0.05, 16)
	g.Add([]byte("k"))
	boom := errors.New("store down")
	_, ok, out, err := g.LookupOutcome(context.Background(), []byte("k"), func(context.Context, []byte) (int, bool, error) {
		return 0, false, boom
	})
	if ok || out != LoadError || !errors.Is(err, boom) {
		t.Fatalf("%v %v %v", ok, out, err)
	}
	if st := g.Stats(); st.LoadErrors != 1 || st.NegativeCacheLen != 0 || st.FalsePositives != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNegCacheEviction(t *testing.T) {
	c := newNegCache(4)
	for i := range 4 {
		c.add(key("k", i))
	}
	c.contains(key("k", 0)) // referenced: survives the next sweep
	c.add(key("k", 4))
	if c.len() != 4 || !c.contains(key("k", 0)) || c.contains(key("k", 1)) || !c.contains(key("k", 4)) {
		t.Fatalf("eviction: len %d", c.len())
	}
	c.remove(key("k", 4))
	c.add(key("k", 5))
	if c.len() != 4 || c.contains(key("k", 4)) || !c.contains(key("k", 5)) {
		t.Fatal("remove/reuse")
	}
	for i := range 1000 {
		c.add(key("x", i))
		if c.len() > 4 {
			t.Fatal("cache over size")
		}
	}
}

func TestConcurrent(t *testing.T) {
	g, s := newGuard(t, 20000, 0.01, 64)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { // writers
			for i := range 2000 {
				k := key(fmt.Sprint("w", w), i)
				s.put(string(k), i)
				g.Add(k)
			}
		})
		wg.Go(func() { // readers of written keys and of absent ones
			for i := range 4000 {
				k := key(fmt.Sprint("w", w), i%2000)
				if v, ok, err := g.Lookup(ctx, k, s.load); err != nil || (ok && v != i%2000) {
					t.Errorf("lookup: %v %v %v", v, ok, err)
				}
				g.Lookup(ctx, key("none", i%100), s.load)
			}
		})
	}
	wg.Go(func() { // monitoring while writers run
		for range 200 {
			_ = g.Stats()
			_ = g.Report()
			g.MayContain(key("none", 1))
		}
	})
	wg.Wait()
	for w := range 4 {
		for i := range 2000 {
			if _, ok, _ := g.Lookup(ctx, key(fmt.Sprint("w", w), i), s.load); !ok {
				t.Fatalf("written key w%d-%d not found after all adds", w, i)
			}
		}
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := New[int](nil, Options{}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatal(err)
	}
	f, _ := bloom.NewForCapacity(10, 0.01)
	if _, err := New[int](f, Options{NegativeCacheSize: -1}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatal(err)
	}
}

func TestLookupFilteredNoAlloc(t *testing.T) {
	g, s := newGuard(t, 1000, 0.01, 16)
	ctx := context.Background()
	k := []byte("definitely-absent-key")
	for g.MayContain(k) {
		k = append(k, 'x')
	}
	filtertest.ZeroAllocs(t, "Lookup (filtered)", func() { g.Lookup(ctx, k, s.load) })
}
