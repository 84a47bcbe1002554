package pebblefilter

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync"
	"testing"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/cockroachdb/pebble/v2"
)

func key(i uint64) []byte {
	var k [12]byte
	binary.BigEndian.PutUint64(k[:], i)
	copy(k[8:], "key!")
	return k[:]
}

func mustPolicy(t testing.TB, s Spec) pebble.FilterPolicy {
	t.Helper()
	p, err := s.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// build writes a filter of keys [0, n) through the policy's writer, each
// key added dup times in a row (MVCC versions of one prefix).
func build(p pebble.FilterPolicy, n uint64, dup int, dst []byte) []byte {
	w := p.NewWriter(pebble.TableFilter)
	for i := range n {
		for range dup {
			w.AddKey(key(i))
		}
	}
	return w.Finish(dst)
}

// TestFullSize: 10^6 keys, no false negatives, and the FPR over 10^6
// absent keys within 15 % of the model (blocked Bloom: the Poisson
// formula at the realised bits; Ribbon: its target). The queries go
// through the same functions MayContain calls, with one key buffer, so the
// test stays fast under -race.
func TestFullSize(t *testing.T) {
	const n = 1_000_000
	cases := []struct {
		spec  Spec
		query func(filter, key []byte) bool
		want  func(filterLen int) float64
	}{
		{Bloom(10), bloomMayContain, func(l int) float64 {
			return fpmath.BlockedFPR(float64(8*(l-bloomTrailer)), n, bloom.BlockedK(10), 512)
		}},
		{RibbonFPR(0.01), ribbonMayContain, func(int) float64 { return 0.01 }},
	}
	for _, c := range cases {
		t.Run(c.spec.String(), func(t *testing.T) {
			p := mustPolicy(t, c.spec)
			f := build(p, n, 1, nil)
			var kb [12]byte
			copy(kb[8:], "key!")
			k := kb[:]
			for i := range uint64(n) {
				binary.BigEndian.PutUint64(k, i)
				if !c.query(f, k) {
					t.Fatalf("false negative for key %d", i)
				}
			}
			fp := 0
			for i := range uint64(n) {
				binary.BigEndian.PutUint64(k, n+i)
				if c.query(f, k) {
					fp++
				}
			}
			got, want := float64(fp)/n, c.want(len(f))
			t.Logf("%s: %d bytes (%.2f bits/key), FPR %.4f%% (model %.4f%%)", c.spec, len(f), float64(8*len(f))/n, 100*got, 100*want)
			if math.Abs(got-want) > 0.15*want {
				t.Fatalf("FPR %v, model %v", got, want)
			}
		})
	}
}

// TestWriterContract: Finish appends (keeps dst), resets the writer (a
// reused writer gives the bytes of a fresh one), and consecutive duplicate
// prefixes do not change the filter.
func TestWriterContract(t *testing.T) {
	for _, s := range []Spec{Bloom(10), RibbonFPR(0.01)} {
		p := mustPolicy(t, s)
		once := build(p, 5000, 1, nil)
		if thrice := build(p, 5000, 3, nil); !bytes.Equal(once, thrice) {
			t.Errorf("%s: duplicated prefixes change the filter (%d vs %d bytes)", s, len(once), len(thrice))
		}
		prefix := []byte("existing block bytes")
		out := build(p, 5000, 1, append([]byte(nil), prefix...))
		if !bytes.HasPrefix(out, prefix) || !bytes.Equal(out[len(prefix):], once) {
			t.Errorf("%s: Finish did not append to dst", s)
		}
		w := p.NewWriter(pebble.TableFilter)
		for i := range uint64(300) {
			w.AddKey(key(1_000_000 + i))
		}
		w.Finish(nil)
		for i := range uint64(5000) {
			w.AddKey(key(i))
		}
		if again := w.Finish(nil); !bytes.Equal(again, once) {
			t.Errorf("%s: a reused writer differs from a fresh one", s)
		}
	}
}

// TestFailOpen: bytes the reader does not recognise answer true.
func TestFailOpen(t *testing.T) {
	for _, s := range []Spec{Bloom(10), RibbonFPR(0.01)} {
		p := mustPolicy(t, s)
		f := build(p, 2000, 1, nil)
		absent := key(99_999_999)
		if p.MayContain(pebble.TableFilter, f, absent) {
			absent = key(99_999_998) // pick an absent key the filter rejects
		}
		if p.MayContain(pebble.TableFilter, f, absent) {
			t.Fatal("both absent keys are false positives; pick others")
		}
		tl := bloomTrailer
		if s.Family == Ribbon {
			tl = ribbonTrailer
		}
		mutate := func(name string, fn func(b []byte) []byte) {
			b := fn(append([]byte(nil), f...))
			if !p.MayContain(pebble.TableFilter, b, absent) {
				t.Errorf("%s: %s: answered false", s, name)
			}
		}
		mutate("empty", func([]byte) []byte { return nil })
		mutate("trailer only", func(b []byte) []byte { return b[len(b)-tl:] })
		mutate("one byte short", func(b []byte) []byte { return b[1:] })
		mutate("one byte long", func(b []byte) []byte { return append([]byte{0}, b...) })
		for off := 1; off <= 5; off++ {
			mutate("trailer byte -"+string(rune('0'+off)), func(b []byte) []byte { b[len(b)-off]++; return b })
		}
		mutate("zero size field", func(b []byte) []byte { clear(b[len(b)-tl+8 : len(b)-tl+12]); return b })
	}
	// Each format refuses the other's bytes (fail open), and any policy
	// reads both formats' answers through its own name only.
	bf := build(mustPolicy(t, Bloom(10)), 2000, 1, nil)
	rf := build(mustPolicy(t, RibbonFPR(0.01)), 2000, 1, nil)
	if !ribbonMayContain(bf, key(5_000_000)) || !bloomMayContain(rf, key(5_000_000)) {
		t.Error("a format accepted the other's filter")
	}
}

// TestParamsInTrailer: one reader instance answers for filters written
// with any parameters (Pebble keeps one policy per name).
func TestParamsInTrailer(t *testing.T) {
	reader := Filters()
	for _, s := range []Spec{Bloom(3), Bloom(10), Bloom(23.5), RibbonFPR(0.2), RibbonFPR(0.0001)} {
		f := build(mustPolicy(t, s), 20_000, 1, nil)
		r := reader[mustPolicy(t, s).Name()]
		fp := 0
		for i := range uint64(20_000) {
			if !r.MayContain(pebble.TableFilter, f, key(i)) {
				t.Fatalf("%s: false negative through the registered reader", s)
			}
			if r.MayContain(pebble.TableFilter, f, key(1<<40+i)) {
				fp++
			}
		}
		if fp == 20_000 {
			t.Fatalf("%s: the registered reader filters nothing", s)
		}
	}
}

func TestMayContainZeroAllocs(t *testing.T) {
	for _, s := range []Spec{Bloom(10), RibbonFPR(0.01)} {
		p := mustPolicy(t, s)
		f := build(p, 10_000, 1, nil)
		k := key(0)
		var i uint64
		if a := testing.AllocsPerRun(2000, func() {
			i++
			binary.BigEndian.PutUint64(k, i)
			p.MayContain(pebble.TableFilter, f, k)
		}); a != 0 {
			t.Errorf("%s: %v allocations per MayContain", s, a)
		}
	}
}

// TestConcurrentMayContain: many goroutines query shared filters (run
// with -race).
func TestConcurrentMayContain(t *testing.T) {
	specs := []Spec{Bloom(10), RibbonFPR(0.01)}
	var filters [][]byte
	for _, s := range specs {
		filters = append(filters, build(mustPolicy(t, s), 20_000, 1, nil))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, s := range specs {
				p := mustPolicy(t, s)
				for i := range uint64(20_000) {
					if !p.MayContain(pebble.TableFilter, filters[j], key((i+uint64(g)*2500)%20_000)) {
						errs <- s.String()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("%s: false negative under concurrency", e)
	}
}

func TestPolicyValidation(t *testing.T) {
	for _, s := range []Spec{Bloom(0), Bloom(0.5), Bloom(65), Bloom(math.NaN()), RibbonFPR(0), RibbonFPR(0.6), RibbonFPR(math.NaN()), {Family: 9}} {
		if _, err := s.Policy(); err == nil {
			t.Errorf("%v: accepted", s)
		}
	}
	if p, err := (Spec{}).Policy(); err != nil || p != pebble.NoFilterPolicy {
		t.Errorf("zero Spec: %v %v", p, err)
	}
	for name := range Filters() {
		p, err := NewFilterPolicy(name)
		if err != nil || p.Name() != name {
			t.Errorf("NewFilterPolicy(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := NewFilterPolicy("rocksdb.BuiltinBloomFilter"); err == nil {
		t.Error("NewFilterPolicy accepted a foreign name")
	}
}

// FuzzMayContain: any bytes, any key: never a panic. Seeds are valid
// filters of both formats, so mutations explore the trailer and the body.
func FuzzMayContain(f *testing.F) {
	for _, s := range []Spec{Bloom(10), Bloom(2), RibbonFPR(0.01), RibbonFPR(0.3)} {
		p, err := s.Policy()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(build(p, 50, 1, nil), key(3))
		f.Add(build(p, 1, 1, nil), key(70))
	}
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, filter, k []byte) {
		c := append([]byte(nil), filter...)
		bloomMayContain(filter, k)
		ribbonMayContain(filter, k)
		if !bytes.Equal(c, filter) {
			t.Fatal("MayContain modified the filter")
		}
	})
}
