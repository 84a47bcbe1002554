package counting

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func mustNew(t testing.TB, p Params) *Filter {
	t.Helper()
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sizeN(full, short int) int {
	if filtertest.Short() {
		return short
	}
	return full
}

func roundTrip(t testing.TB, f *Filter) *Filter {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(b, hashing.Want(f.Hasher()))
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := g.MarshalBinary(); !bytes.Equal(b, b2) {
		t.Fatal("re-encoding differs")
	}
	if g.nonzero != f.nonzero || g.saturated != f.saturated || g.count != f.count {
		t.Fatalf("decoded stats differ: nonzero %d/%d saturated %d/%d count %d/%d",
			g.nonzero, f.nonzero, g.saturated, f.saturated, g.count, f.count)
	}
	return g
}

// checkTallies verifies the incremental nonzero and saturated tallies.
func checkTallies(t testing.TB, f *Filter) {
	t.Helper()
	g := f.Clone()
	g.recount()
	if g.nonzero != f.nonzero || g.saturated != f.saturated {
		t.Fatalf("tallies: nonzero %d (actual %d), saturated %d (actual %d)", f.nonzero, g.nonzero, f.saturated, g.saturated)
	}
}

var configs = []Params{
	{FPR: 0.01},
	{FPR: 0.01, Blocked: true},
	{FPR: 0.02, CounterBits: 8},
	{FPR: 0.02, CounterBits: 8, Blocked: true},
}

func name(p Params) string {
	cb := p.CounterBits
	if cb == 0 {
		cb = 4
	}
	return fmt.Sprintf("bits=%d/blocked=%v/fpr=%v", cb, p.Blocked, p.FPR)
}

// For each layout: 10^6 keys, no false negatives before and after a round
// trip and after deleting half of them; the measured FPR within ±15% of
// the layout's formula, full and after the deletes.
func TestFilter(t *testing.T) {
	n := sizeN(1_000_000, 100_000)
	for ci, p := range configs {
		t.Run(name(p), func(t *testing.T) {
			p.Capacity = n
			f := mustNew(t, p)
			hs := filtertest.Hashes(n, uint64(10+ci))
			for _, h := range hs {
				f.AddHash(h)
			}
			filtertest.NoFalseNegatives(t, "after adds", f.ContainsHash, hs)
			if f.Len() != n {
				t.Errorf("Len %d, want %d", f.Len(), n)
			}
			probes := 1_000_000
			design := f.DesignFPR()
			if design > p.FPR {
				t.Errorf("design FPR %v above target %v", design, p.FPR)
			}
			got := filtertest.MeasureFPR(f.ContainsHash, probes, 99)
			filtertest.CheckFPR(t, "full vs design formula", got, design, 0.15, probes)
			filtertest.CheckFPR(t, "full vs fill estimate", got, f.EstimatedFPR(), 0.15, probes)

			g := roundTrip(t, f)
			filtertest.NoFalseNegatives(t, "after round trip", g.ContainsHash, hs)
			for i := 0; i < n; i += 2 {
				if !g.DeleteHash(hs[i]) {
					t.Fatalf("delete of added key %d failed", i)
				}
			}
			var rest []uint64
			for i := 1; i < n; i += 2 {
				rest = append(rest, hs[i])
			}
			filtertest.NoFalseNegatives(t, "after deleting the others", g.ContainsHash, rest)
			checkTallies(t, g)
			half := g.fprAt(float64(len(rest)))
			// The FPR at n/2 is ~15x lower: probe more.
			got = filtertest.MeasureFPR(g.ContainsHash, 4*probes, 98)
			filtertest.CheckFPR(t, "after deletes vs formula at n/2", got, half, 0.15, 4*probes)
			filtertest.CheckFPR(t, "after deletes vs fill estimate", got, g.EstimatedFPR(), 0.15, 4*probes)
			if g.Saturated() != 0 {
				t.Errorf("%d saturated counters at design load", g.Saturated())
			}
		})
	}
}

// Saturated counters stick: they are never decremented, so a key whose
// counters saturated stays present after any number of deletes.
func TestSaturationSticky(t *testing.T) {
	for _, cb := range []int{4, 8} {
		f := mustNew(t, Params{Capacity: 1000, FPR: 0.01, CounterBits: cb})
		max := 1<<cb - 1
		const h = 0xabcdef
		for i := 0; i < max+5; i++ {
			f.AddHash(h)
		}
		if c := f.CountHash(h); c != max {
			t.Errorf("c=%d: Count %d, want %d", cb, c, max)
		}
		var buf [MaxK]uint64
		distinct := map[uint64]bool{}
		for _, i := range f.indices(h, &buf) {
			distinct[i] = true
		}
		if f.Saturated() != len(distinct) {
			t.Errorf("c=%d: %d saturated, want %d", cb, f.Saturated(), len(distinct))
		}
		st := f.Stats()
		if st.Extra[0].Name != "saturated" || st.Extra[0].Value != float64(len(distinct)) {
			t.Errorf("stats extra %+v", st.Extra)
		}
		for i := 0; i < 2*max; i++ {
			f.DeleteHash(h)
		}
		if !f.ContainsHash(h) || f.CountHash(h) != max {
			t.Errorf("c=%d: saturated key lost after deletes (Count %d)", cb, f.CountHash(h))
		}
		checkTallies(t, f)
		if f.Len() != 0 {
			t.Errorf("Len %d after more deletes than adds", f.Len())
		}
	}
}

// Deleting a key that is certainly absent changes nothing.
func TestDeleteAbsent(t *testing.T) {
	f := mustNew(t, Params{Capacity: 10000, FPR: 0.01})
	for _, h := range filtertest.Hashes(10000, 1) {
		f.AddHash(h)
	}
	before, _ := f.MarshalBinary()
	refused := 0
	for _, h := range filtertest.Hashes(10000, 2) {
		if !f.ContainsHash(h) {
			if f.DeleteHash(h) {
				t.Fatal("delete of an absent key succeeded")
			}
			refused++
		}
	}
	after, _ := f.MarshalBinary()
	if !bytes.Equal(before, after) || refused < 9000 {
		t.Errorf("refused %d deletes; filter changed: %v", refused, !bytes.Equal(before, after))
	}
}

// Adding a key k times and deleting it k times leaves it absent, and
// Count follows the adds.
func TestRepeatThenDelete(t *testing.T) {
	for _, p := range configs {
		p.Capacity = 50_000
		f := mustNew(t, p)
		bg := filtertest.Hashes(20_000, 3)
		for _, h := range bg {
			f.AddHash(h)
		}
		keys := filtertest.Hashes(5000, 4)
		present := 0
		for i, h := range keys {
			k := 1 + i%10
			before := f.CountHash(h)
			for range k {
				f.AddHash(h)
			}
			// Probes that repeat a counter raise it by 2 per add, so
			// the minimum grows by at least k.
			if c := f.CountHash(h); c < before+k {
				t.Fatalf("%s: Count %d after %d adds (before %d)", name(p), c, k, before)
			}
			for range k {
				if !f.DeleteHash(h) {
					t.Fatal("delete failed")
				}
			}
			if c := f.CountHash(h); f.Saturated() == 0 && c != before {
				t.Fatalf("%s: Count %d after deletes, want %d", name(p), c, before)
			}
			if f.ContainsHash(h) {
				present++
			}
		}
		if rate := float64(present) / float64(len(keys)); rate > 3*f.EstimatedFPR()+0.002 {
			t.Errorf("%s: %.3f%% of deleted keys present", name(p), 100*rate)
		}
		filtertest.NoFalseNegatives(t, "background", f.ContainsHash, bg)
		checkTallies(t, f)
	}
}

// Random interleavings of add, delete and count against an exact multiset
// model, small enough that counters saturate: no key whose adds outnumber
// its deletes is ever absent, and Count >= min(model, max).
func TestMultisetModel(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		p        Params
		universe int
	}{
		{1, Params{Capacity: 2000, FPR: 0.01}, 3000},
		{2, Params{Capacity: 200, FPR: 0.05}, 400}, // heavy repeats: saturation
		{3, Params{Capacity: 500, FPR: 0.02, Blocked: true}, 600},
		{4, Params{Capacity: 300, FPR: 0.05, CounterBits: 8}, 300},
		{5, Params{Capacity: 100, FPR: 0.1, CounterBits: 8, Blocked: true}, 200},
		{6, Params{Capacity: 50, FPR: 0.3}, 20}, // tiny: saturates quickly
	} {
		t.Run(fmt.Sprintf("seed=%d", tc.seed), func(t *testing.T) {
			f := mustNew(t, tc.p)
			keys := filtertest.Hashes(tc.universe, 200+tc.seed)
			model := make([]int, tc.universe)
			rng := filtertest.SplitMix64(tc.seed)
			cmax := 1<<f.CounterBits() - 1
			ops := sizeN(300_000, 50_000)
			for op := 0; op < ops; op++ {
				i := int(rng.Next() % uint64(tc.universe))
				h := keys[i]
				switch r := rng.Next() % 10; {
				case r < 5:
					f.AddHash(h)
					model[i]++
				case r < 8:
					if model[i] > 0 {
						if !f.DeleteHash(h) {
							t.Fatalf("op %d: delete of key %d (held %d) refused", op, i, model[i])
						}
						model[i]--
					}
				default:
					if model[i] > 0 && !f.ContainsHash(h) {
						t.Fatalf("op %d: false negative for key %d (held %d)", op, i, model[i])
					}
					if c := f.CountHash(h); c < min(model[i], cmax) {
						t.Fatalf("op %d: Count %d < model %d", op, c, model[i])
					}
				}
				if op%(ops/6) == 0 {
					checkModel(t, f, keys, model)
					f = roundTrip(t, f)
				}
			}
			checkModel(t, f, keys, model)
			t.Logf("%d ops, %d saturated counters, fill %.3f", ops, f.Saturated(), f.FillRatio())
		})
	}
}

