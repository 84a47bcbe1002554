package sbbf

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var xxh3Hasher = hashing.XXH3(7)

func million() int {
	if filtertest.Short() {
		return 100_000
	}
	return 1_000_000
}

func TestNoFalseNegativesAndFPR(t *testing.T) {
	n := million()
	hashes := filtertest.Hashes(n, 1)
	f, err := New(Params{Capacity: n, BitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		f.AddHash(h)
	}
	lambda := float64(n) / float64(f.NumBlocks())
	want := fpmath.SBBFFPR(lambda)
	if math.Abs(want-0.01265) > 0.0001 {
		t.Fatalf("10 bits/key: formula gives %.5f", want)
	}
	check := func(what string, g *Filter) {
		filtertest.NoFalseNegatives(t, what, g.ContainsHash, hashes)
		out := make([]bool, len(hashes))
		g.ContainsBatch(hashes, out)
		for i, ok := range out {
			if !ok {
				t.Fatalf("%s: ContainsBatch missed %#x", what, hashes[i])
			}
		}
		probes := million()
		filtertest.CheckFPR(t, what, filtertest.MeasureFPR(g.ContainsHash, probes, 2), want, 0.15, probes)
		if est := g.EstimatedFPR(); math.Abs(est-want)/want > 0.05 {
			t.Errorf("%s: EstimatedFPR %.5f, formula %.5f", what, est, want)
		}
		if c := g.ContentFPR(); math.Abs(c-want)/want > 0.05 {
			t.Errorf("%s: ContentFPR %.5f, formula %.5f", what, c, want)
		}
	}
	check("10 bits/key", f)
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	check("10 bits/key decoded", &g)
	if g.Len() != f.Len() || g.Cap() != n || g.Stats().DesignFPR != f.Stats().DesignFPR {
		t.Error("container round trip lost params")
	}
	pq, err := f.AppendParquet(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, used, err := ParseParquet(pq)
	if err != nil || used != len(pq) {
		t.Fatal(err)
	}
	check("10 bits/key via Parquet form", p)
	if e := float64(p.Len()); math.Abs(e-float64(n))/float64(n) > 0.02 {
		t.Errorf("Len estimated from fill: %v, want about %d", e, n)
	}
}

// TestSizing checks that the Poisson sizing meets its target (measured)
// and that Arrow's sizing, without its power-of-two round-up, misses it.
func TestSizing(t *testing.T) {
	n := million()
	hashes := filtertest.Hashes(n, 3)
	f, err := NewForCapacity(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		f.AddHash(h)
	}
	bpk := float64(f.SizeBytes()*8) / float64(n)
	probes := million()
	m := filtertest.MeasureFPR(f.ContainsHash, probes, 4)
	filtertest.CheckFPR(t, "Poisson sizing for 1%", m, f.Stats().DesignFPR, 0.15, probes)
	if f.Stats().DesignFPR > 0.01 || bpk < 10.5 || bpk > 10.6 {
		t.Errorf("Poisson sizing for 1%%: %.3f bits/key, design %.5f", bpk, f.Stats().DesignFPR)
	}
	t.Logf("Poisson sizing for 1%%: %.3f bits/key, measured FPR %.4f%%", bpk, 100*m)

	// Arrow's formula before rounding: 9.68 bits/key, about 1.46%.
	ab := fpmath.ArrowSBBFBits(float64(n), 0.01)
	g, _ := New(Params{Capacity: n, BitsPerKey: ab / float64(n)})
	for _, h := range hashes {
		g.AddHash(h)
	}
	ma := filtertest.MeasureFPR(g.ContainsHash, probes, 4)
	filtertest.CheckFPR(t, "Arrow formula for 1%", ma, fpmath.SBBFFPR(float64(n)/float64(g.NumBlocks())), 0.15, probes)
	if ma < 0.013 {
		t.Errorf("Arrow's formula measured %.4f%%; expected about 1.46%%", 100*ma)
	}
	t.Logf("Arrow formula for 1%%: %.3f bits/key, measured FPR %.4f%% (target 1%%)", ab/float64(n), 100*ma)

	if got := ArrowBytes(100_000, 0.01); got != 131072 {
		t.Errorf("ArrowBytes(1e5, 1%%) = %d, arrow-go writes 131072", got)
	}
	if ArrowBytes(1, 0.5) != 32 || ArrowBytes(math.MaxInt, 0.001) != ArrowMaxBytes {
		t.Error("ArrowBytes clamps")
	}
	a, _ := New(Params{Capacity: 100_000, FPR: 0.01, Sizing: SizingArrow})
	if a.SizeBytes() != 131072 {
		t.Errorf("SizingArrow: %d bytes", a.SizeBytes())
	}
	// Non-power-of-two sizes work.
	odd, _ := New(Params{Bytes: 32 * 1001})
	for _, h := range hashes[:20000] {
		odd.AddHash(h)
	}
	filtertest.NoFalseNegatives(t, "1001 blocks", odd.ContainsHash, hashes[:20000])
}

func TestUnionAndStats(t *testing.T) {
	n := million() / 2
	a, _ := NewForCapacity(2*n, 0.01)
	b, _ := NewForCapacity(2*n, 0.01)
	ha, hb := filtertest.Hashes(n, 5), filtertest.Hashes(n, 6)
	for i := range ha {
		if !a.AddHash(ha[i]) && i < 10 {
			t.Fatal("a fresh key reported as present")
		}
		b.AddHash(hb[i])
	}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "merged (a)", m.ContainsHash, ha)
	filtertest.NoFalseNegatives(t, "merged (b)", m.ContainsHash, hb)
	filtertest.NoFalseNegatives(t, "a unchanged", a.ContainsHash, ha)
	probes := million()
	filtertest.CheckFPR(t, "merged", filtertest.MeasureFPR(m.ContainsHash, probes, 7),
		fpmath.SBBFFPR(float64(2*n)/float64(m.NumBlocks())), 0.15, probes)
	enc, _ := m.MarshalBinary()
	d, err := Decode(enc, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "merged decoded", d.ContainsHash, ha)
	filtertest.NoFalseNegatives(t, "merged decoded", d.ContainsHash, hb)

	c, _ := New(Params{Bytes: a.SizeBytes() + 32})
	if _, err := Merge(a, c); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("size mismatch: %v", err)
	}
	x, _ := New(Params{Bytes: a.SizeBytes(), Hasher: xxh3Hasher})
	if _, err := Merge(a, x); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("hasher mismatch: %v", err)
	}

	s := m.Stats()
	if s.Kind != bloomery.KindSBBF || s.HashFuncs != 8 || s.Overfilled || s.FillRatio <= 0 {
		t.Errorf("stats %+v", s)
	}
	// Overfill: 3x the capacity.
	o, _ := NewForCapacity(10000, 0.01)
	for _, h := range filtertest.Hashes(30000, 8) {
		o.AddHash(h)
	}
	if !o.Stats().Overfilled {
		t.Errorf("3x overfilled filter not flagged: %+v", o.Stats())
	}
}

