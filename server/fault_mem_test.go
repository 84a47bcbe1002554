package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// Memory fault tests. The ones that would make today's (or a regressed)
// server allocate gigabytes run the server in a child process whose
// address space is capped with RLIMIT_AS, so a runaway allocation kills
// the child, not the machine; the others run in-process with requests
// of a few MB.

// memChildAS is the address space the child may add to what it has
// reserved when it starts: generous for the Go runtime, far below the
// 16 GB to 13 TB the requests below would need.
const memChildAS = 3 << 30

// TestMemChild is the child process of the memory tests (it does nothing
// unless BLOOMERY_MEM_CHILD is set): it caps its own address space, runs
// a server with the maxmemory given in BLOOMERY_MEM_MAXMEMORY, prints
// "LISTEN addr" and serves until SIGTERM.
func TestMemChild(t *testing.T) {
	if os.Getenv("BLOOMERY_MEM_CHILD") == "" {
		t.Skip("child process of the memory tests (runs only under BLOOMERY_MEM_CHILD)")
	}
	vm, err := procStatusKB(os.Getpid(), "VmSize")
	if err != nil {
		fmt.Fprintln(os.Stderr, "VmSize:", err)
		os.Exit(6)
	}
	lim := uint64(vm)<<10 + memChildAS
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(6)
	}
	maxmem, _ := strconv.ParseUint(os.Getenv("BLOOMERY_MEM_MAXMEMORY"), 10, 64)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, err := New(Config{Dir: os.Getenv("BLOOMERY_TEST_DIR"), MaxMemory: maxmem, Logger: logger})
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
	go func() { <-ctx.Done(); ln.Close() }()
	s.Serve(ctx, ln)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Shutdown(sctx)
}

// procStatusKB reads a "Name: N kB" field of /proc/pid/status.
func procStatusKB(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}

type memChild struct {
	cmd    *exec.Cmd
	addr   string
	stderr *strings.Builder
	mu     sync.Mutex
}

// startMemChild runs TestMemChild in a child process with the given
// maxmemory and returns once it listens.
func startMemChild(t *testing.T, maxmemory uint64) *memChild {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc and RLIMIT_AS (Linux)")
	}
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator: cannot exec a binary of the emulated architecture")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemChild$")
	cmd.Env = append(os.Environ(), "BLOOMERY_MEM_CHILD=1", "BLOOMERY_TEST_DIR="+t.TempDir(),
		"BLOOMERY_MEM_MAXMEMORY="+strconv.FormatUint(maxmemory, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch := &memChild{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = memChildStderr{ch}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "LISTEN ") {
		t.Fatalf("child did not start: %q %v\n%s", line, err, ch.logs())
	}
	ch.addr = strings.TrimSpace(strings.TrimPrefix(line, "LISTEN "))
	return ch
}

type memChildStderr struct{ c *memChild }

func (w memChildStderr) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.stderr.Write(p)
}

func (c *memChild) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// alive fails the test if the child exited or does not answer PING.
func (c *memChild) alive(t *testing.T) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		t.Fatalf("server gone: %v\n%s", err, c.logs())
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	nc.Write(encode("PING"))
	v, err := readReply(bufio.NewReader(nc))
	if err != nil || v != "PONG" {
		t.Fatalf("server does not answer PING: %v %v\n%s", v, err, c.logs())
	}
}