func checkModel(t *testing.T, f *Filter, keys []uint64, model []int) {
	t.Helper()
	cmax := 1<<f.CounterBits() - 1
	total := 0
	for i, h := range keys {
		total += model[i]
		if model[i] > 0 && !f.ContainsHash(h) {
			t.Fatalf("false negative for key %d (held %d)", i, model[i])
		}
		if c := f.CountHash(h); c < min(model[i], cmax) {
			t.Fatalf("key %d: Count %d < model %d", i, c, model[i])
		}
	}
	if f.Len() != total {
		t.Fatalf("Len %d, model holds %d", f.Len(), total)
	}
	checkTallies(t, f)
}

func TestMerge(t *testing.T) {
	for _, p := range configs {
		p.Capacity = 20_000
		a, b := mustNew(t, p), mustNew(t, p)
		ha, hb := filtertest.Hashes(10_000, 5), filtertest.Hashes(10_000, 6)
		for _, h := range ha {
			a.AddHash(h)
		}
		for _, h := range hb {
			b.AddHash(h)
		}
		// Saturate one key in each so the merge must saturate too.
		for range 300 {
			a.AddHash(77)
			b.AddHash(77)
		}
		aBytes, _ := a.MarshalBinary()
		m := a.Clone()
		if err := m.Merge(b); err != nil {
			t.Fatal(err)
		}
		if ab, _ := a.MarshalBinary(); !bytes.Equal(ab, aBytes) {
			t.Fatal("Clone shares counters with the original")
		}
		filtertest.NoFalseNegatives(t, "merged a", m.ContainsHash, ha)
		filtertest.NoFalseNegatives(t, "merged b", m.ContainsHash, hb)
		checkTallies(t, m)
		if m.Len() != a.Len()+b.Len() {
			t.Errorf("Len %d, want %d", m.Len(), a.Len()+b.Len())
		}
		// Deleting a's keys from the union leaves b's.
		for _, h := range ha {
			if !m.DeleteHash(h) {
				t.Fatal("delete from union failed")
			}
		}
		filtertest.NoFalseNegatives(t, "union minus a", m.ContainsHash, hb)
		// Merged counters equal the saturating sum, counter by counter.
		c := a.Clone()
		c.Merge(b)
		for i := uint64(0); i < c.m; i++ {
			if want := min(a.get(i)+b.get(i), c.cmax); c.get(i) != want {
				t.Fatalf("counter %d: %d, want %d", i, c.get(i), want)
			}
		}
	}
	a := mustNew(t, Params{Capacity: 1000, FPR: 0.01})
	for _, o := range []Params{
		{Capacity: 2000, FPR: 0.01},
		{Capacity: 1000, FPR: 0.01, Blocked: true},
		{Capacity: 1000, FPR: 0.01, CounterBits: 8},
		{Capacity: 1000, FPR: 0.01, Hasher: hashing.XXH3(1)},
	} {
		b := mustNew(t, o)
		before, _ := a.MarshalBinary()
		if err := a.Merge(b); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("merge with %+v: %v", o, err)
		}
		if after, _ := a.MarshalBinary(); !bytes.Equal(before, after) {
			t.Error("failed merge changed the filter")
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	for _, p := range configs {
		p.Capacity = 10000
		f := mustNew(t, p)
		key := []byte("some key")
		hs := filtertest.Hashes(64, 5)
		out := make([]bool, len(hs))
		s := filtertest.SplitMix64(9)
		filtertest.ZeroAllocs(t, "Add+Delete", func() {
			h := s.Next()
			f.AddHash(h)
			f.DeleteHash(h)
		})
		filtertest.ZeroAllocs(t, "Add", func() { f.Add(key); f.Delete(key) })
		filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(key) })
		filtertest.ZeroAllocs(t, "ContainsString", func() { f.ContainsString("some key") })
		filtertest.ZeroAllocs(t, "ContainsHash", func() { f.ContainsHash(s.Next()) })
		filtertest.ZeroAllocs(t, "ContainsBatch", func() { f.ContainsBatch(hs, out) })
		filtertest.ZeroAllocs(t, "Count", func() { f.Count(key) })
	}
}

