package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/rotating"
	"github.com/bloomery/bloomery/server/internal/persist"
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

// TestMultiExecRaw drives MULTI, EXEC, DISCARD and WATCH over raw RESP and
// checks Redis' replies and that EXEC's writes survive a restart.
func TestMultiExecRaw(t *testing.T) {
	cfg := Config{Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	c, o := dial(t, addr), dial(t, addr)
	c.expect("E:ERR EXEC without MULTI", "EXEC")
	c.expect("E:ERR DISCARD without MULTI", "DISCARD")
	c.expect("OK", "MULTI")
	c.expect("E:ERR MULTI calls can not be nested", "MULTI")
	c.expect("QUEUED", "BF.ADD", "k", "a")
	c.expect("QUEUED", "BF.ADD", "k", "a")
	c.expect("QUEUED", "CF.ADD", "k", "a") // a runtime error: an element of EXEC's reply
	c.expect("QUEUED", "BF.EXISTS", "k", "a")
	c.expect("E:ERR WATCH inside MULTI is not allowed", "WATCH", "k")
	o.expect("0", "BF.EXISTS", "k", "a") // nothing ran yet
	c.expect("[1 0 E:WRONGTYPE Operation against a key holding the wrong kind of value 1]", "EXEC")

	// Queue-time errors abort EXEC.
	c.expect("OK", "MULTI")
	c.expect("QUEUED", "BF.ADD", "k", "b")
	c.expect("E:ERR wrong number of arguments for 'bf.add' command", "BF.ADD", "k")
	c.expect("E:ERR unknown command 'NOPE', with args beginning with: ", "NOPE")
	c.expect("E:EXECABORT Transaction discarded because of previous errors.", "EXEC")
	c.expect("0", "BF.EXISTS", "k", "b")

	c.expect("OK", "MULTI")
	c.expect("QUEUED", "BF.ADD", "k", "b")
	c.expect("OK", "DISCARD")
	c.expect("0", "BF.EXISTS", "k", "b")

	// WATCH: another client's write, a delete, a FLUSHALL or the client's
	// own write abort EXEC; UNWATCH and an untouched key let it run.
	for _, touch := range [][]string{{"BF.ADD", "k", "z"}, {"DEL", "k"}, {"FLUSHALL"}, {"RENAME", "k", "k2"}} {
		c.do("BF.ADD", "k", "seed")
		c.expect("OK", "WATCH", "k", "other")
		o.do(touch...)
		c.expect("OK", "MULTI")
		c.expect("QUEUED", "BF.ADD", "k", "w")
		c.expect("nil", "EXEC")
		c.expect("0", "BF.EXISTS", "k", "w")
	}
	c.do("BF.ADD", "k", "seed")
	c.expect("OK", "WATCH", "k")
	o.do("BF.ADD", "unrelated", "x")
	o.do("BF.ADD", "k", "seed") // present: changes nothing
	c.expect("OK", "MULTI")
	c.expect("QUEUED", "BF.ADD", "k", "w")
	c.expect("[1]", "EXEC")
	c.expect("OK", "WATCH", "k")
	c.expect("OK", "UNWATCH")
	o.do("BF.ADD", "k", "z2")
	c.expect("OK", "MULTI")
	c.expect("QUEUED", "BF.ADD", "k", "w2")
	c.expect("QUEUED", "BLOOMERY.RESERVE", "q", "quotient", "100", "0.01")
	c.expect("QUEUED", "BLOOMERY.ADD", "q", "x")
	c.expect("QUEUED", "BLOOMERY.ADD", "q", "x")
	c.expect("QUEUED", "BLOOMERY.DEL", "q", "x")
	c.expect("[1 OK [1] [0] 1]", "EXEC")
	// Commands that cannot run inside EXEC are refused at queue time.
	c.expect("OK", "MULTI")
	c.expect("E:ERR Command not allowed inside a transaction", "SAVE")
	c.expect("E:EXECABORT Transaction discarded because of previous errors.", "EXEC")

	s, addr = restart(t, s, cfg)
	c = dial(t, addr)
	c.expect("1", "BF.EXISTS", "k", "w2")
	c.expect("[1]", "BLOOMERY.EXISTS", "q", "x")
	_ = s
}

// TestPythonPipeline runs redis-py's default pipeline (a transaction)
// and WATCH.
func TestPythonPipeline(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skip("python3-redis not installed (apt-get install python3-redis)")
	}
	_, addr := startServer(t, Config{})
	out, err := exec.Command("/usr/bin/python3", "testdata/python_multi.py", portOf(t, addr)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("python client: %v\n%s", err, out)
	}
}

