package cuckoo

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

// sizeN picks a size: short under -short, and under -race for the
// randomized runs that do not carry a statistical bound.
func sizeN(full, short int) int {
	if filtertest.Short() {
		return short
	}
	return full
}

// The alternate-bucket function must be an involution for every bucket
// count, odd ones included, and never a fixed point for even counts.
func TestAltInvolution(t *testing.T) {
	rng := filtertest.SplitMix64(7)
	counts := []uint64{1, 2, 3, 4, 5, 6, 7, 9, 10, 255, 256, 257, 1000, 1001, 65535, 65536, 1<<20 + 1, 1<<20 + 2, 266_000, 266_001}
	for range 20 {
		counts = append(counts, 1+rng.Next()%(1<<33))
	}
	for _, m := range counts {
		for _, fb := range []int{8, 12, 13, 16} {
			f := newFilter(m, fb, 1, hashing.Hasher{})
			fixed := 0
			for range 20000 {
				i := rng.Next() % m
				tag := 1 + rng.Next()%f.fpMask
				j := f.alt(i, tag)
				if j >= m {
					t.Fatalf("m=%d f=%d: alt(%d, %d) = %d out of range", m, fb, i, tag, j)
				}
				if back := f.alt(j, tag); back != i {
					t.Fatalf("m=%d f=%d: alt(alt(%d, %d)) = %d", m, fb, i, tag, back)
				}
				if j == i {
					fixed++
				}
			}
			if m%2 == 0 && fixed > 0 {
				t.Errorf("m=%d f=%d: %d fixed points for an even bucket count", m, fb, fixed)
			}
			// For odd m each tag has exactly one fixed point: about
			// 20000/m of the samples.
			if m%2 == 1 && m > 1000 && float64(fixed) > 3*20000/float64(m)+10 {
				t.Errorf("m=%d f=%d: %d fixed points of 20000", m, fb, fixed)
			}
		}
	}
	// Exhaustive over all (i, tag) for small counts.
	for m := uint64(1); m <= 40; m++ {
		f := newFilter(m, 8, 1, hashing.Hasher{})
		for i := uint64(0); i < m; i++ {
			for tag := uint64(1); tag <= f.fpMask; tag++ {
				if j := f.alt(i, tag); j >= m || f.alt(j, tag) != i || (m%2 == 0 && j == i) {
					t.Fatalf("m=%d: alt(%d, %d) = %d, back %d", m, i, tag, j, f.alt(j, tag))
				}
			}
		}
	}
}

// Buckets are packed: f bits per slot, not a power of two.
func TestPackedSize(t *testing.T) {
	for fb := MinFingerprintBits; fb <= MaxFingerprintBits; fb++ {
		for _, n := range []int{1, 3, 1001, 100_003} {
			f := mustNew(t, Params{Capacity: n, FingerprintBits: fb})
			m := BucketsFor(n)
			if want := int((m*4*uint64(fb)+7)/8) + padding; f.SizeBytes() != want {
				t.Errorf("f=%d n=%d: SizeBytes %d, want %d", fb, n, f.SizeBytes(), want)
			}
			// Fill to capacity: every width and odd bucket count must
			// keep every key.
			hs := filtertest.Hashes(n, uint64(fb*1000+n))
			var added []uint64
			for _, h := range hs {
				if f.AddHash(h) {
					added = append(added, h)
				}
			}
			if n >= 1000 && len(added) != n {
				t.Errorf("f=%d n=%d: only %d adds succeeded at design load", fb, n, len(added))
			}
			filtertest.NoFalseNegatives(t, fmt.Sprintf("f=%d n=%d", fb, n), f.ContainsHash, added)
			if f.Len() != len(added) {
				t.Errorf("Len %d, want %d", f.Len(), len(added))
			}
			checkCount(t, f)
		}
	}
}

