package fuse

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// sizes returns full or -short key counts.
func size(full, short int) int {
	if filtertest.Short() {
		return short
	}
	return full
}

// query is what the generic tests need from a Filter of either width.
type query interface {
	bloomery.Filter
	bloomery.BatchQuerier
	UnmarshalBinary([]byte) error
}

type variantT struct {
	name  string
	arity int
	bits  int
	kind  bloomery.Kind
	build func(hs []uint64, p Params) (query, error)
	// decode decodes into a filter of the variant's width.
	decode func(data []byte, want hashing.Expect) (query, error)
	empty  func() query
}

func mk[T Fingerprint](name string, arity int, kind bloomery.Kind) variantT {
	return variantT{
		name: name, arity: arity, bits: fingerprintBits[T](), kind: kind,
		build: func(hs []uint64, p Params) (query, error) {
			p.Arity = arity
			return Build[T](hs, p)
		},
		decode: func(data []byte, want hashing.Expect) (query, error) { return Decode[T](data, want) },
		empty:  func() query { return new(Filter[T]) },
	}
}

var variants = []variantT{
	mk[uint8]("fuse8", 3, bloomery.KindFuse8),
	mk[uint16]("fuse16", 3, bloomery.KindFuse16),
	mk[uint8]("fuse8-4", 4, bloomery.KindFuse8x4),
	mk[uint16]("fuse16-4", 4, bloomery.KindFuse16x4),
}

// TestSizingTable pins the sizing function to the published bits/key of
// 8-bit binary fuse filters (algorithms.md §6, identical to the Go
// library's array sizes) and the segment lengths from the formulas.
func TestSizingTable(t *testing.T) {
	tests := []struct {
		n            int
		bits3, bits4 float64
		seg3, seg4   uint64
	}{
		{1_000, 11.26, 11.01, 128, 32},
		{10_000, 10.24, 9.83, 512, 256},
		{100_000, 9.50, 9.01, 2048, 1024},
		{1_000_000, 9.04, 8.62, 8192, 4096},
		{10_000_000, 9.02, 8.61, 32768, 16384},
		{100_000_000, 9.01, 8.60, 131072, 65536},
	}
	for _, tc := range tests {
		for _, c := range []struct {
			arity int
			bits  float64
			seg   uint64
		}{{3, tc.bits3, tc.seg3}, {4, tc.bits4, tc.seg4}} {
			got := BitsPerKey(c.arity, 8, tc.n)
			if math.Abs(got-c.bits) > 0.005 {
				t.Errorf("n=%d arity=%d: %.4f bits/key, published %.2f", tc.n, c.arity, got, c.bits)
			}
			if g := newGeometry(c.arity, tc.n); g.segLen != c.seg {
				t.Errorf("n=%d arity=%d: segment length %d, formula gives %d", tc.n, c.arity, g.segLen, c.seg)
			}
			if got16 := BitsPerKey(c.arity, 16, tc.n); got16 != 2*got {
				t.Errorf("n=%d arity=%d: 16-bit %.4f bits/key, want twice %.4f", tc.n, c.arity, got16, got)
			}
			if sb := SizeBytes(c.arity, 8, tc.n); float64(sb)*8/float64(tc.n) != got {
				t.Errorf("n=%d arity=%d: SizeBytes %d disagrees with BitsPerKey %.4f", tc.n, c.arity, sb, got)
			}
		}
	}
	// The segment length is capped at 2^18 and the factor floors at
	// 1.125 / 1.075.
	// (n = 2^31 is MaxKeys; an int holds it only on 64-bit platforms.)
	if n := uint64(1) << 31; n <= math.MaxInt {
		if g := newGeometry(3, int(n)); g.segLen != 1<<18 {
			t.Errorf("n=2^31: segment length %d, want the 2^18 cap", g.segLen)
		}
	}
	if f := sizeFactor(3, 1e9); f != 1.125 {
		t.Errorf("arity 3 factor at 1e9 = %v, want 1.125", f)
	}
	if f := sizeFactor(4, 1e9); f != 1.075 {
		t.Errorf("arity 4 factor at 1e9 = %v, want 1.075", f)
	}
	for _, bad := range [][3]int{{2, 8, 10}, {3, 12, 10}, {3, 8, 0}} {
		if BitsPerKey(bad[0], bad[1], bad[2]) != 0 || SizeBytes(bad[0], bad[1], bad[2]) != 0 {
			t.Errorf("BitsPerKey%v should be 0", bad)
		}
	}
}

