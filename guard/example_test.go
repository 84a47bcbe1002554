package guard_test

import (
	"context"
	"fmt"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/guard"
)

// A guard in front of a store: lookups for absent keys are answered by the
// filter, and only the filter's false positives reach the store.
func Example() {
	db := map[string]string{"alice": "admin", "bob": "user"}
	loads := 0
	load := func(_ context.Context, key []byte) (string, bool, error) {
		loads++
		v, ok := db[string(key)]
		return v, ok, nil
	}

	f, _ := bloom.New(bloom.Params{Capacity: 1000, FPR: 0.01})
	g, _ := guard.New[string](f, guard.Options{NegativeCacheSize: 100})
	for k := range db {
		g.Add([]byte(k))
	}

	ctx := context.Background()
	role, ok, _ := g.Lookup(ctx, []byte("alice"), load)
	fmt.Println("alice:", role, ok)
	for i := range 1000 {
		g.Lookup(ctx, fmt.Appendf(nil, "nobody-%d", i), load)
	}
	s := g.Stats()
	fmt.Println("lookups:", s.Lookups, "store loads:", loads, "saved:", s.SavedLoads)
	// Output:
	// alice: admin true
	// lookups: 1001 store loads: 1 saved: 1000
}
