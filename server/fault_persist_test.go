package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/server/internal/persist"
)

// Fault-injection tests of the data files: damaged, truncated, missing
// and left-over files, and two servers on one directory. The full-disk
// test (TestFaultFullDisk) needs root for its tmpfs.

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fillLog writes n BF.ADD commands one at a time under "always" (one log
// record each) and shuts the server down; it returns the log's path.
func fillLog(t *testing.T, dir string, n int) string {
	t.Helper()
	s, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	c.expect("OK", "BF.RESERVE", "bf", "0.001", "1000")
	c.expect("OK", "CF.RESERVE", "cf", "1000")
	for i := 0; i < n; i++ {
		c.expect("1", "BF.ADD", "bf", fmt.Sprintf("item-%04d", i))
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, persist.LogName(0))
}

// mustRefuse checks that New refuses the directory with an error naming
// want (each string), and that the log file is byte for byte unchanged.
func mustRefuse(t *testing.T, dir, path string, want ...string) {
	t.Helper()
	before, _ := os.ReadFile(path)
	s, err := New(Config{Dir: dir, Logger: quietLogger()})
	if err == nil {
		s.Shutdown(context.Background())
		t.Fatalf("damaged data directory accepted; want an error naming %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not name %q", err, w)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatalf("refusing to start changed the log (%d -> %d bytes)", len(before), len(after))
	}
}

// flipAt flips one bit of the byte at the first occurrence of find (plus
// delta) in the file.
func flipAt(t *testing.T, path, find string, delta int, mask byte) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(find))
	if i < 0 {
		t.Fatalf("%q not in %s", find, path)
	}
	b[i+delta] ^= mask
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return i + delta
}

// A flipped byte inside an item, a key name or a command name would replay
// as different data (BF.ADD bf item-0007 as item-0006, as a BF.ADD on key
// "bg", or CF.ADD bf: every one a valid command); each must refuse to start.
func TestFaultFlippedBytes(t *testing.T) {
	cases := []struct {
		name, find string
		delta      int
		mask       byte
	}{
		{"item", "item-0007", 8, 0x01},                                // item-0007 -> item-0006
		{"key", "$2\r\nbf\r\n$9\r\nitem-0010", 5, 0x01},               // bf -> bg
		{"command", "BF.ADD\r\n$2\r\nbf\r\n$9\r\nitem-0020", 0, 0x01}, // BF.ADD -> CF.ADD
		{"bulk length", "$9\r\nitem-0030", 1, 0x0f},                   // $9 -> $6
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := fillLog(t, dir, 40)
			flipAt(t, path, tc.find, tc.delta, tc.mask)
			mustRefuse(t, dir, path, path, "refusing to start", "accept-log-loss")
		})
	}
}

// A corrupted length near the end of the log (the damage of issue 25 item
// 11: 19,737 bytes of acknowledged commands were deleted as a "torn tail")
// refuses to start; AcceptLogLoss then starts without the commands from
// the damage on, and the bytes cut are kept in a file beside the log.
func TestFaultCorruptLengthNearEnd(t *testing.T) {
	dir := t.TempDir()
	path := fillLog(t, dir, 400)
	// The tenth item from the end, "$9\r\nitem-03..\r\n" -> "$999\r\nm-03..\r\n":
	// the bulk now runs past the end of the file, as a torn command's would.
	b, _ := os.ReadFile(path)
	off := len(b)
	for range 10 {
		off = bytes.LastIndex(b[:off], []byte("$9\r\nitem-03"))
	}
	copy(b[off:], "$999\r\nm-03")
	os.WriteFile(path, b, 0o600)
	mustRefuse(t, dir, path, path, "refusing to start", "accept-log-loss")
	damaged, _ := os.ReadFile(path)
	s, addr := startServer(t, Config{Dir: dir, AcceptLogLoss: true})
	c := dial(t, addr)
	c.expect("1", "BF.EXISTS", "bf", "item-0389")
	s.Shutdown(context.Background())
	kept, _ := os.ReadFile(path)
	aside := asideFiles(t, dir)
	if len(aside) != 1 {
		t.Fatalf("moved-aside files: %v", aside)
	}
	moved, _ := os.ReadFile(aside[0])
	n := len(damaged) - len(moved)
	if len(moved) == 0 || !bytes.HasSuffix(damaged, moved) || n > off || len(kept) < n || !bytes.Equal(damaged[:n], kept[:n]) {
		t.Fatalf("the cut bytes (%d) are not the damaged file's tail (%d bytes, damage at %d)", len(moved), len(damaged), off)
	}
}

func asideFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.torn-*", "*.corrupt-*"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	return out
}

// Zero bytes in the middle of the log (a block the file system never
// wrote, followed by later records) refuse to start; zeros at the end
// are a torn tail.
func TestFaultZerosInMiddle(t *testing.T) {
	dir := t.TempDir()
	path := fillLog(t, dir, 40)
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte("item-0020"))
	copy(b[i-40:i+20], make([]byte, 60))
	os.WriteFile(path, b, 0o600)
	mustRefuse(t, dir, path, path, "refusing to start")
}

// Cutting the log at any point leaves a torn final record: the server
// starts with every command before it, and the cut bytes of the torn
// record are in a file beside the log, never deleted.
func TestFaultTruncations(t *testing.T) {
	dir := t.TempDir()
	path := fillLog(t, dir, 40)
	good, _ := os.ReadFile(path)
	last := bytes.LastIndex(good, []byte("item-0039"))
	prev := bytes.LastIndex(good, []byte("item-0038"))
	for _, cut := range []int{len(good) - 1, last, last - 20, prev + 5} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			p := filepath.Join(d, persist.LogName(0))
			os.WriteFile(p, good[:cut], 0o600)
			var logs strings.Builder
			s, addr := startServer(t, Config{Dir: d, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := dial(t, addr)
			c.expect("1", "BF.EXISTS", "bf", "item-0037")
			s.Shutdown(context.Background())
			aside := asideFiles(t, d)
			if len(aside) != 1 {
				t.Fatalf("moved-aside files: %v\n%s", aside, logs.String())
			}
			moved, _ := os.ReadFile(aside[0])
			kept := int64(cut - len(moved))
			if len(moved) == 0 || !bytes.Equal(moved, good[kept:cut]) {
				t.Fatalf("moved-aside bytes are not the torn tail: %d bytes", len(moved))
			}
			if !strings.Contains(logs.String(), "torn") {
				t.Fatalf("no log line about the torn tail:\n%s", logs.String())
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A deleted snapshot, or a deleted log generation, is noticed at start.
func TestFaultMissingFiles(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	c.expect("1", "BF.ADD", "bf", "before-save")
	c.expect("OK", "SAVE")
	c.expect("1", "BF.ADD", "bf", "after-save")
	gen := s.aof.Gen()
	s.Shutdown(context.Background())

	d := t.TempDir()
	copyDir(t, dir, d)
	os.Remove(filepath.Join(d, persist.SnapshotName))
	mustRefuse(t, d, filepath.Join(d, persist.LogName(gen)), persist.SnapshotName, "refusing to start")

	d = t.TempDir()
	copyDir(t, dir, d)
	os.Remove(filepath.Join(d, persist.LogName(gen)))
	mustRefuse(t, d, filepath.Join(d, persist.SnapshotName), persist.LogName(gen), "refusing to start")

	// The untouched directory still starts, with both writes.
	_, addr = startServer(t, Config{Dir: dir})
	c = dial(t, addr)
	c.expect("1", "BF.EXISTS", "bf", "before-save")
	c.expect("1", "BF.EXISTS", "bf", "after-save")
}

// A second server on a directory in use is refused, naming the directory
// and the holder's pid, and the first one's data is untouched.
func TestFaultTwoServersOneDir(t *testing.T) {
	dir := t.TempDir()
	_, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	c.expect("1", "BF.ADD", "bf", "x")
	s2, err := New(Config{Dir: dir, Logger: quietLogger()})
	if err == nil {
		s2.Shutdown(context.Background())
		t.Fatal("a second server started on a directory in use")
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("error does not name the directory and the holder's pid: %v", err)
	}
	c.expect("1", "BF.ADD", "bf", "y")
	c.expect("1", "BF.EXISTS", "bf", "x")
}

// Temp files of killed snapshots and logs superseded by the snapshot are
// removed at start, with a log line naming them.
func TestFaultLeftoverFilesCleaned(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir})
	c := dial(t, addr)
	c.expect("1", "BF.ADD", "bf", "x")
	c.expect("OK", "SAVE")
	gen := s.aof.Gen()
	s.Shutdown(context.Background())
	tmp := filepath.Join(dir, "snapshot-123456.tmp")
	old := filepath.Join(dir, persist.LogName(gen-1))
	os.WriteFile(tmp, make([]byte, 1000), 0o600)
	os.WriteFile(old, encode("BF.ADD", "bf", "stale"), 0o600)
	var logs strings.Builder
	_, addr = startServer(t, Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, p := range []string{tmp, old} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s not removed at start", p)
		}
		if !strings.Contains(logs.String(), filepath.Base(p)) {
			t.Fatalf("no log line names %s:\n%s", filepath.Base(p), logs.String())
		}
	}
	dial(t, addr).expect("0", "BF.EXISTS", "bf", "stale")
}

// Data files are private to the server's user.
func TestFaultFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix file modes on Windows")
	}
	dir := filepath.Join(t.TempDir(), "data")
	s, addr := startServer(t, Config{Dir: dir})
	c := dial(t, addr)
	c.expect("1", "BF.ADD", "bf", "x")
	c.expect("OK", "SAVE")
	s.Shutdown(context.Background())
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("data directory mode %v, want 0700", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s mode %v: readable by others", e.Name(), fi.Mode().Perm())
		}
	}
}

