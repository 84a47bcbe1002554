package bloom

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// million is the key count of the full-size tests; -short shrinks it.
func million() int {
	if filtertest.Short() {
		return 100_000
	}
	return 1_000_000
}

// kinds runs fn for a standard and a blocked filter made from p.
type anyFilter interface {
	bloomery.Adder
	K() int
	Bits() uint64
	FillRatio() float64
	DesignFPR() float64
	ApproxCount() int
	Overfilled() bool
}

func newBoth(t testing.TB, p Params) []anyFilter {
	t.Helper()
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBlocked(p)
	if err != nil {
		t.Fatal(err)
	}
	return []anyFilter{f, b}
}

func TestNoFalseNegatives(t *testing.T) {
	t.Parallel()
	n := million()
	for _, size := range []int{1000, 100_000, n} {
		keys := filtertest.Hashes(size, 1)
		for _, f := range newBoth(t, Params{Capacity: size, FPR: 0.01}) {
			name := fmt.Sprintf("%v/n=%d", f.Kind(), size)
			added := 0
			for _, h := range keys {
				if f.AddHash(h) {
					added++
				}
			}
			if f.Len() != added {
				t.Errorf("%s: Len %d, %d adds reported new", name, f.Len(), added)
			}
			// A few keys may collide with earlier ones (false positive at
			// insert), never more than the FPR allows.
			if lost := size - added; float64(lost) > 0.01*float64(size)+10 {
				t.Errorf("%s: %d of %d adds reported not new", name, lost, size)
			}
			filtertest.NoFalseNegatives(t, name, f.ContainsHash, keys)
			for _, h := range keys[:100] {
				if f.AddHash(h) {
					t.Fatalf("%s: re-adding a present key reported new", name)
				}
			}
		}
	}
}

func TestByteAndStringKeys(t *testing.T) {
	keys := filtertest.Keys(20_000, 3)
	for _, f := range newBoth(t, Params{Capacity: len(keys), FPR: 0.001, Hasher: hashing.XXH3(42)}) {
		for i, k := range keys {
			if i%2 == 0 {
				f.Add(k)
			} else {
				f.AddString(string(k))
			}
		}
		for _, k := range keys {
			if !f.Contains(k) || !f.ContainsString(string(k)) {
				t.Fatalf("%v: false negative for %q", f.Kind(), k)
			}
			if !f.ContainsHash(hashing.XXH3(42).Sum64(k)) {
				t.Fatalf("%v: hash variant disagrees for %q", f.Kind(), k)
			}
		}
	}
}

// TestStandardFPR measures the standard filter against (1-e^(-kn/m))^k at
// several bits per key and sizes.
func TestStandardFPR(t *testing.T) {
	t.Parallel()
	n := million()
	probes := 2 * n
	for _, tc := range []struct {
		n   int
		bpk float64
	}{{n, 6}, {n, 10}, {n, 16}, {2000, 10}, {20_000, 8}} {
		f, err := New(Params{Capacity: tc.n, BitsPerKey: tc.bpk})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range filtertest.Hashes(tc.n, 11) {
			f.AddHash(h)
		}
		want := fpmath.StandardFPR(float64(f.Bits()), float64(tc.n), f.K())
		p := probes
		if want < 1e-3 {
			p = 4 * n // 0.046% at 16 bits/key: 4*10^6 probes give 5 sigma = 12%
		}
		got := filtertest.MeasureFPR(f.ContainsHash, p, 12)
		filtertest.CheckFPR(t, fmt.Sprintf("standard n=%d bpk=%v k=%d", tc.n, tc.bpk, f.K()), got, want, 0.15, p)
		// The fill-based estimate tracks the measurement too.
		filtertest.CheckFPR(t, fmt.Sprintf("standard n=%d bpk=%v estimate", tc.n, tc.bpk), got, f.EstimatedFPR(), 0.15, p)
	}
}

