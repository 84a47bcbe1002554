package command

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/server/internal/keyspace"
	"github.com/bloomery/bloomery/server/internal/resp"
)

// testHooks records logged commands; the rest is unused by BF.* commands.
type testHooks struct {
	logged int
	log    [][][]byte
}

func (h *testHooks) Log(args [][]byte, raw []byte) int64 {
	if raw != nil {
		panic("the test server has no raw commands")
	}
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = bytes.Clone(a)
	}
	h.log = append(h.log, cp)
	h.logged++
	return int64(h.logged)
}
func (h *testHooks) LogEnd() int64              { return int64(h.logged) }
func (*testHooks) PersistErr() error            { return nil }
func (*testHooks) Info(string) string           { return "" }
func (*testHooks) Save() error                  { return nil }
func (*testHooks) BGSave() error                { return nil }
func (*testHooks) LastSave() int64              { return 0 }
func (*testHooks) Shutdown(bool, bool) error    { return nil }
func (*testHooks) Config(string) (string, bool) { return "", false }
func (*testHooks) ClientList() string           { return "" }

type testServer struct {
	env   *Env
	hooks *testHooks
	c     *Conn
}

func newTestServer(maxMemory uint64) *testServer {
	h := &testHooks{}
	env := &Env{Store: keyspace.New(), Hooks: h, MaxMemory: maxMemory, MaxFilterBytes: 1 << 30}
	return &testServer{env: env, hooks: h, c: &Conn{Authed: true, W: resp.NewWriter(nil)}}
}

// run executes one command and returns its reply bytes.
func (s *testServer) run(args ...[]byte) []byte {
	s.c.W.Reset()
	s.env.Exec(s.c, args)
	return bytes.Clone(s.c.W.Bytes())
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// TestMAddMatchesAdds: BF.MADD and BF.INSERT of random batches (repeated
// items, false positives, growth, full NONSCALING chains, the memory
// limit) reply exactly what BF.ADD of the same items one by one replies,
// up to and including the first error, log exactly when some item was
// added, and leave identical filters (SCANDUMP header and bits) and
// memory accounting; the log they leave (only the added items) replays
// to the same filter.
func TestMAddMatchesAdds(t *testing.T) {
	type config struct {
		reserve   []string // BF.RESERVE arguments after the key
		maxMemory uint64
	}
	configs := []config{
		{[]string{"0.1", "50"}, 0},
		{[]string{"0.2", "20", "EXPANSION", "1"}, 0},
		{[]string{"0.01", "30", "EXPANSION", "3"}, 0},
		{[]string{"0.1", "200", "NONSCALING"}, 0},
		{[]string{"0.05", "100"}, 4096},
	}
	for ci, cfg := range configs {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			batch, single := newTestServer(cfg.maxMemory), newTestServer(cfg.maxMemory)
			for _, s := range []*testServer{batch, single} {
				if r := s.run(bs(append([]string{"BF.RESERVE", "k"}, cfg.reserve...)...)...); string(r) != "+OK\r\n" {
					t.Fatalf("RESERVE: %q", r)
				}
			}
			rng := filtertest.SplitMix64(uint64(ci + 1))
			errors := 0
			for round := range 150 {
				n := 1 + int(rng.Next()%150)
				items := make([][]byte, n)
				for i := range items {
					items[i] = []byte(fmt.Sprint("i", rng.Next()%3000))
				}
				var got []byte
				logged := batch.hooks.logged
				if round%2 == 0 {
					got = batch.run(append(bs("BF.MADD", "k"), items...)...)
				} else {
					got = batch.run(append(bs("BF.INSERT", "k", "ITEMS"), items...)...)
				}
				var want []byte
				replies, added := 0, false
				for _, it := range items {
					r := single.run([]byte("BF.ADD"), []byte("k"), it)
					want = append(want, r...)
					replies++
					if r[0] == '-' {
						errors++
						break
					}
					added = added || string(r) == ":1\r\n"
				}
				want = append([]byte(fmt.Sprintf("*%d\r\n", replies)), want...)
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d: batch replied\n%q\none by one\n%q", round, got, want)
				}
				if didLog := batch.hooks.logged != logged; didLog != added {
					t.Fatalf("round %d: logged %v, some item added %v", round, didLog, added)
				}
				bb := batch.env.Store.Get([]byte("k")).(keyspace.Bloom)
				sb := single.env.Store.Get([]byte("k")).(keyspace.Bloom)
				if !bytes.Equal(bb.AppendHeader(nil), sb.AppendHeader(nil)) || !bytes.Equal(bb.AppendData(nil), sb.AppendData(nil)) {
					t.Fatalf("round %d: filters differ", round)
				}
				if batch.env.Store.Used() != single.env.Store.Used() {
					t.Fatalf("round %d: used memory %d, one by one %d", round, batch.env.Store.Used(), single.env.Store.Used())
				}
			}
			bb := batch.env.Store.Get([]byte("k")).(keyspace.Bloom)
			// Replaying the log (memory gate off, as at start-up) rebuilds
			// the same filter.
			replay := newTestServer(0)
			replay.env.Replaying = true
			for _, args := range batch.hooks.log {
				replay.run(args...)
			}
			rb := replay.env.Store.Get([]byte("k")).(keyspace.Bloom)
			if !bytes.Equal(bb.AppendHeader(nil), rb.AppendHeader(nil)) || !bytes.Equal(bb.AppendData(nil), rb.AppendData(nil)) {
				t.Fatal("the replayed log gives another filter")
			}
			if cfg.reserve[len(cfg.reserve)-1] == "NONSCALING" || cfg.maxMemory > 0 {
				if errors == 0 {
					t.Fatal("no command hit the limit: the test did not exercise it")
				}
			} else if bb.NumLinks() < 3 {
				t.Fatalf("%d links: the test did not exercise growth", bb.NumLinks())
			}
		})
	}
}