// TestBitsPerKeyTarget builds 10^7 keys and checks the space
// targets: <= 9.05 bits/key (3-wise) and <= 8.65 (4-wise), 8-bit. Under
// -short or -race it builds 10^6 keys (9.044 and 8.618 bits/key), which
// must meet the same bounds.
func TestBitsPerKeyTarget(t *testing.T) {
	n := size(10_000_000, 1_000_000)
	if filtertest.RaceEnabled {
		n = 1_000_000
	}
	hs := filtertest.Hashes(n, 11)
	var b Builder[uint8]
	for _, c := range []struct {
		arity int
		max   float64
	}{{3, 9.05}, {4, 8.65}} {
		f, err := b.Build(hs, Params{Arity: c.arity})
		if err != nil {
			t.Fatal(err)
		}
		got := float64(f.SizeBytes()) * 8 / float64(n)
		if got > c.max {
			t.Errorf("arity %d, n=%d: %.4f bits/key > %.2f", c.arity, n, got, c.max)
		}
		if st := f.Stats(); st.BitsPerKey != got {
			t.Errorf("Stats().BitsPerKey %.4f != %.4f", st.BitsPerKey, got)
		}
		t.Logf("arity %d, n=%d: %.4f bits/key (target <= %.2f)", c.arity, n, got, c.max)
		// Membership is checked at 10^6 keys elsewhere; spot-check here.
		filtertest.NoFalseNegatives(t, fmt.Sprintf("arity %d n=%d", c.arity, n), f.ContainsHash, hs[:100_000])
	}
}

// TestNoFalseNegatives: 10^6 keys per variant, before and after a
// marshal/unmarshal round trip, through the batch query too.
func TestNoFalseNegatives(t *testing.T) {
	n := size(1_000_000, 100_000)
	hs := filtertest.Hashes(n, 1)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f, err := v.build(hs, Params{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind() != v.kind || f.Len() != n {
				t.Fatalf("kind %v len %d, want %v %d", f.Kind(), f.Len(), v.kind, n)
			}
			filtertest.NoFalseNegatives(t, "built", f.ContainsHash, hs)
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			g := v.empty()
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			filtertest.NoFalseNegatives(t, "unmarshalled", g.ContainsHash, hs)
			again, _ := g.MarshalBinary()
			if !bytes.Equal(data, again) {
				t.Fatal("re-encoding differs")
			}
			out := make([]bool, len(hs))
			g.ContainsBatch(hs, out)
			if i := slices.Index(out, false); i >= 0 {
				t.Fatalf("ContainsBatch: false negative at %d", i)
			}
			// AppendBinary appends after existing bytes.
			pre := []byte("prefix")
			app, _ := f.AppendBinary(pre)
			if !bytes.Equal(app[:6], pre) || !bytes.Equal(app[6:], data) {
				t.Fatal("AppendBinary did not append the encoding")
			}
		})
	}
}

// TestBuilderReuse: one Builder reused across builds of different sizes
// and arities; every filter keeps answering for its own keys afterwards
// (filters never alias the builder).
func TestBuilderReuse(t *testing.T) {
	var b Builder[uint16]
	sizes := []int{size(1_000_000, 100_000), 1000, size(500_000, 50_000), 3, 0, 20_000}
	var filters []*Filter[uint16]
	var sets [][]uint64
	for i, n := range sizes {
		hs := filtertest.Hashes(n, uint64(100+i))
		f, err := b.Build(hs, Params{Arity: 3 + i%2})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Build[uint16](hs, Params{Arity: 3 + i%2})
		d1, _ := f.MarshalBinary()
		d2, _ := want.MarshalBinary()
		if !bytes.Equal(d1, d2) {
			t.Fatalf("build %d: Builder and Build disagree", i)
		}
		filters = append(filters, f)
		sets = append(sets, hs)
	}
	for i, f := range filters {
		filtertest.NoFalseNegatives(t, fmt.Sprintf("build %d (n=%d) after reuse", i, sizes[i]), f.ContainsHash, sets[i])
	}
	b.Reset()
	if f, err := b.Build(sets[1], Params{}); err != nil || f.Len() != sizes[1] {
		t.Fatalf("after Reset: %v", err)
	}
}

