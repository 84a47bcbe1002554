package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRESP3Types(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	hello := show(c.do("HELLO", "3"))
	if !strings.HasPrefix(hello, "{b:server=b:redis b:version=b:7.4.0 b:proto=3 b:id=") {
		t.Fatalf("HELLO 3: %s", hello)
	}
	cases := []struct {
		want string
		args []string
	}{
		{"true", []string{"BF.ADD", "k", "a"}},
		{"false", []string{"BF.ADD", "k", "a"}},
		{"true", []string{"BF.EXISTS", "k", "a"}},
		{"[true false]", []string{"BF.MADD", "k", "b", "a"}},
		{"[true false]", []string{"BF.MEXISTS", "k", "b", "zz"}},
		{"[true]", []string{"BF.INSERT", "k", "ITEMS", "c"}},
		{"3", []string{"BF.CARD", "k"}},
		{"{b:Capacity=100 b:Size=240 b:Number of filters=1 b:Number of items inserted=3 b:Expansion rate=2}", []string{"BF.INFO", "k"}},
		{"{b:Capacity=100}", []string{"BF.INFO", "k", "capacity"}},
		{"OK", []string{"BF.RESERVE", "ns", "0.01", "10", "NONSCALING"}},
		{"{b:Expansion rate=nil}", []string{"BF.INFO", "ns", "EXPANSION"}},
		{"true", []string{"CF.ADD", "c", "a"}},
		{"false", []string{"CF.ADDNX", "c", "a"}},
		{"true", []string{"CF.EXISTS", "c", "a"}},
		{"[true false]", []string{"CF.MEXISTS", "c", "a", "zz"}},
		{"[true]", []string{"CF.INSERT", "c", "ITEMS", "b"}},
		{"[0 1]", []string{"CF.INSERTNX", "c", "ITEMS", "b", "n"}},
		{"1", []string{"CF.COUNT", "c", "b"}},
		{"true", []string{"CF.DEL", "c", "b"}},
		{"nil", []string{"CLIENT", "GETNAME"}},
	}
	for _, tc := range cases {
		c.expect(tc.want, tc.args...)
	}
	info := show(c.do("CF.INFO", "c"))
	if !strings.HasPrefix(info, "{b:Size=1080 b:Number of buckets=512") {
		t.Fatalf("CF.INFO RESP3: %s", info)
	}
	c.expect("E:NOPROTO unsupported protocol version", "HELLO", "4")
}

func TestGenericCommands(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	cases := []struct {
		want string
		args []string
	}{
		{"PONG", []string{"ping"}},
		{"b:hi", []string{"PING", "hi"}},
		{"E:ERR wrong number of arguments for 'ping' command", []string{"PING", "a", "b"}},
		{"b:x y", []string{"ECHO", "x y"}},
		{"OK", []string{"SELECT", "0"}},
		{"E:ERR DB index is out of range", []string{"SELECT", "1"}},
		{"E:ERR unknown command 'FOO', with args beginning with: 'a' 'b' ", []string{"FOO", "a", "b"}},
		{"E:ERR unknown command 'get', with args beginning with: 'k' ", []string{"get", "k"}},
		{"OK", []string{"CLIENT", "SETNAME", "me"}},
		{"b:me", []string{"CLIENT", "GETNAME"}},
		{"OK", []string{"CLIENT", "SETINFO", "LIB-NAME", "test"}},
		{"E:ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", []string{"AUTH", "x"}},
		{"0", []string{"DBSIZE"}},
		{"1", []string{"BF.ADD", "a", "x"}},
		{"1", []string{"CF.ADD", "b", "x"}},
		{"2", []string{"DBSIZE"}},
		{"2", []string{"EXISTS", "a", "b", "c"}},
		{"[b:a b:b]", []string{"KEYS", "*"}},
		{"[b:a]", []string{"KEYS", "[a]"}},
		{"[b:0 [b:a b:b]]", []string{"SCAN", "0"}},
		{"[b:1 [b:a]]", []string{"SCAN", "0", "COUNT", "1"}},
		{"[b:0 [b:b]]", []string{"SCAN", "0", "TYPE", "MBbloomCF"}},
		{"OK", []string{"RENAME", "a", "c"}},
		{"E:ERR no such key", []string{"RENAME", "a", "d"}},
		{"1", []string{"BF.EXISTS", "c", "x"}},
		{"1", []string{"DEL", "c", "zz"}},
		{"1", []string{"UNLINK", "b"}},
		{"0", []string{"DBSIZE"}},
		{"1", []string{"BF.ADD", "a", "x"}},
		{"OK", []string{"FLUSHALL"}},
		{"0", []string{"DBSIZE"}},
		{"OK", []string{"SAVE"}},
		{"Background saving started", []string{"BGSAVE"}},
	}
	for _, tc := range cases {
		c.expect(tc.want, tc.args...)
	}
	if n, ok := c.do("COMMAND", "COUNT").(int64); !ok || n < 40 {
		t.Fatalf("COMMAND COUNT %v", n)
	}
	docs := show(c.do("COMMAND", "DOCS", "bf.add"))
	if !strings.HasPrefix(docs, "[b:bf.add [b:summary b:BF.ADD key item") {
		t.Fatalf("COMMAND DOCS: %s", docs)
	}
	if ls, ok := c.do("LASTSAVE").(int64); !ok || ls < time.Now().Unix()-60 {
		t.Fatalf("LASTSAVE %v", ls)
	}
	info := string(c.do("INFO").([]byte))
	for _, want := range []string{"# Server\r\nredis_version:7.4.0\r\n", "# Clients\r\nconnected_clients:1\r\n", "# Memory\r\nused_memory:", "# Persistence\r\n", "aof_enabled:1", "# Stats\r\n", "# Keyspace\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	c.do("BF.ADD", "k", "x")
	if ks := string(c.do("INFO", "keyspace").([]byte)); ks != "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n" {
		t.Errorf("INFO keyspace: %q", ks)
	}
	c.expect("OK", "QUIT")
	c.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open after QUIT: %v", err)
	}
}