// checkCount verifies that the count matches the table contents.
func checkCount(t testing.TB, f *Filter) {
	t.Helper()
	held := 0
	for i := uint64(0); i < f.buckets; i++ {
		b := f.bucket(i)
		for j := uint(0); j < BucketSize; j++ {
			if b>>(j*f.fpBits)&f.fpMask != 0 {
				held++
			}
		}
	}
	if f.victim.used {
		held++
	}
	if held != f.count {
		t.Fatalf("count %d, table holds %d", f.count, held)
	}
	if tail := f.data[len(f.data)-padding:]; !bytes.Equal(tail, make([]byte, padding)) {
		t.Fatalf("padding overwritten: %x", tail)
	}
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
	b2, _ := g.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("re-encoding differs")
	}
	return g
}

func TestNoFalseNegatives(t *testing.T) {
	n := sizeN(1_000_000, 100_000)
	f := mustNew(t, Params{Capacity: n, FPR: 0.002})
	if f.FingerprintBits() != 12 {
		t.Fatalf("FPR 0.2%% chose %d-bit fingerprints, want 12", f.FingerprintBits())
	}
	hs := filtertest.Hashes(n, 1)
	for i, h := range hs {
		if !f.AddHash(h) {
			t.Fatalf("add %d of %d failed at load %.4f", i, n, f.LoadFactor())
		}
	}
	filtertest.NoFalseNegatives(t, "after adds", f.ContainsHash, hs)
	g := roundTrip(t, f)
	filtertest.NoFalseNegatives(t, "after round trip", g.ContainsHash, hs)
	checkCount(t, g)

	// Delete every other key: the rest must stay.
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
	if g.Len() != len(rest) {
		t.Errorf("Len %d after deletes, want %d", g.Len(), len(rest))
	}
	checkCount(t, g)
	// The deleted half now reads present only at about the FPR.
	deleted := 0
	for i := 0; i < n; i += 2 {
		if g.ContainsHash(hs[i]) {
			deleted++
		}
	}
	if got, max := float64(deleted)/float64(n/2), 2*g.EstimatedFPR()+0.001; got > max {
		t.Errorf("%.4f%% of deleted keys still present, want <= %.4f%%", 100*got, 100*max)
	}
}

// FPR within ±15% of 1-(1-1/(2^f-1))^(8*load), at several widths.
func TestFPR(t *testing.T) {
	for _, tc := range []struct {
		fb     int
		probes int
	}{{8, 1_000_000}, {11, 2_000_000}, {12, 2_000_000}, {13, 4_000_000}, {16, probes16()}} {
		t.Run(fmt.Sprintf("f=%d", tc.fb), func(t *testing.T) {
			n := 1 << 18
			f := mustNew(t, Params{Capacity: n, FingerprintBits: tc.fb})
			for _, h := range filtertest.Hashes(n, 2) {
				if !f.AddHash(h) {
					t.Fatal("add failed at design load")
				}
			}
			want := fpmath.CuckooFPR(tc.fb, BucketSize, f.LoadFactor())
			if got := f.EstimatedFPR(); got != want {
				t.Errorf("EstimatedFPR %v, formula %v", got, want)
			}
			got := filtertest.MeasureFPR(f.ContainsHash, tc.probes, 3)
			filtertest.CheckFPR(t, fmt.Sprintf("f=%d load=%.3f", tc.fb, f.LoadFactor()), got, want, 0.15, tc.probes)
		})
	}
}