// TestTornTransactionReplay: a log that ends inside a transaction (its
// EXEC missing or torn) replays none of it, and the server closes it so
// commands logged after the restart are not swallowed by it.
func TestTornTransactionReplay(t *testing.T) {
	for _, cut := range []int{len("*1\r\n$4\r\nEXEC\r\n"), 5} {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			var logs strings.Builder
			cfg := Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))}
			s, addr := startServer(t, cfg)
			c := dial(t, addr)
			c.expect("1", "BF.ADD", "k", "before")
			c.expect("OK", "MULTI")
			c.expect("QUEUED", "BF.ADD", "k", "tx1")
			c.expect("QUEUED", "BF.ADD", "k", "tx2")
			c.expect("[1 1]", "EXEC")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(cfg.Dir, "appendonly.*.aof"))
			if len(files) != 1 {
				t.Fatalf("log files %v", files)
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(data), "*1\r\n$4\r\nEXEC\r\n") {
				t.Fatalf("the log does not end with EXEC: %q", data)
			}
			if err := os.WriteFile(files[0], data[:len(data)-cut], 0o644); err != nil {
				t.Fatal(err)
			}
			s, addr = startServer(t, cfg)
			c = dial(t, addr)
			c.expect("1", "BF.EXISTS", "k", "before")
			c.expect("0", "BF.EXISTS", "k", "tx1")
			c.expect("0", "BF.EXISTS", "k", "tx2")
			// The transaction is one log record: the cut makes it a torn
			// final record, moved aside and reported.
			if !strings.Contains(logs.String(), "cut the torn tail") {
				t.Errorf("no warning about the dropped transaction in the log:\n%s", logs.String())
			}
			c.expect("1", "BF.ADD", "k", "after")
			s, addr = restart(t, s, cfg)
			c = dial(t, addr)
			c.expect("1", "BF.EXISTS", "k", "after")
			c.expect("0", "BF.EXISTS", "k", "tx1")
			_ = s
		})
	}
}

// TestTransactionAcrossRecords: a transaction whose MULTI and first
// commands reached the log in one record and whose EXEC was in a torn
// final record (a group-commit write can split it) replays none of it;
// start-up warns and appends DISCARD, so later commands are not swallowed.
func TestTransactionAcrossRecords(t *testing.T) {
	dir := t.TempDir()
	l, err := persist.OpenLog(dir, 0, persist.Always, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i := range a {
			out[i] = []byte(a[i])
		}
		return out
	}
	l.Append(cmd("BF.ADD", "k", "before"))
	l.Sync()
	l.Append(cmd("MULTI"))
	l.Append(cmd("BF.ADD", "k", "tx1"))
	l.Sync()
	size := l.Size()
	l.Append(cmd("BF.ADD", "k", "tx2"))
	l.Append(cmd("EXEC"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, persist.LogName(0))
	fi, _ := os.Stat(path)
	if fi.Size() <= size+4 {
		t.Fatalf("third record missing: %d bytes, second ended at %d", fi.Size(), size)
	}
	if err := os.Truncate(path, size+(fi.Size()-size)/2); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cfg := Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))}
	s, addr := startServer(t, cfg)
	c := dial(t, addr)
	c.expect("1", "BF.EXISTS", "k", "before")
	c.expect("0", "BF.EXISTS", "k", "tx1")
	if !strings.Contains(logs.String(), "ends inside a transaction") {
		t.Errorf("no warning about the open transaction:\n%s", logs.String())
	}
	c.expect("1", "BF.ADD", "k", "after")
	s, addr = restart(t, s, cfg)
	c = dial(t, addr)
	c.expect("1", "BF.EXISTS", "k", "after")
	c.expect("0", "BF.EXISTS", "k", "tx1")
	_ = s
}

