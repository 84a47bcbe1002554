package server

import (
	"context"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// restart shuts s down (the log is written and fsynced, no snapshot) and
// starts a new server on the same directory, which replays the log.
func restart(t *testing.T, s *Server, cfg Config) (*Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return startServer(t, cfg)
}

// TestRepeatAddLogged: an add to a multiset family (counting, quotient,
// cuckoo) that answers 0 still adds a copy; it must be logged, or add,
// add, del, restart leaves the item absent (a false negative).
func TestRepeatAddLogged(t *testing.T) {
	cfg := Config{Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	c := dial(t, addr)
	for _, kind := range []string{"counting", "quotient", "cuckoo"} {
		c.expect("OK", "BLOOMERY.RESERVE", kind, kind, "1000", "0.01")
		c.do("BLOOMERY.ADD", kind, "x")
		c.do("BLOOMERY.ADD", kind, "x")
		c.expect("1", "BLOOMERY.DEL", kind, "x")
		c.expect("[1]", "BLOOMERY.EXISTS", kind, "x")
		// SEEN is add-if-absent: a present item gets no second copy.
		c.expect("[1]", "BLOOMERY.SEEN", kind, "y")
		c.expect("[0]", "BLOOMERY.SEEN", kind, "y")
		c.expect("1", "BLOOMERY.DEL", kind, "y")
		c.expect("[0]", "BLOOMERY.EXISTS", kind, "y")
	}
	c.expect("1", "CF.ADD", "cf", "x")
	c.expect("1", "CF.ADD", "cf", "x")
	c.expect("1", "CF.DEL", "cf", "x")
	s, addr = restart(t, s, cfg)
	c = dial(t, addr)
	for _, kind := range []string{"counting", "quotient", "cuckoo"} {
		c.expect("[1]", "BLOOMERY.EXISTS", kind, "x")
	}
	c.expect("1", "CF.EXISTS", "cf", "x")
	_ = s
}

// TestReplyWaitsForObservedWrite: under appendfsync always, a reply that
// reports state (BF.EXISTS 1, BF.ADD 0 of a present item) must not leave
// before the write it observed is fsynced, even when that write came from
// another client whose own reply is still waiting on the fsync.
func TestReplyWaitsForObservedWrite(t *testing.T) {
	s, addr := startServer(t, Config{AppendFsync: "always"})
	const delay = 1500 * time.Millisecond
	var armed atomic.Bool
	var synced atomic.Int64 // UnixNano when the slow fsync returned
	s.aof.SetSyncHook(func() {
		if armed.CompareAndSwap(true, false) {
			time.Sleep(delay)
			synced.Store(time.Now().UnixNano())
		}
	})
	a, b, c := dial(t, addr), dial(t, addr), dial(t, addr)
	armed.Store(true)
	before := s.aof.End()
	a.send("BF.ADD", "k", "x")
	for s.aof.End() == before {
		time.Sleep(time.Millisecond)
	}
	type reply struct {
		v  string
		at int64
	}
	got := make(chan reply, 3)
	for _, cl := range []struct {
		c    *client
		args []string
	}{{a, nil}, {b, []string{"BF.EXISTS", "k", "x"}}, {c, []string{"BF.ADD", "k", "x"}}} {
		go func() {
			if cl.args != nil {
				cl.c.send(cl.args...)
			}
			v := show(cl.c.read())
			got <- reply{v, time.Now().UnixNano()}
		}()
	}
	var vals []string
	for range 3 {
		r := <-got
		vals = append(vals, r.v)
		if done := synced.Load(); done == 0 || r.at < done {
			t.Errorf("reply %s arrived before the fsync of the write it observed completed", r.v)
		}
	}
	sort.Strings(vals)
	if strings.Join(vals, " ") != "0 1 1" {
		t.Errorf("replies %v, want 1 (A's add), 1 (B's exists), 0 (C's add)", vals)
	}
}