// TestBlockedFPR measures the blocked filter against fpmath.BlockedFPR.
func TestBlockedFPR(t *testing.T) {
	t.Parallel()
	n := million()
	for _, bpk := range []float64{6, 10, 16} {
		f, err := NewBlocked(Params{Capacity: n, BitsPerKey: bpk})
		if err != nil {
			t.Fatal(err)
		}
		f.AddBatch(filtertest.Hashes(n, 21))
		want := fpmath.BlockedFPR(float64(f.Bits()), float64(n), f.K(), BlockBits)
		p := 2 * n
		if want < 2e-3 {
			p = 4 * n
		}
		got := filtertest.MeasureFPR(f.ContainsHash, p, 22)
		filtertest.CheckFPR(t, fmt.Sprintf("blocked bpk=%v k=%d", bpk, f.K()), got, want, 0.15, p)
		filtertest.CheckFPR(t, fmt.Sprintf("blocked bpk=%v estimate", bpk), got, f.EstimatedFPR(), 0.15, p)
		// The exact occupancy model (no mean-fill approximation) as well.
		exact := fpmath.BlockedFPRExact(float64(f.Bits()), float64(n), f.K(), BlockBits)
		filtertest.CheckFPR(t, fmt.Sprintf("blocked bpk=%v exact model", bpk), got, exact, 0.15, p)
		if bpk == 10 && got > 0.01 && !filtertest.Short() {
			t.Errorf("blocked at 10 bits/key: measured FPR %.4f%% > 1%%", 100*got)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	n := million() / 4
	keys := filtertest.Hashes(n, 5)
	for _, f := range newBoth(t, Params{Capacity: n, FPR: 0.01, Hasher: hashing.XXH3(7)}) {
		for _, h := range keys {
			f.AddHash(h)
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var g anyFilter
		var buf bytes.Buffer
		switch f := f.(type) {
		case *Filter:
			g, err = Decode(data, hashing.Want(hashing.XXH3(7)))
			if _, err := f.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
		case *Blocked:
			g, err = DecodeBlocked(data, hashing.Want(hashing.XXH3(7)))
			if _, err := f.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("%v: WriteTo differs from MarshalBinary", f.Kind())
		}
		filtertest.NoFalseNegatives(t, f.Kind().String()+" decoded", g.ContainsHash, keys)
		if g.Len() != f.Len() || g.Cap() != f.Cap() || g.K() != f.K() || g.Bits() != f.Bits() || g.DesignFPR() != f.DesignFPR() || g.FillRatio() != f.FillRatio() {
			t.Errorf("%v: decoded stats differ: %+v vs %+v", f.Kind(), g.Stats(), f.Stats())
		}
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Errorf("%v: re-encoding differs", f.Kind())
		}
	}
}

func TestUnion(t *testing.T) {
	t.Parallel()
	n := million() / 2
	a1, b1 := filtertest.Hashes(n, 31), filtertest.Hashes(n, 32)
	fa, fb := newBoth(t, Params{Capacity: 2 * n, FPR: 0.01}), newBoth(t, Params{Capacity: 2 * n, FPR: 0.01})
	for i := range fa {
		for _, h := range a1 {
			fa[i].AddHash(h)
		}
		for _, h := range b1 {
			fb[i].AddHash(h)
		}
		var err error
		switch x := fa[i].(type) {
		case *Filter:
			err = x.Union(fb[i].(*Filter))
		case *Blocked:
			err = x.Union(fb[i].(*Blocked))
		}
		if err != nil {
			t.Fatal(err)
		}
		name := fa[i].Kind().String() + " union"
		filtertest.NoFalseNegatives(t, name, fa[i].ContainsHash, a1)
		filtertest.NoFalseNegatives(t, name, fa[i].ContainsHash, b1)
		if got := fa[i].Len(); math.Abs(float64(got)-float64(2*n)) > 0.02*float64(2*n) {
			t.Errorf("%s: Len %d, want about %d", name, got, 2*n)
		}
	}
}

func TestUnionRefuses(t *testing.T) {
	base := Params{Capacity: 10_000, FPR: 0.01}
	others := map[string]Params{
		"size": {Capacity: 20_000, FPR: 0.01},
		"k":    {Capacity: 10_000, FPR: 0.01, HashFuncs: 3},
		"seed": {Capacity: 10_000, FPR: 0.01, Hasher: hashing.XXH3(1)},
		"alg":  {Capacity: 10_000, FPR: 0.01, Hasher: hashing.XXH64(0)},
		"key":  {Capacity: 10_000, FPR: 0.01, Hasher: hashing.SipHash([16]byte{1})},
	}
	for name, p := range others {
		f, _ := New(base)
		f.AddHash(1)
		g, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		g.AddHash(2)
		before, _ := f.MarshalBinary()
		if err := f.Union(g); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("standard %s: Union error %v, want ErrIncompatible", name, err)
		}
		if after, _ := f.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("standard %s: refused Union changed the receiver", name)
		}
		fb, _ := NewBlocked(base)
		fb.AddHash(1)
		gb, err := NewBlocked(p)
		if err != nil {
			t.Fatal(err)
		}
		gb.AddHash(2)
		before, _ = fb.MarshalBinary()
		if err := fb.Union(gb); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("blocked %s: Union error %v, want ErrIncompatible", name, err)
		}
		if after, _ := fb.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("blocked %s: refused Union changed the receiver", name)
		}
	}
}