// syncWriter serialises writes to w (a logger shared by goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestConfigGetPatterns: CONFIG GET takes glob patterns (several, as in
// Redis 7), matched case-insensitively against the parameter names, each
// parameter reported once.
func TestConfigGetPatterns(t *testing.T) {
	_, addr := startServer(t, Config{MaxMemory: 1 << 30, AppendFsync: "always"})
	c := dial(t, addr)
	all := c.do("CONFIG", "GET", "*").([]any)
	if len(all) != 2*13 {
		t.Errorf("CONFIG GET * returned %d values: %s", len(all), show(all))
	}
	got := map[string]string{}
	for i := 0; i+1 < len(all); i += 2 {
		got[show(all[i])] = show(all[i+1])
	}
	if got["b:maxmemory"] != "b:1073741824" || got["b:appendfsync"] != "b:always" || got["b:timeout"] != "b:0" || got["b:client-output-buffer-limit"] != "b:normal 0 8388608 10" {
		t.Errorf("CONFIG GET *: %v", got)
	}
	c.expect("[b:maxclients b:10000 b:maxmemory b:1073741824 b:maxmemory-policy b:noeviction]", "CONFIG", "GET", "max*")
	c.expect("[b:maxmemory b:1073741824 b:appendfsync b:always]", "CONFIG", "GET", "MAXMEMORY", "append?sync", "maxmem*ry")
	c.expect("[]", "CONFIG", "GET", "nothing*")
}

// TestShutdownOptions: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] as in
// Redis: ABORT with no pending shutdown is an error and the server keeps
// serving; unknown or contradictory options are syntax errors.
func TestShutdownOptions(t *testing.T) {
	s, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.expect("E:ERR No shutdown in progress.", "SHUTDOWN", "ABORT")
	c.expect("E:ERR syntax error", "SHUTDOWN", "ABORT", "NOW")
	c.expect("E:ERR syntax error", "SHUTDOWN", "SAVE", "NOSAVE")
	c.expect("E:ERR syntax error", "SHUTDOWN", "LATER")
	c.expect("PONG", "PING")
	select {
	case <-s.Done():
		t.Fatal("the server shut down")
	case <-time.After(100 * time.Millisecond):
	}
	c.send("SHUTDOWN", "NOSAVE", "NOW", "FORCE")
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SHUTDOWN NOSAVE NOW FORCE did not shut the server down")
	}
	if _, err := os.Stat(filepath.Join(s.cfg.Dir, "snapshot.bsnap")); err == nil {
		t.Error("SHUTDOWN NOSAVE wrote a snapshot")
	}
}

// TestReserveWrongType: creating a filter on a key holding another type
// answers WRONGTYPE (as RedisBloom does); on a key of the same type, "item
// exists".
func TestReserveWrongType(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	const wrong = "E:WRONGTYPE Operation against a key holding the wrong kind of value"
	c.expect("OK", "BF.RESERVE", "b", "0.01", "100")
	c.expect("OK", "CF.RESERVE", "c", "100")
	c.expect("OK", "BLOOMERY.RESERVE", "f", "blocked", "100", "0.01")
	for _, k := range []string{"c", "f"} {
		c.expect(wrong, "BF.RESERVE", k, "0.01", "100")
	}
	for _, k := range []string{"b", "f"} {
		c.expect(wrong, "CF.RESERVE", k, "100")
	}
	for _, k := range []string{"b", "c"} {
		c.expect(wrong, "BLOOMERY.RESERVE", k, "blocked", "100", "0.01")
		c.expect(wrong, "BLOOMERY.WINDOW", k, "60", "100", "0.01")
		c.expect(wrong, "BLOOMERY.BUILD", k, "xor8", "0.01", "a", "b")
	}
	c.expect("E:ERR item exists", "BF.RESERVE", "b", "0.01", "100")
	c.expect("E:ERR item exists", "CF.RESERVE", "c", "100")
	c.expect("E:ERR item exists", "BLOOMERY.RESERVE", "f", "blocked", "100", "0.01")
	c.expect("E:ERR item exists", "BLOOMERY.BUILD", "f", "xor8", "0.01", "a")
}

