package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAuthThrottle sends wrong passwords as fast as 8 pipelining
// connections can (reconnecting when the server closes one) for a second
// and checks that the server answered fewer than 1000 of them, and that a
// correct AUTH on another connection meanwhile succeeds promptly.
func TestAuthThrottle(t *testing.T) {
	_, addr := startServer(t, Config{Password: "s3cret"})
	var (
		answered atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	batch := bytes.Repeat(encode("AUTH", "guess"), 256)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				go func() {
					for !stop.Load() {
						if _, err := nc.Write(batch); err != nil {
							return
						}
					}
				}()
				br := bufio.NewReader(nc)
				for !stop.Load() {
					nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
					line, err := br.ReadString('\n')
					if err != nil {
						if ne, ok := err.(net.Error); ok && ne.Timeout() {
							continue
						}
						break
					}
					if strings.HasPrefix(line, "-WRONGPASS") {
						answered.Add(1)
					}
				}
				nc.Close()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	c := dial(t, addr)
	t0 := time.Now()
	c.expect("OK", "AUTH", "s3cret")
	c.expect("PONG", "PING")
	if d := time.Since(t0); d > 200*time.Millisecond {
		t.Errorf("correct AUTH during the attack took %v", d)
	}
	time.Sleep(700 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	n := answered.Load()
	t.Logf("wrong passwords answered in 1 s through 8 pipelining connections: %d", n)
	if n >= 1000 {
		t.Errorf("%d wrong passwords answered in 1 s, want < 1000", n)
	}
	if n == 0 {
		t.Errorf("no wrong password answered at all")
	}
}

// TestIdleTimeout checks Config.IdleTimeout: an idle connection is closed
// after it, an active one is not, and CONFIG GET timeout reports it in
// seconds.
func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, Config{IdleTimeout: 1 * time.Second})
	idle := dial(t, addr)
	active := dial(t, addr)
	active.expect("[b:timeout b:1]", "CONFIG", "GET", "timeout")
	t0 := time.Now()
	for time.Since(t0) < 1500*time.Millisecond {
		active.expect("PONG", "PING")
		time.Sleep(100 * time.Millisecond)
	}
	idle.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := idle.br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read = %v, want EOF (closed by the server)", err)
	}
	if d := time.Since(t0); d > 2500*time.Millisecond {
		t.Errorf("idle connection closed after %v, want about 1 s", d)
	}
	active.expect("PONG", "PING")
}

// TestAuthTimeout checks Config.AuthTimeout: with a password, a
// connection that has not authenticated within it is closed, even while
// it keeps sending (a slow unauthenticated client), and authenticated
// ones stay.
func TestAuthTimeout(t *testing.T) {
	_, addr := startServer(t, Config{Password: "pw", AuthTimeout: 500 * time.Millisecond})
	slow := dial(t, addr)
	silent := dial(t, addr)
	authed := dial(t, addr)
	authed.expect("OK", "AUTH", "pw")
	t0 := time.Now()
	var closedAt time.Duration
	for time.Since(t0) < 3*time.Second {
		if _, err := slow.nc.Write([]byte("P")); err != nil {
			closedAt = time.Since(t0)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if closedAt == 0 {
		t.Fatal("a slow unauthenticated connection was still open after 3 s")
	}
	silent.nc.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := silent.br.ReadByte(); err != io.EOF {
		t.Fatalf("silent unauthenticated connection: read = %v, want EOF", err)
	}
	authed.expect("PONG", "PING")
}

// TestAuthTimeoutFreesMaxClients is the lock-out of issue 25 item 4 in
// small: unauthenticated connections that fill --maxclients are closed
// after AuthTimeout, and a real client can then connect and authenticate.
func TestAuthTimeoutFreesMaxClients(t *testing.T) {
	_, addr := startServer(t, Config{Password: "pw", MaxClients: 3, AuthTimeout: 300 * time.Millisecond})
	for range 3 {
		dial(t, addr)
	}
	time.Sleep(100 * time.Millisecond)
	locked := dial(t, addr)
	if got := show(locked.read()); got != "E:ERR max number of clients reached" {
		t.Fatalf("fourth connection: %s, want the max-clients error", got)
	}
	time.Sleep(time.Second)
	c := dial(t, addr)
	c.expect("OK", "AUTH", "pw")
	c.expect("PONG", "PING")
}
