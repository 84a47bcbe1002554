package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCuckooReplayAfterSnapshot: a cuckoo filter that cannot grow gets
// thousands of adds, a snapshot, then adds far past its limit (most refused);
// every add it acknowledged must still be present after a restart, which
// loads the snapshot and replays the adds after it. The eviction walk's state
// is part of the filter: replay from a snapshot must take the same walks
// as the live adds, or an add that fitted live can find the table full on
// replay (before the fix, both the CF.* and the family cuckoo filter lost
// an acknowledged add this way).
func TestCuckooReplayAfterSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name, reserve, add, exists string
		before                     int // adds before the snapshot
	}{
		{"CF", "CF.RESERVE c 4096 EXPANSION 0", "CF.ADD", "CF.EXISTS", 3000},
		{"BLOOMERY", "BLOOMERY.RESERVE c cuckoo 4096 0.01", "BLOOMERY.ADD", "BLOOMERY.EXISTS", 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, addr := startServer(t, Config{Dir: dir})
			c := dial(t, addr)
			c.expect("OK", strings.Fields(tc.reserve)...)
			var acked []string
			add := func(prefix string, n int) {
				const batch = 500
				for start := 0; start < n; start += batch {
					for i := start; i < start+batch; i++ {
						c.send(tc.add, "c", fmt.Sprint(prefix, i))
					}
					for i := start; i < start+batch; i++ {
						if isYes(c.read()) {
							acked = append(acked, fmt.Sprint(prefix, i))
						}
					}
				}
			}
			add("a", tc.before)
			c.expect("OK", "SAVE")
			add("b", 20000)
			s.Shutdown(context.Background())
			_, addr2 := startServer(t, Config{Dir: dir})
			c2 := dial(t, addr2)
			for _, it := range acked {
				c2.send(tc.exists, "c", it)
			}
			for _, it := range acked {
				if !isYes(c2.read()) {
					t.Fatalf("%s: acknowledged add of %q lost after snapshot + replay (%d acknowledged)", tc.name, it, len(acked))
				}
			}
		})
	}
}