// TestUnmeetableFPR: an error rate no filter of the kind can deliver gets a
// clear error naming the limit, never an internal text, a silently worse
// filter, or an allocation attempt.
func TestUnmeetableFPR(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	for _, tc := range []struct {
		args []string
		want string // substring of the error
	}{
		{[]string{"BF.RESERVE", "k", "1e-300", "100"}, "ERR error rate 1e-300 is too small"},
		{[]string{"BF.INSERT", "k", "ERROR", "1e-300", "ITEMS", "a"}, "ERR error rate 1e-300 is too small"},
		{[]string{"BLOOMERY.BUILD", "k", "xor8", "1e-300", "a", "b"}, "ERR xor8 has a fixed FPR of 0.0039"},
		{[]string{"BLOOMERY.BUILD", "k", "fuse16", "1e-6", "a", "b"}, "ERR fuse16 has a fixed FPR of 1.5e-05"},
		{[]string{"BLOOMERY.BUILD", "k", "ribbon", "1e-300", "a", "b"}, "ERR ribbon cannot meet FPR 1e-300"},
		{[]string{"BLOOMERY.RESERVE", "k", "scalable", "100", "1e-300"}, "ERR scalable cannot meet FPR 1e-300"},
		{[]string{"BLOOMERY.RESERVE", "k", "blocked", "100", "1e-300"}, "ERR blocked cannot meet FPR 1e-300"},
		{[]string{"BLOOMERY.RESERVE", "k", "cuckoo", "100", "1e-9"}, "ERR cuckoo cannot meet FPR 1e-09"},
		{[]string{"BLOOMERY.WINDOW", "k", "60", "100", "1e-300"}, "ERR rotating cannot meet FPR 1e-300"},
	} {
		got := show(c.do(tc.args...))
		if !strings.HasPrefix(got, "E:"+tc.want) || strings.Contains(got, "bloomery: invalid parameters") {
			t.Errorf("%q: got %s, want an error starting %q", tc.args, got, tc.want)
		}
	}
	c.expect("0", "EXISTS", "k")
	c.expect("OK", "BLOOMERY.BUILD", "x", "xor8", "0.004", "a", "b")
	c.expect("OK", "BF.RESERVE", "b", "1e-15", "100")
}

