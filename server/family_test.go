package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
)

func TestFamilyCommands(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir})
	c := dial(t, addr)
	c.expect("OK", "BLOOMERY.RESERVE", "blk", "blocked", "10000", "0.01")
	c.expect("bloomery-blocked", "TYPE", "blk")
	c.expect("[1 1 0]", "BLOOMERY.ADD", "blk", "a", "b", "a")
	c.expect("[1 0]", "BLOOMERY.EXISTS", "blk", "b", "zz")
	c.expect("[0]", "BLOOMERY.EXISTS", "missing", "b")
	c.expect("E:ERR item exists", "BLOOMERY.RESERVE", "blk", "blocked", "10", "0.01")
	c.expect("E:ERR blocked filters do not support delete", "BLOOMERY.DEL", "blk", "a")
	if got := show(c.do("BLOOMERY.RESERVE", "x", "nosuch", "10", "0.01")); !strings.HasPrefix(got, "E:ERR unknown filter kind 'nosuch' (this build has: ") {
		t.Fatal(got)
	}
	// Keyed hashing for hostile keys: the generated key is logged, so the
	// filter answers the same after a restart.
	c.expect("OK", "BLOOMERY.RESERVE", "kb", "blocked", "1000", "0.01", "KEYED")
	c.expect("[1 1]", "BLOOMERY.ADD", "kb", "p", "q")
	// Server-side build of a static filter, and a static upload.
	items := []string{"BLOOMERY.BUILD", "st", "fuse8", "0.004"}
	for i := 0; i < 1000; i++ {
		items = append(items, fmt.Sprint("s", i))
	}
	if show(c.do(items...)) != "OK" {
		t.Fatal("build failed")
	}
	c.expect("E:ERR fuse8 filters are static: they cannot take adds", "BLOOMERY.ADD", "st", "z")
	up, _ := bloom.NewForCapacity(100, 0.01)
	up.AddString("uploaded")
	data, _ := up.MarshalBinary()
	c.expect("OK", "BLOOMERY.LOAD", "up", string(data))
	c.expect("[1 0]", "BLOOMERY.EXISTS", "up", "uploaded", "other")
	if got := show(c.do("BLOOMERY.LOAD", "bad", "not a filter")); !strings.HasPrefix(got, "E:ERR bad filter: ") {
		t.Fatal(got)
	}
	keyed, _ := bloom.New(bloom.Params{Capacity: 10, FPR: 0.01, Hasher: hashing.SipHash([16]byte{1})})
	kd, _ := keyed.MarshalBinary()
	c.expect("E:ERR keyed (SipHash) filters cannot be uploaded: the server would need the secret key", "BLOOMERY.LOAD", "k2", string(kd))
	dump := c.do("BLOOMERY.DUMP", "up").([]byte)
	if string(dump) != string(data) {
		t.Fatal("BLOOMERY.DUMP differs from the uploaded bytes")
	}
	// Dedup window: add-if-absent.
	c.expect("OK", "BLOOMERY.WINDOW", "w", "3600", "1000", "0.01", "GENERATIONS", "4")
	c.expect("bloomery-rotating", "TYPE", "w")
	c.expect("[1 0 1]", "BLOOMERY.SEEN", "w", "e1", "e1", "e2")
	c.expect("[0]", "BLOOMERY.SEEN", "w", "e2")
	// Cuckoo family supports delete.
	c.expect("OK", "BLOOMERY.RESERVE", "ck", "cuckoo", "1000", "0.01")
	c.expect("[1]", "BLOOMERY.ADD", "ck", "d")
	c.expect("1", "BLOOMERY.DEL", "ck", "d")
	st := show(c.do("BLOOMERY.STATS", "blk"))
	if !strings.HasPrefix(st, "[b:type b:bloomery-blocked b:items 2 ") {
		t.Fatal(st)
	}
	// Restart: replayed from the log (with the logged SipHash key) ...
	s.Shutdown(context.Background())
	check := func(addr string) {
		t.Helper()
		c := dial(t, addr)
		c.expect("[1 1 0]", "BLOOMERY.EXISTS", "kb", "p", "q", "nope-nope")
		c.expect("[1 1]", "BLOOMERY.EXISTS", "st", "s0", "s999")
		c.expect("[1]", "BLOOMERY.EXISTS", "up", "uploaded")
		c.expect("[0]", "BLOOMERY.SEEN", "w", "e1")
		c.expect("[1 1]", "BLOOMERY.EXISTS", "blk", "a", "b")
	}
	s2, addr2 := startServer(t, Config{Dir: dir})
	check(addr2)
	// ... and from a snapshot (container format values, key kept).
	dial(t, addr2).expect("OK", "SAVE")
	s2.Shutdown(context.Background())
	_, addr3 := startServer(t, Config{Dir: dir})
	check(addr3)
	_ = time.Second
}
