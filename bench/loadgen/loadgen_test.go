package main

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// bloomeryBin returns $BLOOMERY_BIN or builds ./cmd/bloomery of this
// repository into a temp dir.
func bloomeryBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("BLOOMERY_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "bloomery")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/bloomery")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building bloomery: %v\n%s", err, out)
	}
	return bin
}

// TestLoadAgainstServers starts `bloomery serve` (and redis-server when
// installed) and runs a small load of every shape. Each add shape is then
// replayed as its query shape with the same item stream, so every query
// must answer present: a false negative, a wrong reply type or a short
// array fails the test. A query on an empty key must fail the same check,
// which shows the check can fail.
func TestLoadAgainstServers(t *testing.T) {
	dir := t.TempDir()
	srv, err := startBloomery(bloomeryBin(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v\n%s", err, srv.log.String())
		}
	}()
	servers := []*proc{srv}
	if rb, err := exec.LookPath("redis-server"); err == nil {
		rdir := t.TempDir()
		r, err := startRedis(rb, rdir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Stop()
		servers = append(servers, r)
	} else {
		t.Log("redis-server not installed: baseline shapes not exercised")
	}

	all := ops(100)
	ks := newKeyspace(100000)
	pairs := [][2]string{
		{"bf.add", "bf.exists"}, {"bf.madd", "bf.mexists"}, {"cf.add", "cf.exists"},
		{"redis:set", "redis:exists"}, {"redis:mset", "redis:exists-multi"},
		{"redis:set-pipe", "redis:exists-pipe"},
	}
	for _, s := range servers {
		ctl, err := dial(s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()
		for _, pr := range pairs {
			add, query := all[pr[0]], all[pr[1]]
			if add.Server != s.Name {
				continue
			}
			if err := reset(ctl, s.Name); err != nil {
				t.Fatal(err)
			}
			units := 400
			if add.Items > 1 {
				units = 40
			}
			cfg := loadConfig{Addr: s.Addr, Conns: 4, Pipeline: 8, Units: units, Seed: 7}
			res, err := runLoad(cfg, ks, add)
			if err != nil {
				t.Fatalf("%s: %v", add.Name, err)
			}
			if res.Units != int64(units) || res.Items != int64(units*add.Items) {
				t.Fatalf("%s: %d units, %d items, want %d units", add.Name, res.Units, res.Items, units)
			}
			cfg.Present = true
			if _, err := runLoad(cfg, ks, query); err != nil {
				t.Fatalf("%s after %s: %v", query.Name, add.Name, err)
			}
			// The same check on an empty keyspace must catch the misses.
			if err := reset(ctl, s.Name); err != nil {
				t.Fatal(err)
			}
			if _, err := runLoad(cfg, ks, query); err == nil {
				t.Fatalf("%s on an empty keyspace passed the present check", query.Name)
			}
			// Time-based mode at depth 32, and the prefill path.
			if query.Query {
				if err := reset(ctl, s.Name); err != nil {
					t.Fatal(err)
				}
				small := newKeyspace(3000)
				if err := prefill(ctl, small, query, small.n); err != nil {
					t.Fatalf("prefill for %s: %v", query.Name, err)
				}
				res, err = runLoad(loadConfig{Addr: s.Addr, Conns: 2, Pipeline: 32, Duration: 200 * time.Millisecond,
					Seed: 3, Present: true}, small, query)
				if err != nil {
					t.Fatalf("%s after prefill: %v", query.Name, err)
				}
				if res.Units == 0 || res.Elapsed < 200*time.Millisecond || res.P50 <= 0 {
					t.Fatalf("%s timed run: %+v", query.Name, res)
				}
			}
		}
	}
	// The server process was busy: its CPU clock moved.
	if cpu, err := srv.CPU(); err != nil || cpu <= 0 {
		t.Errorf("server CPU %v, %v", cpu, err)
	}
}

func TestReaderRejectsWrongReplies(t *testing.T) {
	cases := []struct {
		in   string
		read func(*reader) error
	}{
		{":2\r\n", func(r *reader) error { return readBool(r, false) }},
		{":0\r\n", func(r *reader) error { return readBool(r, true) }},
		{"+OK\r\n", func(r *reader) error { return readBool(r, false) }},
		{"-ERR x\r\n", func(r *reader) error { return r.status("OK") }},
		{"*2\r\n:1\r\n:1\r\n", func(r *reader) error { return readBools(r, 3, false) }},
		{"*1\r\n-ERR non scaling filter is full\r\n", func(r *reader) error { return readBools(r, 1, false) }},
		{":1\n", func(r *reader) error { return readBool(r, false) }},
	}
	for _, c := range cases {
		r := &reader{br: bufioReader(c.in)}
		if err := c.read(r); err == nil {
			t.Errorf("%q accepted", c.in)
		}
	}
	r := &reader{br: bufioReader("*3\r\n:1\r\n:0\r\n:1\r\n+OK\r\n:-5\r\n$3\r\nabc\r\n")}
	if err := readBools(r, 3, false); err != nil {
		t.Fatal(err)
	}
	if err := r.status("OK"); err != nil {
		t.Fatal(err)
	}
	if v, err := r.integer(); err != nil || v != -5 {
		t.Fatal(v, err)
	}
	if err := r.skip(); err != nil {
		t.Fatal(err)
	}
}

func TestHelpers(t *testing.T) {
	ks := newKeyspace(1000)
	for _, v := range []int{0, 1, 9, 10, 99, 100, 12345, 999, 500000} {
		var b [itemLen]byte
		if putItem(b[:], uint64(v)); v < ks.n && string(b[:]) != string(ks.item(v)) {
			t.Fatalf("putItem(%d) = %q, want %q", v, b, ks.item(v))
		}
	}
	var big [itemLen]byte
	if putItem(big[:], 987654321012); string(big[:]) != "987654321012" {
		t.Fatalf("putItem: %q", big)
	}
	if string(ks.item(0)) != "000000000000" || string(ks.item(999)) != "000000000999" {
		t.Fatalf("items %q %q", ks.item(0), ks.item(999))
	}
	if num(1234567.4) != "1,234,567" || num(999) != "999" || num(1000) != "1,000" {
		t.Fatal(num(1234567.4), num(999), num(1000))
	}
	ss := []sample{{res: result{Units: 3, Elapsed: time.Second}}, {res: result{Units: 1, Elapsed: time.Second}}, {res: result{Units: 2, Elapsed: time.Second}}}
	if m := med(ss, func(s sample) float64 { return s.res.UnitsPerSec() }); m != 2 {
		t.Fatalf("median %v", m)
	}
	csv := "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n" +
		"\"BF.ADD bench:bf __rand_int__\",\"43859.65\",\"0.600\",\"0.096\",\"0.551\",\"0.991\",\"1.367\",\"5.567\"\n"
	rps, p50, err := parseBenchCSV(csv)
	if err != nil || rps != 43859.65 || p50 != 0.551 {
		t.Fatal(rps, p50, err)
	}
	if _, _, err := parseBenchCSV("ERR unknown command\n"); err == nil {
		t.Fatal("garbage parsed")
	}
	b := appendCommand(nil, []byte("SET"), []byte("k"), []byte(""))
	if string(b) != "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n" {
		t.Fatalf("%q", b)
	}
	if !strings.Contains(loadAvg(), " ") {
		t.Fatal("load average")
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// A pipeline sent from a template is byte for byte what encoding every
// unit would send, with the items drawn in the same order, for every shape
// and for short last pipelines.
func TestTemplateMatchesEncoding(t *testing.T) {
	ks := newKeyspace(1000)
	for name, o := range ops(100) {
		tpl := newTemplate(o, 8)
		if tpl == nil {
			t.Fatalf("%s: no template", name)
		}
		r1 := rand.New(rand.NewPCG(5, 9))
		r2 := rand.New(rand.NewPCG(5, 9))
		items := make([][]byte, o.Items)
		for _, k := range []int{8, 3, 8, 1} {
			var want []byte
			for u := 0; u < k; u++ {
				for j := range items {
					items[j] = ks.item(r1.IntN(ks.n))
				}
				want = o.add(want, items)
			}
			if got := tpl.fill(k, ks, r2); !bytes.Equal(got, want) {
				t.Fatalf("%s, %d units: template sends\n%q\nwant\n%q", name, k, got, want)
			}
		}
	}
}

// The fast paths of readBools accept exactly what the general parser
// accepts, whatever the buffering.
func TestReadBoolsFastPath(t *testing.T) {
	var in strings.Builder
	in.WriteString("*100\r\n")
	for i := 0; i < 100; i++ {
		in.WriteString([]string{":0\r\n", ":1\r\n"}[i%2])
	}
	for _, size := range []int{16, 17, 64, 4096} {
		r := &reader{br: bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(in.String())), size)}
		if err := readBools(r, 100, false); err != nil {
			t.Fatalf("buffer %d: %v", size, err)
		}
		r = &reader{br: bufio.NewReaderSize(strings.NewReader(in.String()), size)}
		if err := readBools(r, 100, true); err == nil {
			t.Fatalf("buffer %d: a 0 passed the must-be-1 check", size)
		}
	}
	bad := strings.Replace(in.String(), ":1\r\n", ":2\r\n", 1)
	r := &reader{br: bufioReader(bad)}
	if err := readBools(r, 100, false); err == nil {
		t.Fatal(":2 accepted inside an array")
	}
}