// peakRSS returns the child's peak resident memory (VmHWM) in bytes.
func (c *memChild) peakRSS(t *testing.T) int64 {
	t.Helper()
	kb, err := procStatusKB(c.cmd.Process.Pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return kb << 10
}

// TestHugeFiltersRefusedBeforeAllocating: the window (13 TB of
// generations) and other requests needing 16 GB or more are answered
// with an error under --maxmemory 256mb, and the server neither dies
// under its 3 GiB address-space cap nor grows its resident memory.
func TestHugeFiltersRefusedBeforeAllocating(t *testing.T) {
	ch := startMemChild(t, 256<<20)
	nc, err := net.Dial("tcp", ch.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &client{t: t, nc: nc, br: bufio.NewReader(nc)}
	for _, args := range [][]string{
		{"BLOOMERY.WINDOW", "w", "1000", "4294967296", "0.01", "GENERATIONS", "1024"},
		{"BLOOMERY.WINDOW", "w", "1000", "1000000000", "0.0001", "GENERATIONS", "16"},
		{"BLOOMERY.RESERVE", "r", "rotating", "1000000000", "0.01"},
		{"BLOOMERY.RESERVE", "s", "scalable", "4294967296", "0.0001"},
		{"BLOOMERY.RESERVE", "p", "sbbf", "4294967296", "0.0001"},
		{"BLOOMERY.RESERVE", "b", "blocked", "4294967296", "0.0001"},
		{"BLOOMERY.RESERVE", "q", "counting", "4294967296", "0.0001"},
		{"BF.RESERVE", "bf", "0.0001", "1073741824"},
		{"CF.RESERVE", "cf", "1073741824"},
	} {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		c.send(args...)
		v, err := readReply(c.br)
		if err != nil {
			t.Fatalf("%v: no reply (%v); server log:\n%s", args, err, ch.logs())
		}
		if e, ok := v.(respErr); !ok || !(strings.HasPrefix(string(e), "OOM ") || strings.HasPrefix(string(e), "ERR ")) {
			t.Errorf("%v: reply %s, want -OOM or -ERR", args, show(v))
		}
	}
	ch.alive(t)
	if rss := ch.peakRSS(t); rss > 128<<20 {
		t.Errorf("peak RSS %d MB while refusing", rss>>20)
	}
}

// TestQueryBudgetRefusesHugeBulks: four clients announce 400 MB items to
// a server with maxmemory 64 MB and start sending them; each is refused
// on its header (the query-buffer budget is maxmemory) and closed, and
// the server stays up with a peak RSS far below the items.
func TestQueryBudgetRefusesHugeBulks(t *testing.T) {
	ch := startMemChild(t, 64<<20)
	var wg sync.WaitGroup
	replies := make([]string, 4)
	chunk := make([]byte, 1<<20)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.Dial("tcp", ch.addr)
			if err != nil {
				replies[i] = err.Error()
				return
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(20 * time.Second))
			go func() {
				// Send the header and up to 100 MB of the item; the
				// server closes the connection long before.
				fmt.Fprintf(nc, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$%d\r\n", 400_000_000)
				for range 100 {
					if _, err := nc.Write(chunk); err != nil {
						return
					}
				}
			}()
			v, err := readReply(bufio.NewReader(nc))
			if err != nil {
				replies[i] = "read: " + err.Error()
				return
			}
			replies[i] = show(v)
		}()
	}
	wg.Wait()
	for i, r := range replies {
		if !strings.Contains(r, "budget") {
			t.Errorf("client %d: %s, want the query-buffer budget refusal", i, r)
		}
	}
	ch.alive(t)
	if rss := ch.peakRSS(t); rss > 256<<20 {
		t.Errorf("peak RSS %d MB for four refused 400 MB items", rss>>20)
	}
	if !strings.Contains(ch.logs(), "query buffer budget exhausted") {
		t.Error("the refusals were not logged")
	}
}

// heapInuse returns the live heap after a full collection.
func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestSlowConsumersDisconnected: 20 clients pipeline large replies
// (BLOOMERY.DUMP of a 2.4 MB filter, 8 each) and never read them. Each
// passes the soft output limit (1 MiB) and is closed when it has not
// read its replies within 300 ms, with a log line; the memory their
// replies held is freed. Without the limit they hold it for as long as
// they stay connected.
func TestSlowConsumersDisconnected(t *testing.T) {
	var logs strings.Builder
	var logMu sync.Mutex
	s, addr := startServer(t, Config{
		OutputSoft: 1 << 20, OutputSoftTime: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(lockedBuilder{&logs, &logMu}, nil)),
	})
	c := dial(t, addr)
	c.expect("OK", "BLOOMERY.RESERVE", "f", "blocked", "2000000", "0.01")
	dump := len(c.do("BLOOMERY.DUMP", "f").([]byte))
	base := heapInuse()
	for range 20 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		for range 8 {
			nc.Write(encode("BLOOMERY.DUMP", "f"))
		}
	}
	var peak uint64
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if n <= 1 || time.Now().After(deadline) {
			if n > 1 {
				t.Fatalf("%d of 20 non-reading clients still connected after 5 s", n-1)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := heapInuse()
	t.Logf("dump %d bytes; heap in use: %d MB before the clients, peak %d MB, %d MB after they were closed",
		dump, base>>20, peak>>20, after>>20)
	if after > base+8<<20 {
		t.Errorf("heap in use %d MB after the slow consumers were closed, %d MB before", after>>20, base>>20)
	}
	logMu.Lock()
	n := strings.Count(logs.String(), "slow consumer")
	logMu.Unlock()
	if n != 20 {
		t.Errorf("%d slow-consumer log lines, want 20", n)
	}
	if got := s.mem.outputClosed.Load(); got != 20 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 20", got)
	}
	c.expect("PONG", "PING")
}

// TestOutputHardLimit: a reply that takes a client's pending output past
// the hard limit closes the connection at once, without sending it.
func TestOutputHardLimit(t *testing.T) {
	s, addr := startServer(t, Config{OutputHard: 1 << 20})
	c := dial(t, addr)
	c.expect("OK", "BLOOMERY.RESERVE", "f", "blocked", "2000000", "0.01")
	c.send("BLOOMERY.DUMP", "f")
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c.br); err != nil || len(b) != 0 {
		t.Fatalf("over the hard limit: read %d bytes, %v; want the connection closed", len(b), err)
	}
	if got := s.mem.outputClosed.Load(); got != 1 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 1", got)
	}
	d := dial(t, addr)
	d.expect("PONG", "PING")
}