// A full disk: a small tmpfs (root only) is filled while the server
// runs. Writes fail and are refused (MISCONF), nothing refused is lost;
// once space is freed, writes resume without a restart, BGSAVE works,
// and SIGTERM exits 0. A restart replays everything acknowledged (the
// partial record a failed write left was cut back, not kept in the
// middle of the log).
func TestFaultFullDisk(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("SKIP: needs root on Linux to mount a small tmpfs")
	}
	if testing.Short() {
		t.Skip("subprocess test")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	ch := startChild(t, dir, "always")
	defer ch.cmd.Process.Kill()
	c := dial(t, ch.addr)
	var acked []string
	add := func(c *client, item string) any {
		v := c.do("BF.ADD", "bf", item)
		if v == int64(1) || v == int64(0) {
			acked = append(acked, "bf:"+item)
		}
		return v
	}
	for i := range 100 {
		add(c, fmt.Sprintf("before-%d", i))
	}
	filler := filepath.Join(mnt, "filler")
	fill := func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 4096)
		for {
			if _, err := f.Write(buf); err != nil {
				return
			}
		}
	}
	fill()
	// Writes fail: the connection whose write failed is closed (its reply
	// dropped), and later writes are refused with MISCONF.
	acked = append(acked, loadUntilRefused(t, ch, "a")...)
	c = dial(t, ch.addr)
	if v := c.do("BGSAVE"); !isErr(v) {
		// The snapshot cannot be written either; it reports the error
		// in the log, and writes stay refused.
		time.Sleep(200 * time.Millisecond)
	}
	if v := c.do("BF.ADD", "bf", "while-full"); !isErr(v) {
		t.Fatalf("write accepted on a full disk: %v", v)
	}
	// Free the space: writes resume within a few seconds, no restart.
	os.Remove(filler)
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := c.do("BF.ADD", "bf", "after-free")
		if !isErr(v) {
			acked = append(acked, "bf:after-free")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused 10 s after space was freed: %v\n%s", v, ch.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := range 100 {
		if v := add(c, fmt.Sprintf("after-%d", i)); isErr(v) {
			t.Fatalf("write refused after recovery: %v", v)
		}
	}
	// The failed write left no partial record in the middle of the log.
	data, err := os.ReadFile(filepath.Join(dir, persist.LogName(0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := persist.DecodeLog(data, func([][]byte) error { return nil }); err != nil || n < len(acked) {
		t.Fatalf("log after recovery: %d commands for %d acknowledged, %v", n, len(acked), err)
	}
	c.expect("Background saving started", "BGSAVE")
	for deadline := time.Now().Add(10 * time.Second); ; {
		info := string(c.do("INFO", "persistence").([]byte))
		if strings.Contains(info, "rdb_bgsave_in_progress:0") {
			if !strings.Contains(info, "rdb_last_bgsave_status:ok") {
				t.Fatalf("BGSAVE failed after recovery:\n%s\n%s", info, ch.logs())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	add(c, "after-bgsave")
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("SIGTERM after recovery: %v\n%s", err, ch.logs())
	}
	ch = startChild(t, dir, "always")
	verify(t, ch.addr, acked, 0)
	// SIGTERM while the disk is still full: neither the log nor a
	// snapshot can be written, so the exit status says so; nothing
	// acknowledged is lost.
	fill()
	acked = append(acked, loadUntilRefused(t, ch, "b")...)
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if err := ch.cmd.Wait(); err == nil || !strings.Contains(ch.logs(), "snapshot failed too") {
		t.Fatalf("SIGTERM on a full disk: exit %v\n%s", err, ch.logs())
	}
	os.Remove(filler)
	ch = startChild(t, dir, "always")
	verify(t, ch.addr, acked, 1)
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("final SIGTERM: %v\n%s", err, ch.logs())
	}
	t.Logf("%d acknowledged adds across two full disks, a recovery and a SIGTERM that could not save, all present after restart", len(acked))

}

// loadUntilRefused sends pipelines of BF.ADD (200-byte items tagged tag)
// on fresh connections until a write is refused with MISCONF, and
// returns the items acknowledged.
func loadUntilRefused(t *testing.T, ch *child, tag string) []string {
	t.Helper()
	var acked []string
	item := tag + strings.Repeat("x", 200)
	for i := 0; i < 200; i++ {
		nc := dial(t, ch.addr)
		var pipe []byte
		for j := 0; j < 50; j++ {
			pipe = append(pipe, encode("BF.ADD", "bf", fmt.Sprintf("%s-%d-%d", item, i, j))...)
		}
		nc.nc.Write(pipe) // the server may close the connection meanwhile
		for j := 0; j < 50; j++ {
			nc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			v, err := readReply(nc.br)
			if err != nil {
				break // closed: the log write failed
			}
			if e, ok := v.(respErr); ok && strings.HasPrefix(string(e), "MISCONF") {
				nc.nc.Close()
				return acked
			}
			if v == int64(1) || v == int64(0) {
				acked = append(acked, fmt.Sprintf("bf:%s-%d-%d", item, i, j))
			}
		}
		nc.nc.Close()
	}
	t.Fatalf("no MISCONF on a full disk\n%s", ch.logs())
	return nil
}

func isErr(v any) bool { _, ok := v.(respErr); return ok }

// The memory a snapshot needs beyond the keyspace: SAVE encodes each
// value under the lock straight into the file's buffered writer (no copy
// of the keyspace); BGSAVE copies each value once under the lock and
// streams the copies (one copy, not the two of encoding everything and
// then concatenating it into one buffer). Measured as the bytes the
// snapshot allocates (runtime.MemStats.TotalAlloc delta) against the
// snapshot's size, for 32 Bloom filters of 1.2 MB.
func TestFaultSnapshotMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 100 MB")
	}
	s, addr := startServer(t, Config{})
	c := dial(t, addr)
	for i := range 32 {
		c.expect("OK", "BF.RESERVE", fmt.Sprint("bf", i), "0.01", "1000000")
	}
	measure := func(background bool) (alloc, peak uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, heap0 := ms.TotalAlloc, ms.HeapAlloc
		stop := make(chan struct{})
		peakc := make(chan uint64)
		go func() {
			var p uint64
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > heap0 {
					p = max(p, m.HeapAlloc-heap0)
				}
				select {
				case <-stop:
					peakc <- p
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		if err := s.snapshot(background); err != nil {
			t.Fatal(err)
		}
		for s.saving.Load() {
			time.Sleep(time.Millisecond)
		}
		close(stop)
		peak = <-peakc
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc - base, peak
	}
	saveAlloc, savePeak := measure(false)
	fi, err := os.Stat(filepath.Join(s.cfg.Dir, persist.SnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(fi.Size())
	bgAlloc, bgPeak := measure(true)
	t.Logf("snapshot of %d bytes: SAVE allocated %d (%.2fx), heap peak +%d; BGSAVE allocated %d (%.2fx), heap peak +%d",
		size, saveAlloc, float64(saveAlloc)/float64(size), savePeak, bgAlloc, float64(bgAlloc)/float64(size), bgPeak)
	if saveAlloc > size/4 {
		t.Errorf("SAVE allocated %.2fx the snapshot's size; want no copy of the keyspace", float64(saveAlloc)/float64(size))
	}
	if bgAlloc > size+size/4 {
		t.Errorf("BGSAVE allocated %.2fx the snapshot's size; want at most one copy", float64(bgAlloc)/float64(size))
	}
}

// A second server process on a directory in use exits non-zero at once,
// naming the directory and the first one's pid; the lock dies with its
// holder, so after a kill -9 the directory starts again.
func TestFaultTwoServerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	dir := t.TempDir()
	first := startChild(t, dir, "always")
	dial(t, first.addr).expect("1", "BF.ADD", "bf", "x")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$") // killed if it starts and serves
	cmd.Env = append(os.Environ(), "BLOOMERY_TEST_CHILD=1", "BLOOMERY_TEST_DIR="+dir, "BLOOMERY_TEST_FSYNC=always")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("second server on a directory in use started and served:\n%s", out)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("second server did not fail: %v\n%s", err, out)
	}
	want := fmt.Sprintf("data directory %s is in use by another server (pid %d", dir, first.cmd.Process.Pid)
	if !strings.Contains(string(out), want) {
		t.Fatalf("second server's message lacks %q:\n%s", want, out)
	}
	first.cmd.Process.Kill()
	first.cmd.Wait()
	again := startChild(t, dir, "always")
	dial(t, again.addr).expect("1", "BF.EXISTS", "bf", "x")
	again.cmd.Process.Signal(syscall.SIGTERM)
	again.cmd.Wait()
}

// A data directory written before log checksums (a version 1 log, the
// golden file of server/internal/persist/testdata) replays; new writes go
// to a new generation in version 2, and from then on the manifest makes
// a deleted version 1 generation refuse to start.
func TestFaultV1LogReplays(t *testing.T) {
	dir := t.TempDir()
	v1, err := os.ReadFile("internal/persist/testdata/appendonly-v1.aof")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, persist.LogName(0)), v1, 0o600)
	s, addr := startServer(t, Config{Dir: dir, AppendFsync: "always"})
	c := dial(t, addr)
	c.expect("1", "BF.EXISTS", "bf", "hello")
	c.expect("1", "BF.EXISTS", "bf", "b\r\nc")
	c.expect("1", "CF.EXISTS", "cf", "item")
	c.expect("1", "BF.ADD", "bf", "new")
	if g := s.aof.Gen(); g != 1 {
		t.Fatalf("appending to generation %d, want a new generation 1 after the version 1 log", g)
	}
	s.Shutdown(context.Background())
	if b, _ := os.ReadFile(filepath.Join(dir, persist.LogName(0))); !bytes.Equal(b, v1) {
		t.Fatal("the version 1 log was changed")
	}
	d := t.TempDir()
	copyDir(t, dir, d)
	os.Remove(filepath.Join(d, persist.LogName(0)))
	mustRefuse(t, d, filepath.Join(d, persist.LogName(1)), persist.LogName(0), "refusing to start")
	_, addr = startServer(t, Config{Dir: dir})
	c = dial(t, addr)
	c.expect("1", "BF.EXISTS", "bf", "hello")
	c.expect("1", "BF.EXISTS", "bf", "new")
}