// The targets: at 12-bit fingerprints and >= 94% load, at most
// 13.0 bits per key and an FPR of at most 0.2%.
func TestTargets12(t *testing.T) {
	n := sizeN(1_000_000, 100_000)
	f := mustNew(t, Params{Capacity: n, FingerprintBits: 12})
	s := filtertest.SplitMix64(11)
	var added []uint64
	for {
		h := s.Next()
		if err := f.InsertHash(h); err != nil {
			if !errors.Is(err, bloomery.ErrFull) {
				t.Fatal(err)
			}
			break
		}
		added = append(added, h)
	}
	load := f.LoadFactor()
	bpk := float64(8*f.SizeBytes()) / float64(f.Len())
	probes := 4_000_000
	fpr := filtertest.MeasureFPR(f.ContainsHash, probes, 12)
	t.Logf("first ErrFull at load %.4f (%d keys, design %d): %.3f bits/key, FPR %.4f%% (formula %.4f%%)",
		load, f.Len(), f.Cap(), bpk, 100*fpr, 100*f.EstimatedFPR())
	if load < 0.94 {
		t.Errorf("first ErrFull at load %.4f, want >= 0.94", load)
	}
	if bpk > 13.0 {
		t.Errorf("%.3f bits/key, want <= 13.0", bpk)
	}
	if fpr > 0.002 {
		t.Errorf("FPR %.4f%%, want <= 0.2%%", 100*fpr)
	}
	filtertest.CheckFPR(t, "full", fpr, f.EstimatedFPR(), 0.15, probes)
	filtertest.NoFalseNegatives(t, "full", f.ContainsHash, added)
	// At the design capacity itself (load 0.94).
	st := f.Stats()
	if st.BitsPerKey > 13.0 || st.DesignFPR > 0.002 {
		t.Errorf("design: %.3f bits/key, FPR %.4f%%", st.BitsPerKey, 100*st.DesignFPR)
	}
}

// A failed insert leaves the filter byte-identical and drops nothing.
func TestFullLeavesFilterUnchanged(t *testing.T) {
	for _, n := range []int{1, 7, 1000, 10_001} {
		for _, fb := range []int{8, 12, 15} {
			f := mustNew(t, Params{Capacity: n, FingerprintBits: fb})
			s := filtertest.SplitMix64(uint64(n*100 + fb))
			var added []uint64
			fails := 0
			for fails < 50 {
				h := s.Next()
				before, _ := f.MarshalBinary()
				err := f.InsertHash(h)
				if err == nil {
					added = append(added, h)
					continue
				}
				if !errors.Is(err, bloomery.ErrFull) {
					t.Fatal(err)
				}
				fails++
				after, _ := f.MarshalBinary()
				if !bytes.Equal(before, after) {
					t.Fatalf("n=%d f=%d: failed insert changed the filter", n, fb)
				}
				if f.AddHash(h) {
					t.Fatalf("Add succeeded where Insert failed")
				}
				if !f.Full() {
					t.Fatal("ErrFull without the victim slot in use")
				}
			}
			filtertest.NoFalseNegatives(t, fmt.Sprintf("n=%d f=%d full", n, fb), f.ContainsHash, added)
			checkCount(t, f)
			if f.Len() != len(added) {
				t.Fatalf("Len %d, want %d", f.Len(), len(added))
			}
			if n >= 1000 && f.LoadFactor() < 0.9 {
				t.Errorf("n=%d f=%d: full at load %.3f", n, fb, f.LoadFactor())
			}
			g := roundTrip(t, f)
			filtertest.NoFalseNegatives(t, "decoded full", g.ContainsHash, added)
			// Deleting one key frees the victim slot and keeps the rest.
			if !g.DeleteHash(added[0]) {
				t.Fatal("delete failed")
			}
			filtertest.NoFalseNegatives(t, "after delete from full", g.ContainsHash, added[1:])
			checkCount(t, g)
		}
	}
}