func TestHashHelpers(t *testing.T) {
	// XXH64 seed 0 known answers: empty input and "abc".
	if h := HashBytes(nil); h != 0xef46db3751d8e999 {
		t.Errorf("XXH64(\"\") = %#x", h)
	}
	if h := HashString("abc"); h != 0x44bc2cf5ad770999 {
		t.Errorf("XXH64(\"abc\") = %#x", h)
	}
	if HashInt32(1) != HashBytes([]byte{1, 0, 0, 0}) || HashInt64(-2) != HashBytes([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
		t.Error("integer PLAIN encodings")
	}
	if HashFloat32(1) != HashBytes([]byte{0, 0, 0x80, 0x3f}) || HashFloat64(1) != HashBytes([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}) {
		t.Error("float PLAIN encodings")
	}
	if HashInt96([12]byte{1}) != HashBytes([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Error("INT96")
	}
	filtertest.ZeroAllocs(t, "HashInt64", func() { HashInt64(42) })
	filtertest.ZeroAllocs(t, "HashFloat64", func() { HashFloat64(4.2) })
}

func TestZeroAllocs(t *testing.T) {
	f, _ := NewForCapacity(1000, 0.01)
	key := []byte("key")
	hs := filtertest.Hashes(16, 1)
	out := make([]bool, 16)
	filtertest.ZeroAllocs(t, "Add", func() { f.Add(key) })
	filtertest.ZeroAllocs(t, "AddString", func() { f.AddString("key") })
	filtertest.ZeroAllocs(t, "AddHash", func() { f.AddHash(hs[3]) })
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(key) })
	filtertest.ZeroAllocs(t, "ContainsString", func() { f.ContainsString("key") })
	filtertest.ZeroAllocs(t, "ContainsHash", func() { f.ContainsHash(hs[5]) })
	filtertest.ZeroAllocs(t, "ContainsBatch", func() { f.ContainsBatch(hs, out) })
}