// TestDuplicates: duplicates never make construction fail, and Len counts
// distinct keys.
func TestDuplicates(t *testing.T) {
	distinct := filtertest.Hashes(size(200_000, 20_000), 3)
	cases := map[string][]uint64{
		"each key 5 times shuffled": func() []uint64 {
			var out []uint64
			for range 5 {
				out = append(out, distinct...)
			}
			s := filtertest.SplitMix64(9)
			for i := len(out) - 1; i > 0; i-- {
				j := int(s.Next() % uint64(i+1))
				out[i], out[j] = out[j], out[i]
			}
			return out
		}(),
		"adjacent pairs": func() []uint64 {
			var out []uint64
			for _, h := range distinct {
				out = append(out, h, h)
			}
			return out
		}(),
		"one key 10000 times": slices.Repeat([]uint64{42}, 10_000),
		"100 keys 300 times":  slices.Repeat(distinct[:100], 300),
	}
	for name, hs := range cases {
		want := len(slices.Compact(slices.Sorted(slices.Values(hs))))
		for _, v := range variants {
			t.Run(name+"/"+v.name, func(t *testing.T) {
				before := slices.Clone(hs)
				f, err := v.build(hs, Params{})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(before, hs) {
					t.Fatal("Build modified its input")
				}
				if f.Len() != want {
					t.Errorf("Len %d, want %d distinct", f.Len(), want)
				}
				filtertest.NoFalseNegatives(t, name, f.ContainsHash, hs)
			})
		}
	}
}

// TestFPR measures the false-positive rate against 2^-f.
func TestFPR(t *testing.T) {
	n := size(1_000_000, 100_000)
	hs := filtertest.Hashes(n, 1)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f, err := v.build(hs, Params{})
			if err != nil {
				t.Fatal(err)
			}
			probes := size(2_000_000, 200_000)
			if v.bits == 16 && !filtertest.RaceEnabled {
				// 2*10^7 probes see about 300 false positives: the
				// +-15% bound is then about 2.6 sigma; CheckFPR uses
				// 5 sigma when that is wider. (Under -race, 2*10^6
				// probes and the 5-sigma bound keep the run short.)
				probes = size(20_000_000, 1_000_000)
			}
			want := math.Ldexp(1, -v.bits)
			if math.Abs(f.EstimatedFPR()-want) > 1e-12*want || f.Stats().DesignFPR != f.EstimatedFPR() {
				t.Errorf("EstimatedFPR %v, want 2^-%d", f.EstimatedFPR(), v.bits)
			}
			got := filtertest.MeasureFPR(f.ContainsHash, probes, 77)
			filtertest.CheckFPR(t, v.name, got, want, 0.15, probes)
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	hs := filtertest.Hashes(10_000, 1)
	keys := filtertest.Keys(100, 1)
	out := make([]bool, 1000)
	for _, v := range variants {
		f, err := v.build(hs, Params{})
		if err != nil {
			t.Fatal(err)
		}
		filtertest.ZeroAllocs(t, v.name+" ContainsHash", func() { f.ContainsHash(hs[7]) })
		filtertest.ZeroAllocs(t, v.name+" Contains", func() { f.Contains(keys[3]) })
		filtertest.ZeroAllocs(t, v.name+" ContainsString", func() { f.ContainsString("some key") })
		filtertest.ZeroAllocs(t, v.name+" ContainsBatch", func() { f.ContainsBatch(hs[:1000], out) })
	}
}