// TestLargeRequestReleased: after a 32 MB request the connection keeps
// no reference to it: once collected, the heap is back near where it was
// although the client stays connected (idle).
func TestLargeRequestReleased(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.expect("PONG", "PING")
	base := heapInuse()
	if got := show(c.do("BF.ADD", "k", strings.Repeat("x", 32<<20))); got != "1" {
		t.Fatalf("BF.ADD of a 32 MB item: %.100s", got)
	}
	after := heapInuse()
	if after > base+4<<20 {
		t.Fatalf("heap in use %d MB with the client idle after a 32 MB request, %d MB before", after>>20, base>>20)
	}
	if got := show(c.do("BF.EXISTS", "k", strings.Repeat("x", 32<<20))); got != "1" {
		t.Fatalf("BF.EXISTS of the 32 MB item: %.100s", got)
	}
}

// TestInfoMemoryCountsEverything: used_memory is the sum of the dataset
// (filters and key names), the clients' query and reply buffers and the
// log buffer; a partly received large request shows in the query
// buffers, and key names in the dataset.
func TestInfoMemoryCountsEverything(t *testing.T) {
	_, addr := startServer(t, Config{MaxMemory: 64 << 20})
	c := dial(t, addr)
	fields := func() map[string]int64 {
		m := map[string]int64{}
		for _, line := range strings.Split(string(c.do("INFO", "memory").([]byte)), "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
				m[k] = n
			}
		}
		return m
	}
	f0 := fields()
	for _, k := range []string{"used_memory_dataset", "mem_clients_normal", "mem_client_query_buffers", "mem_client_output_buffers", "mem_aof_buffer", "client_query_buffer_budget"} {
		if _, ok := f0[k]; !ok {
			t.Fatalf("INFO memory lacks %s", k)
		}
	}
	if got := show(c.do("BF.ADD", strings.Repeat("n", 1<<20), "x")); got != "1" {
		t.Fatalf("BF.ADD with a 1 MiB name: %.100s", got)
	}
	f1 := fields()
	if d := f1["used_memory_dataset"] - f0["used_memory_dataset"]; d < 1<<20 {
		t.Errorf("a key with a 1 MiB name added %d bytes to the dataset", d)
	}
	// Another client sends 8 MB of a 16 MB item and stalls.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$%d\r\n%s", 16<<20, strings.Repeat("v", 8<<20))
	var f2 map[string]int64
	for range 100 {
		if f2 = fields(); f2["mem_client_query_buffers"] >= 8<<20 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if f2["mem_client_query_buffers"] < 8<<20 {
		t.Errorf("mem_client_query_buffers %d with 8 MB of a request buffered", f2["mem_client_query_buffers"])
	}
	if sum := f2["used_memory_dataset"] + f2["mem_clients_normal"] + f2["mem_aof_buffer"]; f2["used_memory"] != sum {
		t.Errorf("used_memory %d, parts sum to %d", f2["used_memory"], sum)
	}
	if f2["mem_clients_normal"] != f2["mem_client_query_buffers"]+f2["mem_client_output_buffers"]+f2["mem_client_transactions"] {
		t.Errorf("mem_clients_normal %d is not query + output buffers", f2["mem_clients_normal"])
	}
}

type lockedBuilder struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedBuilder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestTransactionQueueBounded: commands queued by MULTI are copies the
// server holds until EXEC; they count against maxmemory and are bounded
// by the query-buffer budget, so queueing cannot grow without limit.
func TestTransactionQueueBounded(t *testing.T) {
	_, addr := startServer(t, Config{MaxQueryBuffer: 4 << 20})
	c := dial(t, addr)
	c.expect("OK", "MULTI")
	item := strings.Repeat("x", 64<<10)
	refused := -1
	for i := 0; i < 100; i++ {
		if r := show(c.do("BF.ADD", "k", item)); r != "QUEUED" {
			if !strings.Contains(r, "transaction too large") {
				t.Fatalf("queued command %d: %s", i, r)
			}
			refused = i
			break
		}
	}
	if refused < 0 {
		t.Fatal("6.4 MB queued under a 4 MiB budget")
	}
	other := dial(t, addr)
	info := show(other.do("INFO", "memory"))
	if !strings.Contains(info, "mem_client_transactions:") || strings.Contains(info, "mem_client_transactions:0\r\n") {
		t.Errorf("INFO memory does not count the queue:\n%s", info)
	}
	if r := show(c.do("EXEC")); !strings.HasPrefix(r, "E:EXECABORT") {
		t.Fatalf("EXEC after a refused queue: %s", r)
	}
	if r := show(other.do("INFO", "memory")); !strings.Contains(r, "mem_client_transactions:0\r\n") {
		t.Errorf("queue not released after EXEC:\n%s", r)
	}
	c.expect("0", "EXISTS", "k")
}
