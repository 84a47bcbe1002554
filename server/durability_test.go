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
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/server/internal/persist"
)

// TestMain doubles as the server process for the crash tests: with
// BLOOMERY_TEST_CHILD set, the test binary runs a server on the directory
// and fsync policy given in the environment, prints its address, and
// shuts down cleanly on SIGTERM (like `bloomery serve`).
func TestMain(m *testing.M) {
	if os.Getenv("BLOOMERY_TEST_CHILD") == "" {
		os.Exit(m.Run())
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := New(Config{Dir: os.Getenv("BLOOMERY_TEST_DIR"), AppendFsync: os.Getenv("BLOOMERY_TEST_FSYNC"), Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		os.Exit(3)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(4)
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.Done():
		}
		ln.Close()
	}()
	s.Serve(ctx, ln)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		os.Exit(5)
	}
	os.Exit(0)
}

type child struct {
	cmd    *exec.Cmd
	addr   string
	stderr *strings.Builder
	mu     *sync.Mutex
}

func startChild(t *testing.T, dir, fsync string) *child {
	t.Helper()
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator: cannot exec a binary of the emulated architecture")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BLOOMERY_TEST_CHILD=1", "BLOOMERY_TEST_DIR="+dir, "BLOOMERY_TEST_FSYNC="+fsync)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, stderr: &strings.Builder{}, mu: &sync.Mutex{}}
	cmd.Stderr = lockedWriter{ch}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "LISTEN ") {
		cmd.Wait()
		ch.mu.Lock()
		defer ch.mu.Unlock()
		t.Fatalf("child did not start: %q %v\n%s", line, err, ch.stderr.String())
	}
	ch.addr = strings.TrimSpace(strings.TrimPrefix(line, "LISTEN "))
	return ch
}

type lockedWriter struct{ c *child }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.stderr.Write(p)
}

func (c *child) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// TestKill9 kills the server with SIGKILL at random points of a write
// load with appendfsync always, restarts it on the same directory, and
// checks that every add the server acknowledged is present. Snapshots are
// taken at random moments too, so crashes also hit log switches. The
// load is capped and paced as in TestKill9EverySec: where fsync is cheap
// (a tmpfs temp dir, a quiet machine) the unpaced load overran the cuckoo
// filter's default expansions ("Maximum expansions reached").
func TestKill9(t *testing.T) { testKill9(t, "always", 50, 3*time.Millisecond) }

// TestKill9EverySec is TestKill9 under the default policy: a process
// crash must not lose an acknowledged write there either (the log is
// written to the OS before the reply; only the fsync is deferred).
// Without an fsync per write the load runs several times faster, so each
// worker sends at most 50 pipelines a round, one every 3 ms (spanning
// the 30-180 ms kill window), to keep the cuckoo filter within its
// default expansions (about 19,000 of its adds over the 12 rounds).
func TestKill9EverySec(t *testing.T) { testKill9(t, "everysec", 50, 3*time.Millisecond) }