func TestParamsErrors(t *testing.T) {
	for _, p := range []Params{{}, {Capacity: -1}, {Capacity: 10, FPR: 1}, {Capacity: 10, FPR: -1}, {Bytes: 33}, {Bytes: -32},
		{Capacity: 10, BitsPerKey: -1}, {Capacity: 10, Sizing: 9}, {Capacity: math.MaxInt, FPR: 1e-9}} {
		if _, err := New(p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: %v, want ErrInvalidParams", p, err)
		}
	}
	f, _ := New(Params{Capacity: 10})
	if f.Hasher() != Parquet || f.Stats().DesignFPR > 0.01 {
		t.Errorf("defaults: %v, %v", f.Hasher(), f.Stats().DesignFPR)
	}
	enc, _ := f.MarshalBinary()
	enc[len(enc)-5] ^= 1 // payload bit flip: checksum
	if _, err := Decode(enc, hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("bit flip: %v", err)
	}
}

type goldenCase struct {
	f    *Filter
	keys [][]byte
}

func goldenCases(t *testing.T) map[string]goldenCase {
	keys := filtertest.Keys(1000, 42)
	pq, err := NewForCapacity(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := New(Params{Capacity: 1000, BitsPerKey: 16, Hasher: xxh3Hasher})
	for _, k := range keys {
		pq.Add(k)
		x.Add(k)
	}
	empty, _ := New(Params{Bytes: 32})
	return map[string]goldenCase{
		"parquet-1000-fpr1pct": {pq, keys},
		"xxh3-1000-16bpk":      {x, keys},
		"empty-32B":            {empty, nil},
	}
}

func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "v1")
	for name, c := range goldenCases(t) {
		path := filepath.Join(dir, name+".blmy")
		enc, _ := c.f.MarshalBinary()
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.f.Hasher().Equal(Parquet) {
				pq, _ := c.f.AppendParquet(nil)
				if err := os.WriteFile(filepath.Join(dir, name+".parquet-bloom"), pq, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create)", err)
		}
		d, err := Decode(data, hashing.Expect{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range c.keys {
			if !d.Contains(k) {
				t.Fatalf("%s: golden filter misses %q", name, k)
			}
		}
		re, _ := d.MarshalBinary()
		if !bytes.Equal(enc, data) && filtertest.AlignDesignFPR(&c.f.design, d.design) {
			enc, _ = c.f.MarshalBinary()
		}
		if !bytes.Equal(re, data) || !bytes.Equal(enc, data) {
			t.Fatalf("%s: encoding differs from the golden file", name)
		}
		if c.f.Hasher().Equal(Parquet) {
			raw, err := os.ReadFile(filepath.Join(dir, name+".parquet-bloom"))
			if err != nil {
				t.Fatal(err)
			}
			p, used, err := ParseParquet(raw)
			if err != nil || used != len(raw) || !bytes.Equal(p.Bitset(), d.Bitset()) {
				t.Fatalf("%s: Parquet golden: %v", name, err)
			}
		}
	}
}

func BenchmarkContainsHash(b *testing.B) {
	for _, n := range []int{100_000, 10_000_000} {
		f, _ := NewForCapacity(n, 0.01)
		for _, h := range filtertest.Hashes(n, 1) {
			f.AddHash(h)
		}
		probes := filtertest.Hashes(1<<16, 2)
		b.Run(map[int]string{100_000: "n=1e5", 10_000_000: "n=1e7"}[n], func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.ContainsHash(probes[i&(1<<16-1)])
				i++
			}
		})
	}
}

func BenchmarkAddHash(b *testing.B) {
	f, _ := NewForCapacity(10_000_000, 0.01)
	hs := filtertest.Hashes(1<<16, 3)
	i := 0
	for b.Loop() {
		f.AddHash(hs[i&(1<<16-1)])
		i++
	}
}