// Adding a key k times and deleting it k times leaves it absent.
func TestRepeatThenDelete(t *testing.T) {
	f := mustNew(t, Params{Capacity: 200_000, FingerprintBits: 12})
	// Background keys so that collisions are possible.
	bg := filtertest.Hashes(100_000, 21)
	for _, h := range bg {
		f.AddHash(h)
	}
	keys := filtertest.Hashes(10_000, 22)
	for i, h := range keys {
		k := 1 + i%8
		before := f.CountHash(h)
		for j := 0; j < k; j++ {
			if !f.AddHash(h) {
				t.Fatalf("add %d of key %d failed", j, i)
			}
		}
		if c := f.CountHash(h); c != before+k {
			t.Fatalf("Count %d after %d adds, was %d", c, k, before)
		}
		for j := 0; j < k; j++ {
			if !f.DeleteHash(h) {
				t.Fatalf("delete %d of key %d failed", j, i)
			}
		}
		if c := f.CountHash(h); c != before {
			t.Fatalf("Count %d after deletes, want %d", c, before)
		}
	}
	present := 0
	for _, h := range keys {
		if f.ContainsHash(h) {
			present++
		}
	}
	// Still-present keys are false positives only.
	if rate, max := float64(present)/float64(len(keys)), 3*f.EstimatedFPR()+0.001; rate > max {
		t.Errorf("%.3f%% of deleted keys present, want <= %.3f%%", 100*rate, 100*max)
	}
	filtertest.NoFalseNegatives(t, "background", f.ContainsHash, bg)
	// The multiset limit: 8 copies fit in two buckets, the 9th goes to the
	// victim slot, the 10th fails.
	g := mustNew(t, Params{Capacity: 1000, FingerprintBits: 16})
	for j := 0; j < 9; j++ {
		if !g.AddHash(12345) {
			t.Fatalf("copy %d failed", j+1)
		}
	}
	if g.AddHash(12345) {
		t.Error("10th copy accepted")
	}
	if g.CountHash(12345) != 9 {
		t.Errorf("Count %d, want 9", g.CountHash(12345))
	}
	for j := 0; j < 9; j++ {
		if !g.DeleteHash(12345) {
			t.Fatalf("delete %d failed", j+1)
		}
	}
	if g.ContainsHash(12345) || g.Len() != 0 {
		t.Error("key present after deleting every copy")
	}
}

// Random interleavings of insert, delete and count against an exact
// multiset model: no key whose inserts outnumber its deletes is ever
// reported absent, and Count never undercounts.
func TestMultisetModel(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		capacity int
		universe int
		fb       int
	}{
		{1, 5000, 3000, 12},
		{2, 5000, 20000, 8},   // runs into ErrFull and the victim slot
		{3, 777, 5000, 16},    // odd bucket count
		{4, 100, 50, 9},       // heavy repeats
		{5, 20000, 30000, 13}, // near full
	} {
		t.Run(fmt.Sprintf("seed=%d", tc.seed), func(t *testing.T) {
			f := mustNew(t, Params{Capacity: tc.capacity, FingerprintBits: tc.fb})
			keys := filtertest.Hashes(tc.universe, 100+tc.seed)
			model := make([]int, tc.universe)
			rng := filtertest.SplitMix64(tc.seed)
			fulls := 0
			ops := sizeN(400_000, 50_000)
			if filtertest.RaceEnabled {
				ops = 50_000
			}
			for op := 0; op < ops; op++ {
				i := int(rng.Next() % uint64(tc.universe))
				h := keys[i]
				switch r := rng.Next() % 10; {
				case r < 5:
					if err := f.InsertHash(h); err == nil {
						model[i]++
					} else if errors.Is(err, bloomery.ErrFull) {
						fulls++
					} else {
						t.Fatal(err)
					}
				case r < 8:
					if model[i] > 0 {
						if !f.DeleteHash(h) {
							t.Fatalf("op %d: delete of key %d (held %d) found nothing", op, i, model[i])
						}
						model[i]--
					}
				default:
					if c := f.CountHash(h); c < model[i] {
						t.Fatalf("op %d: Count %d < model %d", op, c, model[i])
					}
					if model[i] > 0 && !f.ContainsHash(h) {
						t.Fatalf("op %d: false negative for key %d (held %d)", op, i, model[i])
					}
				}
				if op%(ops/8) == 0 {
					checkModel(t, f, keys, model)
					f = roundTrip(t, f)
				}
			}
			checkModel(t, f, keys, model)
			t.Logf("%d ops, %d ErrFull, final load %.3f, victim %v", ops, fulls, f.LoadFactor(), f.Full())
		})
	}
}

