package server

import (
	"context"
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