// testKill9 runs the kill -9 test with the given policy; maxIters > 0
// caps the pipelines a worker sends per round, and pace spaces them.
func testKill9(t *testing.T, policy string, maxIters int, pace time.Duration) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var acked []string // "bf:item" / "cf:item"
	rounds := 12
	for round := 0; round < rounds; round++ {
		ch := startChild(t, dir, policy)
		// Everything acknowledged before must have survived.
		verify(t, ch.addr, acked, round)
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				nc, err := net.Dial("tcp", ch.addr)
				if err != nil {
					return
				}
				defer nc.Close()
				br := bufio.NewReader(nc)
				for i := 0; maxIters == 0 || i < maxIters; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if pace > 0 && i > 0 {
						time.Sleep(pace)
					}
					var items []string
					var cmds []byte
					// A pipeline of single adds and one MADD.
					for j := 0; j < 8; j++ {
						it := fmt.Sprintf("r%d-w%d-%d-%d", round, w, i, j)
						items = append(items, "bf:"+it, "cf:"+it)
						cmds = append(cmds, encode("BF.ADD", "bf", it)...)
						cmds = append(cmds, encode("CF.ADD", "cf", it)...)
					}
					madd := []string{"BF.MADD", "bfm"}
					for j := 0; j < 16; j++ {
						it := fmt.Sprintf("m%d-w%d-%d-%d", round, w, i, j)
						madd = append(madd, it)
					}
					cmds = append(cmds, encode(madd...)...)
					if w == 0 && i%50 == 25 {
						cmds = append(cmds, encode("BGSAVE")...)
					}
					if _, err := nc.Write(cmds); err != nil {
						return
					}
					n := 17
					if w == 0 && i%50 == 25 {
						n++
					}
					for k := 0; k < n; k++ {
						v, err := readReply(br)
						if err != nil {
							return // killed: unacknowledged from here on
						}
						if e, ok := v.(respErr); ok && k < 17 {
							t.Errorf("write error: %s", e)
							return
						}
						mu.Lock()
						switch {
						case k < 16:
							acked = append(acked, items[k])
						case k == 16:
							for _, it := range madd[2:] {
								acked = append(acked, "bfm:"+it)
							}
						}
						mu.Unlock()
					}
				}
			}(w)
		}
		time.Sleep(time.Duration(30+rng.IntN(150)) * time.Millisecond)
		ch.cmd.Process.Kill()
		ch.cmd.Wait()
		close(stop)
		wg.Wait()
	}
	ch := startChild(t, dir, policy)
	verify(t, ch.addr, acked, rounds)
	ch.cmd.Process.Signal(syscall.SIGTERM)
	ch.cmd.Wait()
	if len(acked) < 1000 {
		t.Fatalf("only %d acknowledged adds over %d crashes; the load did not run", len(acked), rounds)
	}
	t.Logf("%d acknowledged adds, all present after %d kill -9 restarts", len(acked), rounds)
}

func verify(t *testing.T, addr string, acked []string, round int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	const batch = 500
	for start := 0; start < len(acked); start += batch {
		end := min(start+batch, len(acked))
		var cmds []byte
		for _, a := range acked[start:end] {
			key, item, _ := strings.Cut(a, ":")
			cmd := "BF.EXISTS"
			if key == "cf" {
				cmd = "CF.EXISTS"
			}
			cmds = append(cmds, encode(cmd, key, item)...)
		}
		nc.Write(cmds)
		for i := start; i < end; i++ {
			v, err := readReply(br)
			if err != nil {
				t.Fatal(err)
			}
			if v != int64(1) {
				t.Fatalf("round %d: acknowledged add %q missing after restart (reply %s)", round, acked[i], show(v))
			}
		}
	}
}

// TestSIGTERM: a clean shutdown writes and fsyncs the log (everysec
// would otherwise leave up to a second unsynced) and exits 0.
func TestSIGTERM(t *testing.T) {
	dir := t.TempDir()
	ch := startChild(t, dir, "everysec")
	c := dial(t, ch.addr)
	var acked []string
	for i := 0; i < 2000; i++ {
		c.send("BF.ADD", "bf", fmt.Sprint(i))
		acked = append(acked, "bf:"+fmt.Sprint(i))
	}
	for i := 0; i < 2000; i++ {
		c.read()
	}
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, ch.logs())
	}
	if !strings.Contains(ch.logs(), "shutdown complete: log written and fsynced") {
		t.Fatalf("no clean-shutdown log line:\n%s", ch.logs())
	}
	ch = startChild(t, dir, "everysec")
	verify(t, ch.addr, acked, 0)
	ch.cmd.Process.Signal(syscall.SIGTERM)
	ch.cmd.Wait()
}