func checkModel(t *testing.T, f *Filter, keys []uint64, model []int) {
	t.Helper()
	total := 0
	for i, h := range keys {
		total += model[i]
		if model[i] > 0 && !f.ContainsHash(h) {
			t.Fatalf("false negative for key %d (held %d)", i, model[i])
		}
		if c := f.CountHash(h); c < model[i] {
			t.Fatalf("key %d: Count %d < model %d", i, c, model[i])
		}
	}
	if f.Len() != total {
		t.Fatalf("Len %d, model holds %d", f.Len(), total)
	}
	checkCount(t, f)
}

func TestZeroAllocs(t *testing.T) {
	f := mustNew(t, Params{Capacity: 10000, FingerprintBits: 12})
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
	// A failed insert on a full filter does not allocate either.
	full := mustNew(t, Params{Capacity: 100, FingerprintBits: 8})
	for full.AddHash(s.Next()) {
	}
	filtertest.ZeroAllocs(t, "Add on a full filter", func() {
		h := s.Next()
		if full.AddHash(h) {
			full.DeleteHash(h)
		}
	})
}

// TestContainsBatch checks ContainsBatch against ContainsHash, with the
// pipeline forced on (pipelineMinBytes = 0) and at its default (small
// tables take the plain loop), at lengths around the group and ring
// sizes, on a half-full table and on one filled until an insert failed,
// so that the victim slot is in use and its fingerprint must be found.
func TestContainsBatch(t *testing.T) {
	for _, mb := range []int{0, pipelineMinBytes} {
		t.Run(fmt.Sprintf("pipelineMinBytes=%d", mb), func(t *testing.T) {
			defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
			pipelineMinBytes = mb
			half := mustNew(t, Params{Capacity: 5000, FingerprintBits: 8})
			hs := filtertest.Hashes(10000, 31)
			for _, h := range hs[:2500] {
				half.AddHash(h)
			}
			full := mustNew(t, Params{Capacity: 2000, FingerprintBits: 8})
			stored := 0
			for _, h := range hs {
				if full.InsertHash(h) != nil {
					break
				}
				stored++
			}
			if !full.victim.used {
				t.Fatal("the victim slot is not in use")
			}
			for _, f := range []*Filter{half, full} {
				out := make([]bool, len(hs)+1)
				for _, l := range []int{0, 1, 15, 16, 17, 32, 47, 48, 49, 63, 64, 65, 100, len(hs)} {
					for i := range out {
						out[i] = i%2 == 0 // garbage the call must overwrite
					}
					f.ContainsBatch(hs[:l], out)
					for i, h := range hs[:l] {
						if out[i] != f.ContainsHash(h) {
							t.Fatalf("len %d: batch[%d] = %v, ContainsHash %v", l, i, out[i], !out[i])
						}
					}
					if out[l] != (l%2 == 0) {
						t.Fatal("ContainsBatch wrote past len(hashes)")
					}
				}
			}
			out := make([]bool, stored)
			full.ContainsBatch(hs[:stored], out)
			for i, ok := range out {
				if !ok {
					t.Fatalf("false negative for stored key %d", i)
				}
			}
		})
	}
}