// TestWindowMinimumGeneration: a dedup window whose generations would be
// shorter than the minimum (1 ms, and 1 s per 64 MiB of generation) is
// refused, by BLOOMERY.WINDOW and by BLOOMERY.LOAD of such a filter: each
// rotation clears a generation under the keyspace lock, and with
// microsecond generations every add cleared them all.
func TestWindowMinimumGeneration(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	for _, args := range [][]string{
		{"BLOOMERY.WINDOW", "w", "0.000001", "3000", "0.01"},
		{"BLOOMERY.WINDOW", "w", "0.001", "1000", "0.01", "GENERATIONS", "2"},
		// 1e7 keys per generation at 0.01/6 is about 17 MiB: at least 0.26 s.
		{"BLOOMERY.WINDOW", "w", "0.6", "10000000", "0.01"},
	} {
		if got := show(c.do(args...)); !strings.HasPrefix(got, "E:ERR window too short") {
			t.Errorf("%q: got %s, want ERR window too short ...", args, got)
		}
	}
	c.expect("0", "EXISTS", "w")
	c.expect("OK", "BLOOMERY.WINDOW", "w", "0.012", "1000", "0.01")
	c.expect("OK", "BLOOMERY.WINDOW", "w2", "6", "10000000", "0.01")

	f, err := rotating.New(rotating.Params{Window: time.Microsecond, Capacity: 100, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := show(c.do("BLOOMERY.LOAD", "up", string(data))); !strings.HasPrefix(got, "E:ERR window too short") {
		t.Errorf("BLOOMERY.LOAD of a 1 µs window: got %s", got)
	}
}

// TestKill9Transactions kills the server (kill -9, a subprocess) at random
// moments of a load of MULTI/EXEC transactions and of add, add, delete
// sequences on counting and quotient keys, under appendfsync always. After
// each restart every acknowledged transaction and sequence must be there,
// and every transaction sent, acknowledged or not, must be all there or
// not at all.
func TestKill9Transactions(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var mu sync.Mutex
	var acked []string   // "bf:item", "cnt:item", "q:item": must be present
	var sent [][2]string // the two BF items of each transaction sent
	const rounds = 8
	for round := 0; round <= rounds; round++ {
		ch := startChild(t, dir, "always")
		checkKilled(t, ch.addr, acked, sent, round)
		if round == rounds {
			ch.cmd.Process.Signal(syscall.SIGTERM)
			ch.cmd.Wait()
			break
		}
		if round == 0 {
			c := dial(t, ch.addr)
			c.expect("OK", "BF.RESERVE", "tx", "1e-9", "200000")
			c.expect("OK", "BLOOMERY.RESERVE", "cnt", "counting", "200000", "0.001")
			c.expect("OK", "BLOOMERY.RESERVE", "q", "quotient", "200000", "0.001")
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc, err := net.Dial("tcp", ch.addr)
				if err != nil {
					return
				}
				defer nc.Close()
				br := bufio.NewReader(nc)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					a, b := "a"+id, "b"+id
					var cmds []byte
					for _, args := range [][]string{
						{"MULTI"}, {"BF.ADD", "tx", a}, {"BLOOMERY.ADD", "cnt", id}, {"BLOOMERY.ADD", "cnt", id},
						{"BLOOMERY.DEL", "cnt", id}, {"BF.ADD", "tx", b}, {"EXEC"},
						{"BLOOMERY.ADD", "q", id}, {"BLOOMERY.ADD", "q", id}, {"BLOOMERY.DEL", "q", id},
					} {
						cmds = append(cmds, encode(args...)...)
					}
					mu.Lock()
					sent = append(sent, [2]string{a, b})
					mu.Unlock()
					if _, err := nc.Write(cmds); err != nil {
						return
					}
					for k := range 10 {
						v, err := readReply(br)
						if err != nil {
							return // killed: unacknowledged from here on
						}
						if e, ok := v.(respErr); ok {
							t.Errorf("reply %d: %s", k, e)
							return
						}
						mu.Lock()
						switch k {
						case 6:
							acked = append(acked, "bf:"+a, "bf:"+b, "cnt:"+id)
						case 9:
							acked = append(acked, "q:"+id)
						}
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(30+rng.IntN(150)) * time.Millisecond)
		ch.cmd.Process.Kill()
		ch.cmd.Wait()
		close(stop)
		wg.Wait()
	}
	if len(acked) < 100 {
		t.Fatalf("only %d acknowledged entries over %d crashes; the load did not run", len(acked), rounds)
	}
	t.Logf("%d acknowledged entries of %d transactions sent, all present and no transaction half applied after %d kill -9 restarts", len(acked), len(sent), rounds)
}

// checkKilled verifies after a restart that every acknowledged entry is
// present and that no sent transaction was applied in part.
func checkKilled(t *testing.T, addr string, acked []string, sent [][2]string, round int) {
	t.Helper()
	var cmds [][]string
	var want []string
	for _, e := range acked {
		key, item, _ := strings.Cut(e, ":")
		if key == "bf" {
			cmds, want = append(cmds, []string{"BF.EXISTS", "tx", item}), append(want, "1")
		} else {
			cmds, want = append(cmds, []string{"BLOOMERY.EXISTS", key, item}), append(want, "[1]")
		}
	}
	for _, ab := range sent {
		cmds = append(cmds, []string{"BF.EXISTS", "tx", ab[0]}, []string{"BF.EXISTS", "tx", ab[1]})
	}
	got := pipelined(t, addr, cmds)
	for i := range acked {
		if got[i] != want[i] {
			t.Fatalf("round %d: acknowledged %s missing after kill -9 (reply %s)", round, acked[i], got[i])
		}
	}
	for i, ab := range sent {
		if a, b := got[len(acked)+2*i], got[len(acked)+2*i+1]; a != b {
			t.Fatalf("round %d: transaction half applied after kill -9: %s=%s, %s=%s", round, ab[0], a, ab[1], b)
		}
	}
}

// pipelined sends cmds in pipelines of 500 and returns show() of each
// reply.
func pipelined(t *testing.T, addr string, cmds [][]string) []string {
	t.Helper()
	c := dial(t, addr)
	out := make([]string, 0, len(cmds))
	for start := 0; start < len(cmds); start += 500 {
		end := min(start+500, len(cmds))
		var buf []byte
		for _, args := range cmds[start:end] {
			buf = append(buf, encode(args...)...)
		}
		if _, err := c.nc.Write(buf); err != nil {
			t.Fatal(err)
		}
		for range end - start {
			out = append(out, show(c.read()))
		}
	}
	return out
}
