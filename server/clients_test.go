package server

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func portOf(t *testing.T, addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestRedisCLI runs Debian's redis-cli against the server in RESP2 and
// RESP3 (-3), one-shot and interactive (through a pseudo-terminal, so
// redis-cli performs its interactive start-up: HELLO/COMMAND DOCS).
func TestRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed (apt-get install redis-tools)")
	}
	s, addr := startServer(t, Config{})
	port := portOf(t, addr)
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(cli, append([]string{"-p", port, "--no-raw"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.RESERVE", "k", "0.01", "100"}, "OK"},
		{[]string{"BF.ADD", "k", "a"}, "(integer) 1"},
		{[]string{"BF.MADD", "k", "a", "b"}, "1) (integer) 0\n2) (integer) 1"},
		{[]string{"BF.INFO", "k", "CAPACITY"}, "1) (integer) 100"},
		{[]string{"-3", "BF.ADD", "k", "c"}, "(true)"},
		{[]string{"-3", "BF.MEXISTS", "k", "a", "zz"}, "1) (true)\n2) (false)"},
		{[]string{"-3", "BF.INFO", "k", "ITEMS"}, `1# "Number of items inserted" => (integer) 3`},
		{[]string{"-3", "CF.INSERTNX", "c", "ITEMS", "a", "a"}, "1) (integer) 1\n2) (integer) 0"},
		{[]string{"-3", "CF.INFO", "c"}, "1# \"Size\" => (integer) 1080\n2# \"Number of buckets\" => (integer) 512\n3# \"Number of filters\" => (integer) 1\n4# \"Number of items inserted\" => (integer) 1\n5# \"Number of items deleted\" => (integer) 0\n6# \"Bucket size\" => (integer) 2\n7# \"Expansion rate\" => (integer) 1\n8# \"Max iterations\" => (integer) 20"},
		{[]string{"TYPE", "c"}, "MBbloomCF"},
		{[]string{"BF.ADD", "c", "x"}, "(error) WRONGTYPE Operation against a key holding the wrong kind of value"},
		{[]string{"NOSUCH", "x"}, "(error) ERR unknown command 'NOSUCH', with args beginning with: 'x'"},
		{[]string{"DBSIZE"}, "(integer) 2"},
	} {
		if got := run(tc.args...); got != tc.want {
			t.Errorf("redis-cli %q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Log("no /usr/bin/python3: interactive redis-cli test skipped")
		return
	}
	for _, proto := range [][]string{nil, {"-3"}} {
		before := s.env.Stats()
		errsBefore := uint64(0)
		for _, st := range before {
			errsBefore += st.Errors()
		}
		cmd := exec.Command("/usr/bin/python3", append([]string{"testdata/redis_cli_interactive.py", port}, proto...)...)
		cmd.Stdin = strings.NewReader("bf.add ik a\nbf.info ik\ncf.add ic x\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("interactive redis-cli: %v\n%s", err, out)
		}
		o := string(out)
		for _, want := range []string{"(integer) 1", `"Capacity"`, "(integer) 240", "127.0.0.1:" + port + ">"} {
			if proto != nil && want == "(integer) 1" {
				want = "(true)"
			}
			if !strings.Contains(o, want) {
				t.Errorf("interactive redis-cli %v: output lacks %q; its last 3000 bytes:\n%s", proto, want, o[max(0, len(o)-3000):])
			}
		}
		errs := uint64(0)
		for _, st := range s.env.Stats() {
			errs += st.Errors()
		}
		if errs != errsBefore {
			t.Errorf("interactive start-up caused %d error replies", errs-errsBefore)
		}
	}
}

// TestPythonRedis runs Debian's python3-redis bf()/cf() helpers.
func TestPythonRedis(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skip("python3-redis not installed (apt-get install python3-redis)")
	}
	_, addr := startServer(t, Config{})
	out, err := exec.Command("/usr/bin/python3", "testdata/python_client.py", portOf(t, addr)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("python client: %v\n%s", err, out)
	}
}
