package command

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated runs fn and returns the bytes the heap allocated meanwhile
// (runtime.MemStats.TotalAlloc delta: every allocation counts, freed or
// not).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestConstructorsSizeBeforeAllocating: every family constructor a
// command reaches computes the size its parameters ask for and refuses a
// filter over maxmemory before allocating it. Each request below needs
// 50-150 MB under a 16 MiB limit; the refusal may allocate a few KiB (the
// reply), never the table.
func TestConstructorsSizeBeforeAllocating(t *testing.T) {
	const maxMemory = 16 << 20
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"window", []string{"BLOOMERY.WINDOW", "w", "1000", "10000000", "0.01", "GENERATIONS", "8"}},
		{"reserve/rotating", []string{"BLOOMERY.RESERVE", "r", "rotating", "10000000", "0.01"}},
		{"reserve/scalable", []string{"BLOOMERY.RESERVE", "s", "scalable", "30000000", "0.01"}},
		{"reserve/sbbf", []string{"BLOOMERY.RESERVE", "p", "sbbf", "30000000", "0.0001"}},
		{"reserve/blocked", []string{"BLOOMERY.RESERVE", "b", "blocked", "30000000", "0.01"}},
		{"bf.reserve", []string{"BF.RESERVE", "bf", "0.001", "30000000"}},
		{"cf.reserve", []string{"CF.RESERVE", "cf", "100000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(maxMemory)
			var reply string
			n := allocated(func() { reply = string(s.run(bs(tc.args...)...)) })
			if !strings.HasPrefix(reply, "-OOM ") {
				t.Errorf("reply %q, want -OOM", reply)
			}
			if n > 1<<20 {
				t.Errorf("the refused command allocated %d bytes", n)
			}
			if s.env.Store.Len() != 0 {
				t.Error("a refused command created its key")
			}
		})
	}
}

// TestConstructorsNoMachine: without maxmemory, a filter over the
// server's limit for one filter is refused with -ERR, before allocating.
// (The 13 TB window runs in the server package's subprocess test,
// under an address-space limit.)
func TestConstructorsNoMachine(t *testing.T) {
	s := newTestServer(0)
	s.env.MaxFilterBytes = 64 << 20
	for _, args := range [][]string{
		{"BLOOMERY.WINDOW", "w", "1000", "10000000", "0.01", "GENERATIONS", "8"},
		{"BLOOMERY.RESERVE", "r", "rotating", "10000000", "0.01"},
	} {
		var reply string
		n := allocated(func() { reply = string(s.run(bs(args...)...)) })
		if !strings.HasPrefix(reply, "-ERR ") {
			t.Errorf("%v: reply %q, want -ERR", args, reply)
		}
		if n > 1<<20 {
			t.Errorf("%v: the refused command allocated %d bytes", args, n)
		}
	}
}

// TestScalableFamilyGrowthChecked: BLOOMERY.ADD on a scalable filter
// checks the size of the link a new item would append against the
// remaining budget before allocating it: the items that would need it
// get an OOM error element, the filter stays under maxmemory, items
// already present still answer 0, and the log holds only the items that
// were taken (replay gives the same filter).
func TestScalableFamilyGrowthChecked(t *testing.T) {
	const maxMemory = 256 << 10
	s := newTestServer(maxMemory)
	if r := string(s.run(bs("BLOOMERY.RESERVE", "s", "scalable", "1000", "0.01")...)); r != "+OK\r\n" {
		t.Fatal(r)
	}
	oom := 0
	for j := 0; j < 200 && oom == 0; j++ {
		args := []string{"BLOOMERY.ADD", "s"}
		for i := range 1000 {
			args = append(args, fmt.Sprint(j, "-", i))
		}
		oom = strings.Count(string(s.run(bs(args...)...)), "-OOM ")
	}
	if oom == 0 {
		t.Fatal("no OOM while growing past maxmemory")
	}
	if u := s.env.Store.Used(); u > maxMemory {
		t.Fatalf("the keyspace holds %d bytes over maxmemory %d", u, maxMemory)
	}
	if r := string(s.run(bs("BLOOMERY.ADD", "s", "0-0")...)); r != "*1\r\n:0\r\n" {
		t.Fatalf("present item after OOM: %q", r)
	}
	last := s.hooks.log[len(s.hooks.log)-1]
	for _, a := range last[2:] {
		if string(a) == "0-0" {
			continue
		}
		if r := string(s.run(bs("BLOOMERY.EXISTS", "s", string(a))...)); r != "*1\r\n:1\r\n" {
			t.Fatalf("logged item %q is absent", a)
		}
	}
	// Replaying the log builds the same filter.
	r := newTestServer(0)
	r.env.Replaying = true
	for _, cmd := range s.hooks.log {
		r.run(cmd...)
	}
	if a, b := string(s.run(bs("BLOOMERY.DUMP", "s")...)), string(r.run(bs("BLOOMERY.DUMP", "s")...)); a != b {
		t.Fatal("the replayed log gives another filter")
	}
}

// TestKeyNamesCounted: key names count against maxmemory: a key whose
// name alone is over the budget is refused, and many long names fill it.
func TestKeyNamesCounted(t *testing.T) {
	const maxMemory = 1 << 20
	s := newTestServer(maxMemory)
	long := strings.Repeat("k", 2<<20)
	for _, args := range [][]string{
		{"BF.ADD", long, "x"},
		{"BF.RESERVE", long, "0.01", "100"},
		{"CF.ADD", long, "x"},
		{"CF.RESERVE", long, "100"},
		{"BLOOMERY.RESERVE", long, "blocked", "100", "0.01"},
		{"BLOOMERY.WINDOW", long, "60", "100", "0.01"},
	} {
		if r := string(s.run(bs(args...)...)); !strings.HasPrefix(r, "-OOM ") {
			t.Errorf("%s with a 2 MiB key name under a 1 MiB maxmemory: %.60q", args[0], r)
		}
	}
	created := 0
	for i := range 200 {
		name := fmt.Sprintf("%06d%s", i, strings.Repeat("n", 20<<10))
		if r := string(s.run(bs("BF.ADD", name, "x")...)); strings.HasPrefix(r, "-OOM ") {
			break
		}
		created++
	}
	if created*20<<10 > maxMemory {
		t.Fatalf("%d keys of 20 KiB names fit under maxmemory %d", created, maxMemory)
	}
	if u := s.env.Store.Used(); u < uint64(created*20<<10) {
		t.Fatalf("used %d does not count the %d names", u, created)
	}
	s.run(bs("FLUSHALL")...)
	if u := s.env.Store.Used(); u != 0 {
		t.Fatalf("used %d after FLUSHALL", u)
	}
}