// A layout 1 filter (decoded from an older file) and a layout 2 one of
// the same size, k and hasher set different bits for the same key: their
// union is refused, in either direction, and leaves the receiver as it was.
func TestUnionRefusesOtherLayout(t *testing.T) {
	p := Params{Capacity: 10_000, FPR: 0.01}
	f2, _ := New(p)
	f1, err := newLayout1(p)
	if err != nil {
		t.Fatal(err)
	}
	f1.AddHash(1)
	f2.AddHash(2)
	for _, c := range [][2]*Filter{{f1, f2}, {f2, f1}} {
		before, _ := c[0].MarshalBinary()
		if err := c[0].Union(c[1]); !errors.Is(err, bloomery.ErrIncompatible) || !strings.Contains(err.Error(), "layout") {
			t.Errorf("layout %d into %d: %v, want ErrIncompatible naming the layouts", c[1].Layout(), c[0].Layout(), err)
		}
		if after, _ := c[0].MarshalBinary(); !bytes.Equal(before, after) {
			t.Error("refused Union changed the receiver")
		}
	}
	g, _ := newLayout1(p)
	g.AddHash(3)
	if err := f1.Union(g); err != nil || !f1.ContainsHash(1) || !f1.ContainsHash(3) {
		t.Fatalf("union of two layout 1 filters: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	f, _ := NewForCapacity(10_000, 0.01)
	b, _ := NewBlockedForCapacity(10_000, 0.01)
	c, _ := NewBlocked(Params{Capacity: 10_000, FPR: 0.01, Concurrent: true})
	key := []byte("some key of moderate length")
	skey := "another key"
	hs := filtertest.Hashes(100, 9)
	out := make([]bool, len(hs))
	for _, x := range []anyFilter{f, b, c} {
		name := x.Kind().String()
		filtertest.ZeroAllocs(t, name+" Add", func() { x.Add(key) })
		filtertest.ZeroAllocs(t, name+" AddString", func() { x.AddString(skey) })
		filtertest.ZeroAllocs(t, name+" AddHash", func() { x.AddHash(12345) })
		filtertest.ZeroAllocs(t, name+" Contains", func() { x.Contains(key) })
		filtertest.ZeroAllocs(t, name+" ContainsString", func() { x.ContainsString(skey) })
		filtertest.ZeroAllocs(t, name+" ContainsHash", func() { x.ContainsHash(54321) })
	}
	for _, x := range []*Blocked{b, c} {
		filtertest.ZeroAllocs(t, "ContainsBatch", func() { x.ContainsBatch(hs, out) })
		filtertest.ZeroAllocs(t, "AddBatch", func() { x.AddBatch(hs) })
	}
}

func TestBlockedAlignment(t *testing.T) {
	for _, n := range []int{1, 100, 10_000} {
		b, _ := NewBlockedForCapacity(n, 0.01)
		if addr := uintptrOf(b.words); addr%64 != 0 {
			t.Errorf("n=%d: words at %#x, not 64-byte aligned", n, addr)
		}
		c := b.Clone()
		if addr := uintptrOf(c.words); addr%64 != 0 {
			t.Errorf("clone: words at %#x, not 64-byte aligned", addr)
		}
	}
}
