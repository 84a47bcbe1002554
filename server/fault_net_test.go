package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	s, addr := startServer(t, Config{Password: "s3cret"})
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
	if _, m := scrape(t, s.MetricsHandler(), "Bearer s3cret"); !strings.Contains(m, "bloomery_auth_failures_total ") || strings.Contains(m, "bloomery_auth_failures_total 0\n") {
		t.Errorf("bloomery_auth_failures_total does not count the failures")
	}
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
	s, addr := startServer(t, Config{IdleTimeout: 1 * time.Second})
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
	if _, m := scrape(t, s.MetricsHandler(), ""); !strings.Contains(m, "bloomery_timed_out_connections_total 1\n") {
		t.Errorf("bloomery_timed_out_connections_total is not 1")
	}
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

// scrape fetches /metrics through h with the given Authorization header
// (none when empty) and returns the status and body.
func scrape(t *testing.T, h http.Handler, auth string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestMetricsAuth checks that /metrics asks for the bearer token
// (Config.MetricsToken, else the password) and compares it exactly.
func TestMetricsAuth(t *testing.T) {
	s, _ := startServer(t, Config{Password: "pw"})
	h := s.MetricsHandler()
	for _, auth := range []string{"", "Bearer wrong", "Bearer pw2", "Basic cHc=", "bearer"} {
		if code, body := scrape(t, h, auth); code != http.StatusUnauthorized || strings.Contains(body, "bloomery_") {
			t.Errorf("Authorization %q: status %d, want 401 and no metrics", auth, code)
		}
	}
	if code, body := scrape(t, h, "Bearer pw"); code != http.StatusOK || !strings.Contains(body, "bloomery_keys") {
		t.Errorf("with the password: status %d", code)
	}
	s2, _ := startServer(t, Config{Password: "pw", MetricsToken: "tok"})
	if code, _ := scrape(t, s2.MetricsHandler(), "Bearer pw"); code != http.StatusUnauthorized {
		t.Errorf("the password opened /metrics although a metrics token is set: %d", code)
	}
	if code, _ := scrape(t, s2.MetricsHandler(), "Bearer tok"); code != http.StatusOK {
		t.Errorf("with the metrics token: status %d", code)
	}
}

// TestMetricsKeyLabels checks Config.MetricsKeyLabels: by default
// (hashed) key names never appear, each filter's series carry a stable
// key_hash instead; "on" shows names; "off" drops per-filter series.
func TestMetricsKeyLabels(t *testing.T) {
	const name = "alice@example.com"
	for _, tc := range []struct {
		mode       string
		want, deny []string
	}{
		{"", []string{`bloomery_filter_items{key_hash="`}, []string{name}},
		{"hashed", []string{`bloomery_filter_items{key_hash="`}, []string{name}},
		{"on", []string{`bloomery_filter_items{key="` + name + `"`}, nil},
		{"off", []string{"bloomery_keys 1\n"}, []string{name, "bloomery_filter_items{"}},
	} {
		t.Run("mode="+tc.mode, func(t *testing.T) {
			s, addr := startServer(t, Config{MetricsKeyLabels: tc.mode})
			dial(t, addr).expect("1", "BF.ADD", name, "x")
			_, m := scrape(t, s.MetricsHandler(), "")
			for _, w := range tc.want {
				if !strings.Contains(m, w) {
					t.Errorf("metrics lack %q", w)
				}
			}
			for _, d := range tc.deny {
				if strings.Contains(m, d) {
					t.Errorf("metrics contain %q", d)
				}
			}
			if tc.mode == "" || tc.mode == "hashed" {
				// Without a token the label is SHA-256 of the name,
				// truncated to 16 hex digits: the same at every scrape and
				// computable by the operator.
				sum := sha256.Sum256([]byte(name))
				want := `key_hash="` + hex.EncodeToString(sum[:8]) + `"`
				if _, again := scrape(t, s.MetricsHandler(), ""); !strings.Contains(m, want) || !strings.Contains(again, want) {
					t.Errorf("metrics lack %s at both scrapes", want)
				}
			}
		})
	}
	if _, err := New(Config{Dir: t.TempDir(), MetricsKeyLabels: "maybe"}); err == nil {
		t.Error("New accepted MetricsKeyLabels \"maybe\"")
	}
}

// TestKeyFile checks keyed filters whose SipHash key stays in the key
// file (BLOOMERY.RESERVE/WINDOW ... KEYID id): the log and the snapshot
// hold only the id, a restart with the key file finds the filter's items
// through the log and through a snapshot, and a restart without the key
// refuses to start, naming the id.
func TestKeyFile(t *testing.T) {
	const keyHex = "00112233445566778899aabbccddeeff"
	key, _ := hex.DecodeString(keyHex)
	kf := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(kf, []byte("# keys for filters\nk1 "+keyHex+"\n\nother ffeeddccbbaa99887766554433221100\n"), 0o600)
	keys, err := ReadKeyFile(kf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(keys map[string][16]byte, fn func(c *client)) {
		t.Helper()
		s, err := New(Config{Dir: dir, Keys: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(context.Background(), ln)
		c := dial(t, ln.Addr().String())
		fn(c)
		c.nc.Close()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run(keys, func(c *client) {
		c.expect("OK", "BLOOMERY.RESERVE", "f", "blocked", "1000", "0.01", "KEYID", "k1")
		c.expect("OK", "BLOOMERY.WINDOW", "w", "3600", "1000", "0.01", "KEYID", "k1")
		c.expect("[1]", "BLOOMERY.ADD", "f", "a")
		c.expect("[1]", "BLOOMERY.ADD", "w", "a")
		c.expect("E:ERR unknown key id 'nope': not in the server's --key-file", "BLOOMERY.RESERVE", "g", "blocked", "1000", "0.01", "KEYID", "nope")
		c.expect("0", "EXISTS", "g")
	})
	checkFiles := func() {
		t.Helper()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if bytes.Contains(b, key) || bytes.Contains(b, []byte(keyHex)) {
				t.Errorf("%s holds the SipHash key", e.Name())
			}
		}
	}
	checkFiles()
	run(keys, func(c *client) { // from the log
		c.expect("[1]", "BLOOMERY.EXISTS", "f", "a")
		c.expect("[1]", "BLOOMERY.EXISTS", "w", "a")
		c.expect("OK", "SAVE")
	})
	checkFiles()
	run(keys, func(c *client) { // from the snapshot
		c.expect("[1]", "BLOOMERY.EXISTS", "f", "a")
		c.expect("[1]", "BLOOMERY.EXISTS", "w", "a")
		c.expect("OK", "BLOOMERY.RESERVE", "g", "blocked", "1000", "0.01", "KEYID", "other")
	})
	delete(keys, "other")
	if _, err := New(Config{Dir: dir, Keys: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err == nil || !strings.Contains(err.Error(), "'other'") {
		t.Errorf("New without a key the log needs: %v, want a refusal naming the id", err)
	}
	delete(keys, "k1")
	if _, err := New(Config{Dir: dir, Keys: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err == nil || !strings.Contains(err.Error(), `"k1"`) {
		t.Errorf("New without a key the snapshot needs: %v, want a refusal naming the id", err)
	}
}

// TestReadKeyFile checks the key file's syntax errors.
func TestReadKeyFile(t *testing.T) {
	const h = "00112233445566778899aabbccddeeff"
	for _, bad := range []string{"k1\n", "k1 0011\n", "k1 " + h + " extra\n", "k1 " + h + "\nk1 " + h + "\n", "k/1 " + h + "\n", "k1 zz112233445566778899aabbccddeeff\n"} {
		p := filepath.Join(t.TempDir(), "keys")
		os.WriteFile(p, []byte(bad), 0o600)
		if _, err := ReadKeyFile(p); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("ReadKeyFile(%q) = %v, want an error naming the line", bad, err)
		}
	}
}

// TestAuthThrottleGlobal checks the bucket shared by all connections:
// 200 connections, each sending one wrong password at a time and
// reconnecting when closed, learn fewer than 1000 answers in a second
// (the per-connection hold alone would allow 2000).
func TestAuthThrottleGlobal(t *testing.T) {
	_, addr := startServer(t, Config{Password: "s3cret"})
	var (
		answered atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	guess := encode("AUTH", "guess")
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				br := bufio.NewReader(nc)
				for !stop.Load() {
					nc.SetDeadline(time.Now().Add(200 * time.Millisecond))
					if _, err := nc.Write(guess); err != nil {
						break
					}
					line, err := br.ReadString('\n')
					for err != nil && !stop.Load() {
						if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
							break
						}
						nc.SetDeadline(time.Now().Add(200 * time.Millisecond))
						line, err = br.ReadString('\n')
					}
					if err != nil {
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
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	n := answered.Load()
	t.Logf("wrong passwords answered in 1 s through 200 connections: %d", n)
	if n >= 1000 {
		t.Errorf("%d wrong passwords answered in 1 s, want < 1000", n)
	}
}