// In-process restart tests: the log and the snapshot are reloaded.
func TestRestartReplay(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	c.do("BF.RESERVE", "b", "0.001", "500", "EXPANSION", "3")
	c.do("CF.RESERVE", "c", "500", "BUCKETSIZE", "4")
	for i := 0; i < 3000; i++ {
		c.send("BF.ADD", "b", fmt.Sprint(i))
		c.send("CF.ADD", "c", fmt.Sprint(i))
	}
	for i := 0; i < 6000; i++ {
		c.read()
	}
	c.do("CF.DEL", "c", "7")
	c.do("BLOOMERY.FP", "b", "1")
	c.do("BF.ADD", "tmp", "x")
	c.do("RENAME", "tmp", "tmp2")
	c.do("BF.ADD", "gone", "x")
	c.do("DEL", "gone")
	before := []string{show(c.do("BF.INFO", "b")), show(c.do("CF.INFO", "c")), show(c.do("KEYS", "*")), show(c.do("BLOOMERY.STATS", "b"))}
	check := func(addr string) {
		t.Helper()
		c := dial(t, addr)
		after := []string{show(c.do("BF.INFO", "b")), show(c.do("CF.INFO", "c")), show(c.do("KEYS", "*")), show(c.do("BLOOMERY.STATS", "b"))}
		for i := range before {
			if before[i] != after[i] {
				t.Fatalf("state differs after restart:\n%s\n%s", before[i], after[i])
			}
		}
		for i := 0; i < 3000; i++ {
			if c.do("BF.EXISTS", "b", fmt.Sprint(i)) != int64(1) {
				t.Fatalf("false negative %d", i)
			}
		}
	}
	s.Shutdown(context.Background())
	s2, addr2 := startServer(t, Config{Dir: dir})
	check(addr2)
	// Snapshot, then more writes in the new log generation.
	c2 := dial(t, addr2)
	c2.expect("OK", "SAVE")
	if gens, _ := persist.ListLogs(dir); len(gens) != 1 || gens[0] != 1 {
		t.Fatalf("logs after SAVE: %v", gens)
	}
	c2.do("BF.ADD", "after", "x")
	before = append(before[:2], show(c2.do("KEYS", "*")), before[3])
	s2.Shutdown(context.Background())
	_, addr3 := startServer(t, Config{Dir: dir})
	check(addr3)
	dial(t, addr3).expect("1", "BF.EXISTS", "after", "x")
}

func TestTornTailAndCorruption(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	for i := 0; i < 100; i++ {
		c.do("BF.ADD", "b", fmt.Sprint(i))
	}
	s.Shutdown(context.Background())
	path := filepath.Join(dir, persist.LogName(0))
	good, _ := os.ReadFile(path)

	// A torn tail: half a record (the last one's first 15 bytes again,
	// its 12-byte header and 3 bytes of the command). Cut with a log
	// line (and moved aside); data kept.
	lastRec := 12 + len(encode("BF.ADD", "b", "99"))
	torn := append(append([]byte(nil), good...), good[len(good)-lastRec:][:15]...)
	os.WriteFile(path, torn, 0o644)
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s2, addr2 := startServer(t, Config{Dir: dir, Logger: logger})
	if !strings.Contains(logs.String(), "torn tail") {
		t.Fatalf("no torn-tail log line:\n%s", logs.String())
	}
	dial(t, addr2).expect("100", "BF.CARD", "b")
	s2.Shutdown(context.Background())
	if fi, _ := os.Stat(path); fi.Size() != int64(len(good)) {
		t.Fatalf("log is %d bytes after truncation, want %d", fi.Size(), len(good))
	}

	// Zero bytes at the tail (a file system that extended the file).
	os.WriteFile(path, append(append([]byte(nil), good...), make([]byte, 100)...), 0o644)
	s3, _ := startServer(t, Config{Dir: dir})
	s3.Shutdown(context.Background())

	// Damage in the middle: refuse to start, with a clear message.
	bad := append([]byte(nil), good...)
	copy(bad[len(bad)/2:], "#garbage#")
	os.WriteFile(path, bad, 0o644)
	_, err := New(Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "corrupt append-only log") || !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("corrupt log accepted or unclear error: %v", err)
	}
	// A damaged snapshot also refuses to start.
	os.WriteFile(path, good, 0o644)
	os.WriteFile(filepath.Join(dir, persist.SnapshotName), []byte("BLMYSNAP but not really a snapshot at all"), 0o644)
	if _, err := New(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("damaged snapshot accepted: %v", err)
	}
}

func TestLogRewrite(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, RewriteMinSize: 64 << 10})
	c := dial(t, addr)
	for i := 0; i < 20000; i++ {
		c.send("BF.ADD", "b", fmt.Sprint(i))
	}
	for i := 0; i < 20000; i++ {
		c.read()
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.saving.Load() || s.aof.Gen() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("log never rewritten")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Shutdown(context.Background())
	gens, _ := persist.ListLogs(dir)
	if len(gens) != 1 || gens[0] == 0 {
		t.Fatalf("old logs not removed: %v", gens)
	}
	_, addr2 := startServer(t, Config{Dir: dir})
	c2 := dial(t, addr2)
	for i := 0; i < 20000; i += 7 {
		if c2.do("BF.EXISTS", "b", fmt.Sprint(i)) != int64(1) {
			t.Fatalf("false negative %d after rewrite", i)
		}
	}
}