func TestInlineAndPipeline(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.nc.Write([]byte("PING\r\nBF.ADD k \"a b\"\r\nbf.exists k 'a b'\r\n\r\nECHO \"\\x41\\n\"\r\n"))
	for _, want := range []string{"PONG", "1", "1", "b:A\n"} {
		if got := show(c.read()); got != want {
			t.Fatalf("got %s want %s", got, want)
		}
	}
	// 1000 pipelined commands written at once: every reply, in order.
	var buf bytes.Buffer
	for i := 0; i < 1000; i++ {
		buf.Write(encode("BF.ADD", "p", fmt.Sprint(i)))
		buf.Write(encode("BF.EXISTS", "p", fmt.Sprint(i)))
	}
	go c.nc.Write(buf.Bytes())
	for i := 0; i < 2000; i++ {
		r := c.read()
		if i%2 == 1 && r != int64(1) {
			t.Fatalf("reply %d: %v", i, show(r))
		}
	}
	c.expect("[b:p]", "KEYS", "p")
}

func TestProtocolErrors(t *testing.T) {
	_, addr := startServer(t, Config{MaxBulk: 1024, MaxArgs: 100})
	for _, tc := range []struct{ in, want string }{
		{"*1\r\n$2000\r\n", "E:ERR Protocol error: invalid bulk length"},
		{"*101\r\n", "E:ERR Protocol error: invalid multibulk length"},
		{"*x\r\n", "E:ERR Protocol error: invalid multibulk length"},
		{"*1\r\n+foo\r\n", "E:ERR Protocol error: expected '$', got '+'"},
		{"ECHO \"unterminated\r\n", "E:ERR Protocol error: unbalanced quotes in request"},
		{strings.Repeat("a", 70000) + "\r\n", "E:ERR Protocol error: too big inline request"},
	} {
		c := dial(t, addr)
		c.nc.Write([]byte(tc.in))
		if got := show(c.read()); got != tc.want {
			t.Errorf("%.20q: got %s want %s", tc.in, got, tc.want)
		}
		c.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.br.ReadByte(); err == nil {
			t.Errorf("%.20q: connection not closed after protocol error", tc.in)
		}
	}
}

