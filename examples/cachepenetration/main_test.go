package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestRun runs the example briefly: the guard must give the same answers
// as the store and spare the store about every absent lookup.
func TestRun(t *testing.T) {
	c := config{keys: 20_000, lookups: 20_000, absent: 0.9, latency: 20 * time.Microsecond,
		workers: 8, fpr: 0.01, cacheSize: 1000, seed: 1}
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.direct.found != r.guarded.found {
		t.Fatalf("guard found %d, store %d: the guard changed an answer", r.guarded.found, r.direct.found)
	}
	if r.direct.loads != int64(c.lookups) {
		t.Fatalf("direct pass made %d loads for %d lookups", r.direct.loads, c.lookups)
	}
	absent := int64(c.lookups) - r.direct.found
	// Loads = present lookups + false positives (about 1% of absent).
	if maxLoads := r.direct.found + absent*3/100; r.guarded.loads > maxLoads || r.guarded.loads < r.direct.found {
		t.Fatalf("guarded loads %d, want between %d and %d", r.guarded.loads, r.direct.found, maxLoads)
	}
	var out bytes.Buffer
	report(&out, c, r)
	if !strings.Contains(out.String(), "saved loads:") {
		t.Fatalf("report:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
