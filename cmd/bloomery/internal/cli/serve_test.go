package cli

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "1048576": 1 << 20, "512mb": 512 << 20, "2GB": 2 << 30, "64k": 64 << 10, "100b": 100} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "-1", "1.5gb", "99999999999999999999gb"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

// TestServe runs `bloomery serve` in-process with a password file and the
// env var for the data directory, talks RESP to it, and stops it with the
// SHUTDOWN command.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("hunter2\n"), 0o600)
	t.Setenv("BLOOMERY_DIR", filepath.Join(dir, "data"))
	pr, pwr := io.Pipe()
	done := make(chan int)
	go func() {
		done <- Run([]string{"serve", "--addr", "127.0.0.1:0", "--requirepass-file", pw, "--metrics-addr", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, pwr)
		pwr.Close()
	}()
	br := bufio.NewReader(pr)
	var addr string
	re := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var logs strings.Builder
	for addr == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("serve exited before listening:\n%s", logs.String())
		}
		logs.WriteString(line)
		if m := re.FindStringSubmatch(line); m != nil {
			addr = m[1]
		}
	}
	go io.Copy(io.Discard, br)
	if !strings.Contains(logs.String(), "data loaded") || !strings.Contains(logs.String(), "metrics listening") {
		t.Fatalf("start-up logs lack what was loaded or the metrics address:\n%s", logs.String())
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(nc)
	for _, step := range []struct{ cmd, want string }{
		{"PING\r\n", "-NOAUTH Authentication required.\r\n"},
		{"AUTH hunter2\r\n", "+OK\r\n"},
		{"BF.ADD k a\r\n", ":1\r\n"},
		{"SHUTDOWN NOSAVE\r\n", ""},
	} {
		nc.Write([]byte(step.cmd))
		if step.want == "" {
			break
		}
		got, _ := rd.ReadString('\n')
		if got != step.want {
			t.Fatalf("%q: got %q want %q", step.cmd, got, step.want)
		}
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after SHUTDOWN")
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "appendonly.0.aof")); err != nil {
		t.Fatalf("BLOOMERY_DIR not used: %v", err)
	}
}

func TestServeUsageErrors(t *testing.T) {
	var stderr strings.Builder
	if code := Run([]string{"serve", "--maxmemory", "lots"}, strings.NewReader(""), io.Discard, &stderr); code != ExitUsage {
		t.Fatalf("bad --maxmemory: exit %d\n%s", code, stderr.String())
	}
	stderr.Reset()
	if code := Run([]string{"serve", "--appendfsync", "sometimes", "--dir", t.TempDir()}, strings.NewReader(""), io.Discard, &stderr); code != ExitFailure || !strings.Contains(stderr.String(), "always, everysec or no") {
		t.Fatalf("bad --appendfsync: exit %d\n%s", code, stderr.String())
	}
}