func TestContainsBatch(t *testing.T) {
	f := mustNew(t, Params{Capacity: 5000, FPR: 0.1, Blocked: true})
	hs := filtertest.Hashes(5000, 31)
	for _, h := range hs[:2500] {
		f.AddHash(h)
	}
	out := make([]bool, len(hs))
	f.ContainsBatch(hs, out)
	for i, h := range hs {
		if out[i] != f.ContainsHash(h) {
			t.Fatalf("batch[%d] differs", i)
		}
	}
}

// Blocked probes stay inside one 64-byte line.
func TestBlockedProbesInOneLine(t *testing.T) {
	for _, cb := range []int{4, 8} {
		f := mustNew(t, Params{Capacity: 10000, FPR: 0.01, CounterBits: cb, Blocked: true})
		var buf [MaxK]uint64
		for _, h := range filtertest.Hashes(10000, 8) {
			idx := f.indices(h, &buf)
			line := idx[0] * uint64(cb) / 512
			for _, i := range idx {
				if i >= f.m || i*uint64(cb)/512 != line {
					t.Fatalf("c=%d: probes %v span lines", cb, idx)
				}
			}
		}
	}
}

func TestParams(t *testing.T) {
	bad := []Params{
		{},
		{Capacity: 10},
		{Capacity: -1, FPR: 0.01},
		{Capacity: 10, FPR: 1},
		{Capacity: 10, FPR: 1e-13},
		{Capacity: 10, FPR: 0.01, CounterBits: 2},
		{Capacity: 10, FPR: 0.01, CounterBits: 16},
	}
	// One past MaxCapacity, where int can hold it (not on 32-bit
	// platforms, where no int exceeds it).
	if over := uint64(MaxCapacity) + 1; over <= math.MaxInt {
		bad = append(bad, Params{Capacity: int(over), FPR: 0.01})
	}
	for _, p := range bad {
		if _, err := New(p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("New(%+v) = %v, want ErrInvalidParams", p, err)
		}
	}
	for _, p := range []Params{
		{Capacity: 1, FPR: 0.5},
		{Capacity: 1, FPR: 0.5, Blocked: true},
		{Capacity: 1_000_000, FPR: 0.01},
		{Capacity: 1_000_000, FPR: 1e-6, Blocked: true},
		{Capacity: 12345, FPR: 0.001, CounterBits: 8, Blocked: true},
	} {
		s, err := Plan(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.FPR > p.FPR || s.K < 1 {
			t.Errorf("Plan(%+v) = %+v", p, s)
		}
		f := mustNew(t, p)
		if f.DesignFPR() != s.FPR || f.Counters() != int(s.Counters) || f.K() != s.K {
			t.Errorf("New disagrees with Plan for %+v", p)
		}
		// Standard sizing is close to the optimal 1.44*log2(1/p) counters per key.
		if !p.Blocked && p.Capacity >= 1000 {
			if r := float64(s.Counters) / float64(p.Capacity) / fpmath.BitsPerKeyForFPR(p.FPR); r > 1.05 {
				t.Errorf("Plan(%+v): %.2fx the optimal counters", p, r)
			}
		}
	}
	f, err := NewForCapacity(1000, 0.01)
	if err != nil || f.CounterBits() != 4 || f.Blocked() || f.Cap() != 1000 || f.Kind() != bloomery.KindCounting {
		t.Errorf("NewForCapacity: %v", err)
	}
}

func TestStatsOverfill(t *testing.T) {
	f := mustNew(t, Params{Capacity: 1000, FPR: 0.01})
	for _, h := range filtertest.Hashes(1000, 1) {
		f.AddHash(h)
	}
	s := f.Stats()
	if s.Overfilled || s.HashFuncs != f.K() || s.Len != 1000 || s.SizeBytes != f.SizeBytes() {
		t.Errorf("stats %+v", s)
	}
	for _, h := range filtertest.Hashes(2000, 2) {
		f.AddHash(h)
	}
	if s := f.Stats(); !s.Overfilled {
		t.Errorf("3x capacity not overfilled: %+v", s)
	}
}

func TestKeyedHasher(t *testing.T) {
	h := hashing.SipHash([16]byte{1, 2, 3})
	f := mustNew(t, Params{Capacity: 1000, FPR: 0.01, Hasher: h})
	keys := filtertest.Keys(1000, 3)
	for _, k := range keys {
		f.Add(k)
	}
	b, _ := f.MarshalBinary()
	if _, err := Decode(b, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Errorf("decode without key: %v", err)
	}
	var g Filter
	if err := g.UnmarshalBinary(b); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Errorf("UnmarshalBinary: %v", err)
	}
	d, err := Decode(b, hashing.Want(h))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !d.Contains(k) {
			t.Fatal("false negative after keyed round trip")
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	f := mustNew(t, Params{Capacity: 100, FPR: 0.01, Blocked: true})
	for _, h := range filtertest.Hashes(100, 51) {
		f.AddHash(h)
	}
	good, _ := f.MarshalBinary()
	var g Filter
	if err := g.UnmarshalBinary(good); err != nil || g.Len() != 100 {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	_, params, payload := splitEnvelope(t, good)
	edit := func(name string, p, pl []byte, want error) {
		t.Helper()
		b := reenvelope(f, p, pl)
		if _, err := Decode(b, hashing.Expect{}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	mod := func(off int, v byte) []byte {
		p := bytes.Clone(params)
		p[off] = v
		return p
	}
	edit("counter bits", mod(0, 5), payload, bloomery.ErrCorrupt)
	edit("counter bits 8", mod(0, 8), payload, bloomery.ErrCorrupt)
	edit("layout flag", mod(1, 2), payload, bloomery.ErrCorrupt)
	edit("k 0", mod(2, 0), payload, bloomery.ErrCorrupt)
	edit("k 33", mod(2, 33), payload, bloomery.ErrCorrupt)
	edit("counters", mod(3, params[3]+16), payload, bloomery.ErrCorrupt)
	edit("counters not whole lines", mod(3, params[3]+1), payload, bloomery.ErrCorrupt)
	edit("counters huge", mod(10, 0x80), payload, bloomery.ErrCorrupt)
	edit("capacity 0", func() []byte { p := bytes.Clone(params); clear(p[11:19]); return p }(), payload, bloomery.ErrCorrupt)
	edit("count huge", mod(26, 0x80), payload, bloomery.ErrCorrupt)
	edit("short params", params[:len(params)-1], payload, bloomery.ErrCorrupt)
	edit("long params", append(bytes.Clone(params), 0), payload, bloomery.ErrCorrupt)
	edit("short payload", params, payload[:len(payload)-8], bloomery.ErrCorrupt)
	bad := bytes.Clone(good)
	bad[7] = 2
	fixCRC(bad)
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Errorf("layout 2: %v", err)
	}
	bad[7] = 1
	bad[5] = byte(bloomery.KindCuckoo)
	fixCRC(bad)
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("kind: %v", err)
	}
	for i := 0; i < len(good); i += 7 {
		if _, err := Decode(good[:i], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", i, err)
		}
	}
}
