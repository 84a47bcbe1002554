//go:build linux

package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// The fd-limit tests run the server in a child process (the test binary
// again, dispatched by init before TestMain) so that lowering
// RLIMIT_NOFILE, which cannot be raised back without privileges, does not
// affect the other tests (Linux only: syscall.Rlimit's field types differ
// between Unix systems). BLOOMERY_NET_CHILD=before|after sets the limit
// to BLOOMERY_NET_NOFILE before New (New then clamps MaxClients) or after
// it (so MaxClients stays above what the limit allows, and accept meets
// EMFILE).
func init() {
	when := os.Getenv("BLOOMERY_NET_CHILD")
	if when == "" {
		return
	}
	nofile, _ := strconv.ParseUint(os.Getenv("BLOOMERY_NET_NOFILE"), 10, 64)
	setNofile := func() {
		lim := syscall.Rlimit{Cur: nofile, Max: nofile}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(6)
		}
	}
	if when == "before" {
		setNofile()
	}
	s, err := New(Config{Dir: os.Getenv("BLOOMERY_TEST_DIR"), Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		os.Exit(3)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(4)
	}
	if when == "after" {
		setNofile()
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	err = s.Serve(context.Background(), ln)
	fmt.Fprintln(os.Stderr, "Serve returned:", err)
	os.Exit(7)
}

// startNetChild starts the child; exited receives its Wait result.
func startNetChild(t *testing.T, when string, nofile int) (exited <-chan error, addr string, ch *child) {
	t.Helper()
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator: cannot exec a binary of the emulated architecture")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BLOOMERY_NET_CHILD="+when, "BLOOMERY_NET_NOFILE="+strconv.Itoa(nofile),
		"BLOOMERY_TEST_DIR="+filepath.Join(t.TempDir(), "data"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch = &child{cmd: cmd, stderr: &strings.Builder{}, mu: new(sync.Mutex)}
	cmd.Stderr = lockedWriter{ch}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "LISTEN ") {
		t.Fatalf("child did not start: %q %v\n%s", line, err, ch.logs())
	}
	return done, strings.TrimSpace(strings.TrimPrefix(line, "LISTEN ")), ch
}

// TestAcceptEMFILE runs a server whose open-file limit (64) is far below
// its --maxclients (10000), opens 150 connections, and checks that the
// server survives accept's EMFILE, says so in its log, and serves a new
// client once the excess connections are gone.
func TestAcceptEMFILE(t *testing.T) {
	exited, addr, ch := startNetChild(t, "after", 64)
	var conns []net.Conn
	for range 150 {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break // the backlog is full: enough
		}
		conns = append(conns, nc)
	}
	time.Sleep(300 * time.Millisecond)
	for _, nc := range conns {
		nc.Close()
	}
	select {
	case err := <-exited:
		t.Fatalf("server exited (%v) after %d connections:\n%s", err, len(conns), ch.logs())
	case <-time.After(500 * time.Millisecond):
	}
	c := dialRetry(t, addr, 5*time.Second)
	c.expect("PONG", "PING")
	if !strings.Contains(ch.logs(), "too many open files") {
		t.Errorf("no log line about the fd limit:\n%s", ch.logs())
	}
}

// TestMaxClientsClamp checks that New clamps MaxClients to the open-file
// limit less 32 reserved descriptors, and logs it.
func TestMaxClientsClamp(t *testing.T) {
	_, addr, ch := startNetChild(t, "before", 100)
	c := dialRetry(t, addr, 5*time.Second)
	c.expect("[b:maxclients b:68]", "CONFIG", "GET", "maxclients")
	if !strings.Contains(ch.logs(), "maxclients reduced") {
		t.Errorf("the clamp was not logged:\n%s", ch.logs())
	}
}

// dialRetry dials until the server accepts and answers, or the time is up.
func dialRetry(t *testing.T, addr string, within time.Duration) *client {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			nc.SetDeadline(time.Now().Add(time.Second))
			if _, err = nc.Write(encode("PING")); err == nil {
				br := bufio.NewReader(nc)
				var line string
				if line, err = br.ReadString('\n'); err == nil && line == "+PONG\r\n" {
					nc.SetDeadline(time.Time{})
					t.Cleanup(func() { nc.Close() })
					return &client{t: t, nc: nc, br: br}
				}
			}
			nc.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from %s within %v: %v", addr, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flakyListener fails its first fails Accepts with err, then accepts.
type flakyListener struct {
	net.Listener
	fails int
	err   error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, l.err
	}
	return l.Listener.Accept()
}

// TestAcceptRetry checks in-process that Serve retries EMFILE (with a
// backoff: 4 failures take at least 5+10+20+40 ms) and then serves, and
// that it still returns an error it cannot retry.
func TestAcceptRetry(t *testing.T) {
	s, err := New(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	served := make(chan error, 1)
	t0 := time.Now()
	go func() { served <- s.Serve(context.Background(), &flakyListener{Listener: ln, fails: 4, err: emfile}) }()
	c := dialRetry(t, ln.Addr().String(), 5*time.Second)
	if d := time.Since(t0); d < 75*time.Millisecond {
		t.Errorf("4 EMFILE failures retried within %v: no backoff", d)
	}
	c.expect("PONG", "PING")
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v", err)
	default:
	}

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	boom := errors.New("boom")
	if err := s.Serve(context.Background(), &flakyListener{Listener: ln2, fails: 1, err: boom}); err != boom {
		t.Errorf("Serve with a permanent accept error returned %v, want it", err)
	}
}