func TestParams(t *testing.T) {
	bad := []Params{
		{},
		{Capacity: -1},
		{Capacity: 10, FingerprintBits: 7},
		{Capacity: 10, FingerprintBits: 17},
		{Capacity: 10, FPR: 1},
		{Capacity: 10, FPR: -0.1},
		{Capacity: 10, FPR: 1e-9}, // needs more than 16 bits
		{Capacity: 10, FPR: 0.01, FingerprintBits: 8},
		{Capacity: 10, Load: -0.5},
		{Capacity: 10, Load: DesignLoad + 0.01},
		{Capacity: 10, Load: math.NaN()},
	}
	// One past MaxCapacity, where int can hold it (not on 32-bit
	// platforms, where no int exceeds it).
	if over := uint64(MaxCapacity) + 1; over <= math.MaxInt {
		bad = append(bad, Params{Capacity: int(over)})
	}
	for _, p := range bad {
		if _, err := New(p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("New(%+v) = %v, want ErrInvalidParams", p, err)
		}
	}
	for _, tc := range []struct {
		fpr float64
		fb  int
	}{{0.5, 8}, {0.03, 8}, {0.01, 10}, {0.002, 12}, {0.001, 13}, {0.0002, 16}} {
		f, err := NewForCapacity(1000, tc.fpr)
		if err != nil {
			t.Fatal(err)
		}
		if f.FingerprintBits() != tc.fb {
			t.Errorf("FPR %v: %d bits, want %d", tc.fpr, f.FingerprintBits(), tc.fb)
		}
		if f.DesignFPR() > tc.fpr {
			t.Errorf("FPR %v: design FPR %v", tc.fpr, f.DesignFPR())
		}
	}
	f := mustNew(t, Params{Capacity: 100})
	if f.FingerprintBits() != DefaultFingerprintBits || f.Cap() != 100 || f.Kind() != bloomery.KindCuckoo {
		t.Errorf("defaults: %d bits, cap %d", f.FingerprintBits(), f.Cap())
	}
}

// TestLoad checks Params.Load: the table is sized for Capacity keys at
// that load, an FPR target is met at it (so a lower load may need a
// narrower fingerprint), Capacity keys fit with no false negative, and
// the measured FPR follows the formula at the load reached.
func TestLoad(t *testing.T) {
	const n = 1 << 18
	for _, load := range []float64{0.3, 0.6, 0.9, DesignLoad} {
		f := mustNew(t, Params{Capacity: n, Load: load})
		if got, want := uint64(f.Buckets()), uint64(math.Ceil(n/(BucketSize*load))); got != want {
			t.Fatalf("load %v: %d buckets, want %d", load, got, want)
		}
		hs := filtertest.Hashes(n, 5)
		for _, h := range hs {
			if !f.AddHash(h) {
				t.Fatalf("load %v: add failed below capacity", load)
			}
		}
		for _, h := range hs {
			if !f.ContainsHash(h) {
				t.Fatalf("load %v: false negative", load)
			}
		}
		if lf := f.LoadFactor(); math.Abs(lf-load) > 0.01 {
			t.Errorf("load %v: load factor %v at capacity", load, lf)
		}
		const probes = 2_000_000
		want := fpmath.CuckooFPR(DefaultFingerprintBits, BucketSize, f.LoadFactor())
		if got := f.DesignFPR(); math.Abs(got-fpmath.CuckooFPR(DefaultFingerprintBits, BucketSize, float64(n)/float64(4*f.Buckets()))) > 1e-12 {
			t.Errorf("load %v: design FPR %v", load, got)
		}
		filtertest.CheckFPR(t, fmt.Sprintf("load %v", load), filtertest.MeasureFPR(f.ContainsHash, probes, 6), want, 0.15, probes)
	}
	// 1% at 94% load needs 10 bits; at 30% load 8 bits reach it.
	for _, tc := range []struct {
		load float64
		fb   int
	}{{0, 10}, {DesignLoad, 10}, {0.3, 8}} {
		f := mustNew(t, Params{Capacity: 1000, FPR: 0.01, Load: tc.load})
		if f.FingerprintBits() != tc.fb || f.DesignFPR() > 0.01 {
			t.Errorf("load %v: %d bits (want %d), design FPR %v", tc.load, f.FingerprintBits(), tc.fb, f.DesignFPR())
		}
	}
}

