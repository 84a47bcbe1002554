package command

import (
	"strings"
	"testing"
)

func (s *testServer) runS(args ...string) string { return string(s.run(bs(args...)...)) }

func logText(log [][][]byte) string {
	var parts []string
	for _, cmd := range log {
		var words []string
		for _, a := range cmd {
			words = append(words, string(a))
		}
		parts = append(parts, strings.Join(words, " "))
	}
	return strings.Join(parts, " | ")
}

// TestExecLogging: EXEC logs only its commands that changed the keyspace,
// framed by MULTI and EXEC when there are two or more, and the log replays
// (through MULTI/EXEC on a replaying Env) to the same keyspace.
func TestExecLogging(t *testing.T) {
	s := newTestServer(0)
	tx := func(cmds ...[]string) string {
		s.runS("MULTI")
		for _, c := range cmds {
			if got := s.runS(c...); got != "+QUEUED\r\n" {
				t.Fatalf("%q: %q", c, got)
			}
		}
		return s.runS("EXEC")
	}
	s.runS("BF.ADD", "k", "present")
	s.hooks.log = nil
	if got := tx([]string{"BF.ADD", "k", "present"}, []string{"BF.EXISTS", "k", "x"}); got != "*2\r\n:0\r\n:0\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	if len(s.hooks.log) != 0 {
		t.Fatalf("a transaction that changed nothing logged %s", logText(s.hooks.log))
	}
	tx([]string{"BF.ADD", "k", "one"}, []string{"BF.ADD", "k", "present"})
	if got := logText(s.hooks.log); got != "BF.ADD k one" {
		t.Fatalf("one change: log %q", got)
	}
	s.hooks.log = nil
	tx([]string{"BF.ADD", "k", "two"}, []string{"BF.ADD", "k", "present"}, []string{"BF.MADD", "k", "three", "present"})
	if got, want := logText(s.hooks.log), "MULTI | BF.ADD k two | BF.MADD k three | EXEC"; got != want {
		t.Fatalf("log %q, want %q", got, want)
	}
	if c := s.c; c.LogOff != int64(s.hooks.logged) {
		t.Errorf("LogOff %d after EXEC, want the log end %d", c.LogOff, s.hooks.logged)
	}

	// Replay the framed transaction on an empty replaying server.
	r := newTestServer(0)
	r.env.Replaying = true
	for _, cmd := range s.hooks.log {
		r.run(cmd...)
	}
	r.env.Replaying = false
	for _, it := range []string{"two", "three"} {
		if got := r.runS("BF.EXISTS", "k", it); got != ":1\r\n" {
			t.Errorf("replayed %s: %q", it, got)
		}
	}
	// A transaction the log ends inside is not applied.
	r2 := newTestServer(0)
	r2.env.Replaying = true
	for _, cmd := range s.hooks.log[:3] {
		r2.run(cmd...)
	}
	if open, n := r2.c.InMulti(); !open || n != 2 {
		t.Fatalf("InMulti = %v, %d", open, n)
	}
	r2.env.Release(r2.c)
	r2.env.Replaying = false
	if got := r2.runS("EXISTS", "k"); got != ":0\r\n" {
		t.Errorf("a torn transaction was applied: EXISTS k = %q", got)
	}
}