// TestSmall covers 0, 1, 2, 3 and 100 keys for every variant.
func TestSmall(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100} {
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/n=%d", v.name, n), func(t *testing.T) {
				hs := filtertest.Hashes(n, 5)
				f, err := v.build(hs, Params{})
				if err != nil {
					t.Fatal(err)
				}
				if f.Len() != n {
					t.Fatalf("Len %d", f.Len())
				}
				filtertest.NoFalseNegatives(t, "small", f.ContainsHash, hs)
				data, _ := f.MarshalBinary()
				g, err := v.decode(data, hashing.Expect{})
				if err != nil {
					t.Fatal(err)
				}
				filtertest.NoFalseNegatives(t, "small decoded", g.ContainsHash, hs)
				st := g.Stats()
				if st.Kind != v.kind || st.Len != n || st.FingerprintBits != v.bits {
					t.Errorf("Stats %+v", st)
				}
				if n == 0 {
					fp := filtertest.MeasureFPR(g.ContainsHash, 10_000, 3)
					if fp != 0 || g.EstimatedFPR() != 0 || g.SizeBytes() != 0 {
						t.Errorf("empty filter: FPR %v, estimated %v, size %d", fp, g.EstimatedFPR(), g.SizeBytes())
					}
					out := []bool{true, true}
					g.ContainsBatch([]uint64{1, 2}, out)
					if out[0] || out[1] {
						t.Error("empty filter: ContainsBatch answered true")
					}
				}
			})
		}
	}
}