func TestStats(t *testing.T) {
	f := mustNew(t, Params{Capacity: 10000, FingerprintBits: 12})
	for _, h := range filtertest.Hashes(10000, 41) {
		f.AddHash(h)
	}
	s := f.Stats()
	if s.Kind != bloomery.KindCuckoo || s.Len != 10000 || s.Cap != 10000 || s.FingerprintBits != 12 ||
		s.SizeBytes != f.SizeBytes() || s.Overfilled || s.FillRatio != f.LoadFactor() {
		t.Errorf("stats %+v", s)
	}
	if s.EstimatedFPR <= 0 || s.EstimatedFPR > 1.01*s.DesignFPR {
		t.Errorf("estimated %v design %v", s.EstimatedFPR, s.DesignFPR)
	}
	if len(s.Extra) != 2 || s.Extra[0].Name != "buckets" || s.Extra[0].Value != float64(f.Buckets()) || s.Extra[1].Name != "victim" {
		t.Errorf("extra %+v", s.Extra)
	}
}

func TestKeyedHasher(t *testing.T) {
	h := hashing.SipHash([16]byte{1, 2, 3})
	f := mustNew(t, Params{Capacity: 1000, Hasher: h})
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
		t.Errorf("UnmarshalBinary of keyed filter: %v", err)
	}
	other := hashing.SipHash([16]byte{9})
	if _, err := Decode(b, hashing.Want(other)); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("decode with wrong key: %v", err)
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
	f := mustNew(t, Params{Capacity: 101, FingerprintBits: 13})
	for _, h := range filtertest.Hashes(100, 51) {
		f.AddHash(h)
	}
	good, _ := f.MarshalBinary()
	if _, err := Decode(good, hashing.Expect{}); err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(good); err != nil || g.Len() != 100 {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	// Rebuild an envelope with edited params or payload (valid checksum).
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
	edit("fp bits 7", mod(0, 7), payload, bloomery.ErrCorrupt)
	edit("fp bits 17", mod(0, 17), payload, bloomery.ErrCorrupt)
	edit("fp bits 14", mod(0, 14), payload, bloomery.ErrCorrupt)
	edit("bucket size", mod(1, 8), payload, bloomery.ErrCorrupt)
	edit("buckets", mod(2, params[2]+1), payload, bloomery.ErrCorrupt)
	edit("buckets huge", mod(9, 0x80), payload, bloomery.ErrCorrupt)
	edit("capacity 0", func() []byte { p := bytes.Clone(params); clear(p[10:18]); return p }(), payload, bloomery.ErrCorrupt)
	edit("count", mod(18, params[18]+1), payload, bloomery.ErrCorrupt)
	edit("victim flag", mod(26, 2), payload, bloomery.ErrCorrupt)
	edit("victim data", mod(27, 5), payload, bloomery.ErrCorrupt)
	edit("short params", params[:len(params)-1], payload, bloomery.ErrCorrupt)
	edit("long params", append(bytes.Clone(params), 0), payload, bloomery.ErrCorrupt)
	edit("short payload", params, payload[:len(payload)-1], bloomery.ErrCorrupt)
	edit("extra slot", params, func() []byte {
		pl := bytes.Clone(payload)
		for i := range pl {
			if pl[i] == 0 {
				pl[i] = 0x10
				break
			}
		}
		return pl
	}(), bloomery.ErrCorrupt)
	// 101 buckets * 52 bits is not a whole number of bytes: the last
	// nibble must be zero.
	tail := bytes.Clone(payload)
	tail[len(tail)-1] |= 0xF0
	edit("tail bits", params, tail, bloomery.ErrCorrupt)
	// Layout and kind.
	bad := bytes.Clone(good)
	bad[7] = 2
	fixCRC(bad)
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Errorf("layout 2: %v", err)
	}
	bad[7] = 1
	bad[5] = byte(bloomery.KindBloom)
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

// probes16 is the probe count for the 16-bit FPR test: ±15% at an FPR of
// 1.15e-4 needs about 10^7 probes; race builds use 2*10^6 and the 5-sigma
// bound that CheckFPR then applies (and logs).
func probes16() int {
	if filtertest.RaceEnabled || filtertest.Short() {
		return 2_000_000
	}
	return 12_000_000
}