func TestAuth(t *testing.T) {
	_, addr := startServer(t, Config{Password: "s3cret"})
	c := dial(t, addr)
	c.expect("E:NOAUTH Authentication required.", "PING")
	c.expect("E:NOAUTH Authentication required.", "BF.ADD", "k", "a")
	c.expect("E:WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "nope")
	c.expect("E:NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time", "HELLO", "3")
	// Before auth, requests are limited like Redis's: at most 10 args.
	args := []string{"BF.MADD", "k"}
	for i := 0; i < 20; i++ {
		args = append(args, "x")
	}
	c.expect("E:ERR Protocol error: invalid multibulk length", args...)

	c = dial(t, addr)
	c.expect("OK", "AUTH", "s3cret")
	c.expect("1", "BF.ADD", "k", "a")
	c.do(args...) // the limit is lifted after auth

	c = dial(t, addr)
	c.expect("OK", "AUTH", "default", "s3cret")
	c = dial(t, addr)
	if h := show(c.do("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "n")); !strings.Contains(h, "b:proto=3") {
		t.Fatalf("HELLO AUTH: %s", h)
	}
	c.expect("true", "BF.EXISTS", "k", "a")
	c.expect("b:n", "CLIENT", "GETNAME")
	c = dial(t, addr)
	c.expect("E:WRONGPASS invalid username-password pair or user is disabled.", "HELLO", "2", "AUTH", "default", "bad")
	c.expect("OK", "QUIT")
}

func TestMaxClients(t *testing.T) {
	s, addr := startServer(t, Config{MaxClients: 2})
	a, b := dial(t, addr), dial(t, addr)
	a.expect("PONG", "PING")
	b.expect("PONG", "PING")
	c := dial(t, addr)
	if got := show(c.read()); got != "E:ERR max number of clients reached" {
		t.Fatalf("third client: %s", got)
	}
	if s.rejectedConns.Load() != 1 {
		t.Fatal("rejection not counted")
	}
	a.nc.Close()
	time.Sleep(50 * time.Millisecond)
	d := dial(t, addr)
	d.expect("PONG", "PING")
}

func TestMaxMemory(t *testing.T) {
	// 100 KiB for filters, and 128 KiB for the connection's buffers
	// (maxmemory counts its 64 KiB read buffer and its reply buffer).
	const maxMemory = (100 + 128) << 10
	_, addr := startServer(t, Config{MaxMemory: maxMemory})
	c := dial(t, addr)
	c.expect("E:OOM command not allowed when used memory > 'maxmemory'.", "BF.RESERVE", "big", "0.001", "1000000")
	c.expect("E:OOM command not allowed when used memory > 'maxmemory'.", "CF.RESERVE", "big", "1000000")
	c.expect("OK", "BF.RESERVE", "k", "0.01", "10000")
	// Growing until the next sub-filter would not fit: OOM, not growth.
	var last string
	for j := 0; j < 20 && !strings.Contains(last, "OOM"); j++ {
		args := []string{"BF.MADD", "k"}
		for i := 0; i < 5000; i++ {
			args = append(args, fmt.Sprint(j, "-", i))
		}
		last = show(c.do(args...))
	}
	// The refusal is the growing item's error element, or the whole
	// command's when the connection's buffers already took the total
	// past maxmemory.
	if !strings.HasSuffix(last, "E:OOM command not allowed when used memory > 'maxmemory'.]") && last != "E:OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("no OOM while growing: %.200s", last)
	}
	// The filters and key names stay under maxmemory (used_memory adds
	// the connection's buffers, which grow after the last check).
	info := string(c.do("INFO", "memory").([]byte))
	var used int
	fmt.Sscanf(info[strings.Index(info, "used_memory_dataset:")+len("used_memory_dataset:"):], "%d", &used)
	if used > maxMemory {
		t.Fatalf("used_memory_dataset %d over maxmemory", used)
	}
	c.expect("1", "BF.EXISTS", "k", "0-0")
	c.expect("1", "DEL", "k")
	c.expect("OK", "BF.RESERVE", "k", "0.01", "10000")
}

func TestDumpRoundTrip(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.do("BF.RESERVE", "b", "0.01", "1000", "EXPANSION", "2")
	c.do("CF.RESERVE", "c", "1000", "BUCKETSIZE", "3", "EXPANSION", "2")
	for i := 0; i < 5000; i++ {
		c.send("BF.ADD", "b", fmt.Sprint(i))
		c.send("CF.ADD", "c", fmt.Sprint(i))
	}
	for i := 0; i < 10000; i++ {
		c.read()
	}
	for _, kind := range []string{"BF", "CF"} {
		key := strings.ToLower(kind[:1])
		type chunk struct {
			it   string
			data []byte
		}
		var chunks []chunk
		it := "0"
		for {
			r := c.do(kind+".SCANDUMP", key, it).([]any)
			if r[0] == int64(0) {
				break
			}
			it = fmt.Sprint(r[0])
			chunks = append(chunks, chunk{it, r[1].([]byte)})
		}
		if len(chunks) < 2 {
			t.Fatalf("%s: %d chunks", kind, len(chunks))
		}
		for _, ch := range chunks {
			c.expect("OK", kind+".LOADCHUNK", key+"2", ch.it, string(ch.data))
		}
		if a, b := show(c.do(kind+".INFO", key)), show(c.do(kind+".INFO", key+"2")); a != b {
			t.Fatalf("%s INFO differs after restore:\n%s\n%s", kind, a, b)
		}
		for i := 0; i < 5000; i++ {
			if c.do(kind+".EXISTS", key+"2", fmt.Sprint(i)) != int64(1) {
				t.Fatalf("%s: false negative %d after restore", kind, i)
			}
		}
	}
}

func TestMetrics(t *testing.T) {
	s, addr := startServer(t, Config{MaxFilterLabels: 2, MetricsKeyLabels: "on"})
	c := dial(t, addr)
	for _, k := range []string{"a", "b", "c"} {
		c.do("BF.ADD", k, "x")
	}
	c.do("CF.ADD", "d", "x")
	c.expect("1", "BLOOMERY.FP", "a", "x")
	c.expect("0", "BF.EXISTS", "a", "not-there")
	c.expect("E:ERR the filter does not claim this item; it is a true negative, not a false positive", "BLOOMERY.FP", "a", "not-there")
	st := show(c.do("BLOOMERY.STATS", "a"))
	if !strings.HasPrefix(st, "[b:type b:MBbloom-- b:items 1 b:capacity 100 b:size 240 b:fill ") || !strings.HasSuffix(st, "b:overfilled 0 b:reported_false_positives 1 b:negative_answers 1 b:measured_fpr b:0.5]") {
		t.Fatalf("BLOOMERY.STATS: %s", st)
	}
	// Commands 9..48 on this connection are PINGs: 16, 32 and 48 are timed.
	for i := 0; i < 40; i++ {
		c.do("PING")
	}
	srv := httptest.NewServer(s.MetricsHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(body)
	for _, want := range []string{
		`bloomery_commands_total{command="bf.add"} 3`,
		`bloomery_command_duration_seconds_bucket{command="bf.add",le="+Inf"} `,
		`bloomery_command_duration_seconds_count{command="bf.add"} `,
		`bloomery_command_duration_seconds_count{command="ping"} 3`,
		"bloomery_connected_clients 1\n",
		"bloomery_keys 4\n",
		"bloomery_filters_unlabeled 2\n",
		`bloomery_filter_items{key="a",type="MBbloom--"} 1`,
		`bloomery_filter_reported_false_positives_total{key="a",type="MBbloom--"} 1`,
		`bloomery_filter_negative_answers_total{key="a",type="MBbloom--"} 1`,
		`bloomery_filter_measured_fpr{key="a",type="MBbloom--"} 0.5`,
		"bloomery_aof_write_ok 1\n",
		"# TYPE bloomery_command_duration_seconds histogram\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(m, `key="c"`) {
		t.Error("per-filter series exceed the label cap")
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
}

func TestMaxMemoryCuckoo(t *testing.T) {
	// maxmemory counts the connection's 64 KiB read buffer too: 160 KiB
	// leaves room for the first three sub-filters (56 KiB), not the
	// fourth (64 KiB more).
	const maxMemory = 160 << 10
	_, addr := startServer(t, Config{MaxMemory: maxMemory})
	c := dial(t, addr)
	c.expect("OK", "CF.RESERVE", "c", "8192", "EXPANSION", "2")
	// Fill with CF.INSERT (no room shows as -1 per item), then CF.ADD.
	for j := 0; j < 120; j++ {
		args := []string{"CF.INSERT", "c", "ITEMS"}
		for i := 0; i < 500; i++ {
			args = append(args, fmt.Sprint(j, "-", i))
		}
		c.do(args...)
	}
	last := show(c.do("CF.ADD", "c", "one-more"))
	if last != "E:OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("cuckoo growth past maxmemory: last reply %s", last)
	}
	info := c.do("CF.INFO", "c").([]any)
	if size := info[1].(int64); size > maxMemory {
		t.Fatalf("cuckoo filter grew to %d bytes past maxmemory", size)
	}
	c.expect("1", "CF.EXISTS", "c", "0-0")
}