// TestBatch checks ContainsBatch against ContainsHash at group edges.
func TestBatch(t *testing.T) {
	for _, n := range []int{1, 1000, 100_000} {
		hs := filtertest.Hashes(n, 1)
		probes := append(filtertest.Hashes(5000, 9), hs...)
		out := make([]bool, len(probes)+1)
		for _, v := range variants {
			f, err := v.build(hs, Params{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []int{0, 1, 31, 32, 33, 63, 64, 65, 1000, len(probes)} {
				out[c] = true // must stay untouched beyond len(hashes)
				f.ContainsBatch(probes[:c], out)
				for i := range c {
					if out[i] != f.ContainsHash(probes[i]) {
						t.Fatalf("%s n=%d batch of %d: out[%d] differs from ContainsHash", v.name, n, c, i)
					}
				}
				if !out[c] {
					t.Fatalf("%s: ContainsBatch wrote past len(hashes)", v.name)
				}
			}
		}
	}
}

func TestBuildKeysAndHashers(t *testing.T) {
	keys := filtertest.Keys(50_000, 8)
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(99), hashing.SipHash([16]byte{1, 2, 3})} {
		f, err := BuildKeys[uint8](keys, Params{Hasher: h, Arity: 4})
		if err != nil {
			t.Fatal(err)
		}
		if !f.Hasher().Equal(h) {
			t.Fatalf("Hasher %v, want %v", f.Hasher(), h)
		}
		for _, k := range keys {
			if !f.Contains(k) || !f.ContainsString(string(k)) {
				t.Fatalf("%v: false negative for %q", h, k)
			}
		}
		data, _ := f.MarshalBinary()
		if h.Keyed() {
			if _, err := Decode[uint8](data, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
				t.Fatalf("keyed filter without key: %v", err)
			}
			var g Filter[uint8]
			if err := g.UnmarshalBinary(data); !errors.Is(err, bloomery.ErrKeyRequired) {
				t.Fatalf("UnmarshalBinary of keyed filter: %v", err)
			}
			other := hashing.SipHash([16]byte{9})
			if _, err := Decode[uint8](data, hashing.Want(other)); !errors.Is(err, bloomery.ErrIncompatible) {
				t.Fatalf("wrong key: %v", err)
			}
			kl, err := Decode[uint8](data, hashing.Expect{Keyless: true})
			if err != nil || !kl.ContainsHash(h.Sum64(keys[0])) {
				t.Fatalf("keyless decode: %v", err)
			}
		}
		g, err := Decode[uint8](data, hashing.Want(h))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !g.Contains(k) {
				t.Fatalf("%v decoded: false negative for %q", h, k)
			}
		}
	}
	var b Builder[uint16]
	for i := range 3 {
		ks := filtertest.Keys(1000*(i+1), uint64(i))
		f, err := b.BuildKeys(ks, Params{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if !f.Contains(k) {
				t.Fatal("Builder.BuildKeys: false negative")
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	hs := filtertest.Hashes(10_000, 4)
	a, _ := Build[uint8](hs, Params{Seed: 5})
	b, _ := Build[uint8](slices.Clone(hs), Params{Seed: 5})
	c, _ := Build[uint8](hs, Params{Seed: 6})
	da, _ := a.MarshalBinary()
	db, _ := b.MarshalBinary()
	dc, _ := c.MarshalBinary()
	if !bytes.Equal(da, db) {
		t.Error("same input, different bytes")
	}
	if bytes.Equal(da, dc) {
		t.Error("different Params.Seed, same bytes")
	}
}

func TestInvalidParams(t *testing.T) {
	for _, a := range []int{1, 2, 5, -3} {
		if _, err := Build[uint8]([]uint64{1, 2}, Params{Arity: a}); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("arity %d: %v", a, err)
		}
	}
}

// TestBuildFailed checks the error of a construction that runs out of
// attempts (forced by allowing none).
func TestBuildFailed(t *testing.T) {
	var b Builder[uint8]
	_, err := b.build(filtertest.Hashes(100, 1), Params{}, 0)
	if !errors.Is(err, bloomery.ErrBuildFailed) {
		t.Fatalf("got %v, want ErrBuildFailed", err)
	}
	if _, err := b.Build(filtertest.Hashes(100, 1), Params{}); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeErrors(t *testing.T) {
	hs := filtertest.Hashes(1000, 1)
	f8, _ := Build[uint8](hs, Params{})
	data, _ := f8.MarshalBinary()

	if _, err := Decode[uint16](data, hashing.Expect{}); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("fuse8 decoded as 16-bit: %v", err)
	}
	for _, cut := range []int{0, 3, 20, len(data) / 2, len(data) - 1} {
		if _, err := Decode[uint8](data[:cut], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("truncated to %d: %v", cut, err)
		}
	}
	bad := slices.Clone(data)
	bad[len(bad)-10] ^= 1
	if _, err := Decode[uint8](bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("flipped payload bit: %v", err)
	}
	var g Filter[uint8]
	if err := g.UnmarshalBinary(bad); err == nil || g.Len() != 0 {
		t.Error("UnmarshalBinary accepted corrupt data or modified the filter")
	}

	// Re-frame altered params or layouts with a valid checksum, so that
	// the family's own checks are exercised.
	_, params, payload := split(t, data)
	reframe := func(layout byte, p, pl []byte) []byte {
		return appendEnvelope(bloomery.KindFuse8, layout, p, pl)
	}
	if _, err := Decode[uint8](reframe(Layout, params, payload), hashing.Expect{}); err != nil {
		t.Fatalf("re-framed original: %v", err)
	}
	if _, err := Decode[uint8](reframe(2, params, payload), hashing.Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Errorf("layout 2: %v", err)
	}
	mut := func(off int, v byte) []byte {
		p := slices.Clone(params)
		p[off] = v
		return p
	}
	for name, p := range map[string][]byte{
		"arity 4 in fuse8":   mut(0, 4),
		"16-bit in fuse8":    mut(1, 16),
		"segment log 1":      mut(2, 1),
		"segment log 19":     mut(2, 19),
		"segment log +1":     mut(2, params[2]+1),
		"zero segments":      append(slices.Clone(params[:19]), make([]byte, 8)...),
		"huge segment count": append(slices.Clone(params[:19]), 0, 0, 0, 0, 0, 0, 0, 0x80),
		"short params":       params[:len(params)-1],
		"long params":        append(slices.Clone(params), 0),
		"n > cells":          append(append(slices.Clone(params[:11]), 0, 0, 0, 0, 1, 0, 0, 0), params[19:]...),
		"empty with segs":    append(append(slices.Clone(params[:11]), make([]byte, 8)...), params[19:]...),
	} {
		if _, err := Decode[uint8](reframe(Layout, p, payload), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Decode[uint8](reframe(Layout, params, payload[1:]), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("short payload accepted")
	}
}
