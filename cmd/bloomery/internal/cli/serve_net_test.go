package cli

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsBeyondLoopback checks that serve refuses a /metrics
// listener beyond loopback that no token protects, and that with a token
// it starts, warns, and /metrics answers 401 without the token.
func TestServeMetricsBeyondLoopback(t *testing.T) {
	var stderr strings.Builder
	code := Run([]string{"serve", "--addr", "127.0.0.1:0", "--dir", t.TempDir(), "--metrics-addr", "0.0.0.0:0"}, strings.NewReader(""), io.Discard, &stderr)
	if code == ExitOK || !strings.Contains(stderr.String(), "beyond loopback") {
		t.Fatalf("unprotected non-loopback metrics: exit %d\n%s", code, stderr.String())
	}

	t.Setenv("BLOOMERY_METRICS_TOKEN", "tok")
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run([]string{"serve", "--addr", "127.0.0.1:0", "--dir", t.TempDir(), "--metrics-addr", "0.0.0.0:0"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	re := regexp.MustCompile(`msg="metrics listening" addr=\S*:(\d+)`)
	var logs strings.Builder
	port := ""
	for port == "" || !strings.Contains(logs.String(), "msg=listening") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("serve exited early:\n%s", logs.String())
		}
		logs.WriteString(line)
		if m := re.FindStringSubmatch(line); m != nil {
			port = m[1]
		}
	}
	go io.Copy(io.Discard, br)
	if !strings.Contains(logs.String(), "beyond loopback over plain HTTP") {
		t.Errorf("no warning about the non-loopback metrics bind:\n%s", logs.String())
	}
	url := "http://127.0.0.1:" + port + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics with the token: %d, want 200", resp.StatusCode)
	}
	// Stop it: the serve loop shuts down on SIGTERM only, so use the
	// SHUTDOWN command through the listening address.
	stopServe(t, logs.String())
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// stopServe sends SHUTDOWN NOSAVE to the server whose start-up logs are
// given (it listens where the "listening" line says).
func stopServe(t *testing.T, logs string) {
	t.Helper()
	m := regexp.MustCompile(`msg=listening addr=(\S+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no listening line:\n%s", logs)
	}
	nc, err := net.Dial("tcp", m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("SHUTDOWN NOSAVE\r\n"))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.Copy(io.Discard, nc)
}
