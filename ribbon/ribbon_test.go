package ribbon

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func containerAppend(layout uint8, params, payload []byte) []byte {
	return container.Append(nil, bloomery.KindRibbon, layout, hashing.Hasher{}, params, payload)
}

func mustBuild(t testing.TB, b *Builder, hashes []uint64, p Params) *Filter {
	t.Helper()
	f, err := b.Build(hashes, p)
	if err != nil {
		t.Fatalf("build %d keys: %v", len(hashes), err)
	}
	return f
}

func roundTrip(t testing.TB, f *Filter, want hashing.Expect) *Filter {
	t.Helper()
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(data, want)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	again, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("re-encoding differs (%d vs %d bytes)", len(again), len(data))
	}
	return g
}

// The main property, at full size: no false negatives before and after
// persistence, and after the builder is reused for another set (the first
// filter must not share the builder's memory).
func TestNoFalseNegatives(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	var b Builder
	keys := filtertest.Hashes(n, 1)
	f := mustBuild(t, &b, keys, Params{FPR: 0.01})
	if f.Len() != n {
		t.Fatalf("Len = %d, want %d", f.Len(), n)
	}
	filtertest.NoFalseNegatives(t, "built", f.ContainsHash, keys)
	g := roundTrip(t, f, hashing.Expect{})
	filtertest.NoFalseNegatives(t, "decoded", g.ContainsHash, keys)

	other := filtertest.Hashes(n/2, 3)
	f2 := mustBuild(t, &b, other, Params{FPR: 0.001})
	filtertest.NoFalseNegatives(t, "first filter after builder reuse", f.ContainsHash, keys)
	filtertest.NoFalseNegatives(t, "second filter from reused builder", f2.ContainsHash, other)
	g2 := roundTrip(t, f2, hashing.Expect{})
	filtertest.NoFalseNegatives(t, "second filter decoded", g2.ContainsHash, other)

	out := make([]bool, len(keys))
	g.ContainsBatch(keys, out)
	for i, ok := range out {
		if !ok {
			t.Fatalf("ContainsBatch: false negative at %d", i)
		}
	}
}

// Measured FPR within ±10 % of the target at 1 % (the bound), and
// within ±10 % of the realised mix at other targets, with 10^6 probes or
// more.
func TestFPR(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	var b Builder
	keys := filtertest.Hashes(n, 1)
	cases := []struct {
		p      Params
		probes int
	}{
		{Params{FPR: 0.01}, 2_000_000},
		{Params{FPR: 0.05}, 1_000_000},
		{Params{FPR: 0.3}, 1_000_000},
		{Params{FPR: 1.0 / 64}, 1_000_000},       // exactly 6 columns everywhere
		{Params{BloomBitsPerKey: 10}, 2_000_000}, // ~0.92 %
		{Params{FPR: 0.001}, 4_000_000},
	}
	for i, c := range cases {
		f := mustBuild(t, &b, keys, c.p)
		want := f.EstimatedFPR()
		if c.p.FPR != 0 {
			// The realised mix is within one block of the target.
			if math.Abs(want-c.p.FPR) > 0.002*c.p.FPR {
				t.Errorf("%+v: EstimatedFPR %v, target %v", c.p, want, c.p.FPR)
			}
		}
		got := filtertest.MeasureFPR(f.ContainsHash, c.probes, uint64(100+i))
		filtertest.CheckFPR(t, "ribbon", got, want, 0.10, c.probes)
		if c.p.FPR == 0.01 {
			filtertest.CheckFPR(t, "ribbon vs 1% target", got, 0.01, 0.10, c.probes)
		}
		t.Logf("%+v: %.3f bits/key, measured %.5f%%, expected %.5f%%", c.p, f.Stats().BitsPerKey, 100*got, 100*want)
	}
}

// The space target of the issue: <= 7.2 bits/key at FPR 1 % (1.085x the
// entropy floor log2(100) = 6.64).
func TestBitsPerKey(t *testing.T) {
	const n = 1_000_000
	f := mustBuild(t, new(Builder), filtertest.Hashes(n, 5), Params{FPR: 0.01})
	bpk := f.Stats().BitsPerKey
	floor := math.Log2(100)
	t.Logf("n=%d: %.4f bits/key = %.4fx the entropy floor; %.4f slots/key", n, bpk, bpk/floor, float64(f.Slots())/n)
	if bpk > 7.2 {
		t.Errorf("%.4f bits/key, want <= 7.2", bpk)
	}
	s, err := Size(n, Params{FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if s.Bytes != uint64(f.SizeBytes()) || s.Slots != uint64(f.Slots()) {
		t.Errorf("Size = %+v, filter has %d bytes, %d slots", s, f.SizeBytes(), f.Slots())
	}
}

// The same at 10^7 keys; takes a few seconds (a minute under -race), so it
// runs only without -short.
func TestBitsPerKey1e7(t *testing.T) {
	if testing.Short() {
		t.Skip("10^7 keys")
	}
	const n = 10_000_000
	keys := filtertest.Hashes(n, 6)
	f := mustBuild(t, new(Builder), keys, Params{FPR: 0.01})
	bpk := f.Stats().BitsPerKey
	t.Logf("n=%d: %.4f bits/key, %.4f slots/key", n, bpk, float64(f.Slots())/n)
	if bpk > 7.2 {
		t.Errorf("%.4f bits/key, want <= 7.2", bpk)
	}
	filtertest.NoFalseNegatives(t, "1e7", f.ContainsHash, keys)
	got := filtertest.MeasureFPR(f.ContainsHash, 1_000_000, 77)
	filtertest.CheckFPR(t, "1e7 vs 1% target", got, 0.01, 0.10, 1_000_000)
}

func TestSmallN(t *testing.T) {
	var b Builder
	for _, n := range []int{0, 1, 2, 127, 128, 129, 1000} {
		keys := filtertest.Hashes(n, 11)
		f := mustBuild(t, &b, keys, Params{FPR: 0.01})
		if f.Len() != n {
			t.Errorf("n=%d: Len %d", n, f.Len())
		}
		filtertest.NoFalseNegatives(t, "small", f.ContainsHash, keys)
		g := roundTrip(t, f, hashing.Expect{})
		filtertest.NoFalseNegatives(t, "small decoded", g.ContainsHash, keys)
		fp := filtertest.MeasureFPR(g.ContainsHash, 1_000_000, 12)
		if n == 0 {
			if fp != 0 || f.SizeBytes() != 0 {
				t.Errorf("empty filter: FPR %v, %d bytes", fp, f.SizeBytes())
			}
			continue
		}
		filtertest.CheckFPR(t, "small", fp, f.EstimatedFPR(), 0.10, 1_000_000)
		t.Logf("n=%d: %d slots, %d bytes, FPR %.4f%% (expected %.4f%%)", n, f.Slots(), f.SizeBytes(), 100*fp, 100*f.EstimatedFPR())
	}
}

// Duplicates never fail a build and do not count: many copies of each key,
// and a set that is one key repeated.
func TestDuplicates(t *testing.T) {
	distinct := filtertest.Hashes(50_000, 21)
	var dup []uint64
	for r := 0; r < 3; r++ {
		dup = append(dup, distinct...)
	}
	for i := range 1000 {
		dup = append(dup, distinct[i*7])
	}
	f := mustBuild(t, new(Builder), dup, Params{FPR: 0.01})
	if f.Len() != len(distinct) {
		t.Errorf("Len = %d, want %d distinct", f.Len(), len(distinct))
	}
	want, _ := Size(len(distinct), Params{FPR: 0.01})
	if uint64(f.Slots()) != want.Slots {
		t.Errorf("%d slots, want %d (sized for distinct keys)", f.Slots(), want.Slots)
	}
	filtertest.NoFalseNegatives(t, "duplicates", f.ContainsHash, dup)

	same := make([]uint64, 10_000)
	for i := range same {
		same[i] = 0xdeadbeef
	}
	g := mustBuild(t, new(Builder), same, Params{FPR: 0.01})
	if g.Len() != 1 || !g.ContainsHash(0xdeadbeef) {
		t.Errorf("one key repeated: Len %d, contains %v", g.Len(), g.ContainsHash(0xdeadbeef))
	}
}

func TestKeysAndHashers(t *testing.T) {
	keys := filtertest.Keys(20_000, 31)
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(99), hashing.XXH64(5), hashing.SipHashKeys(1, 2)} {
		f, err := BuildKeys(keys, Params{FPR: 0.02, Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !f.Contains(k) || !f.ContainsString(string(k)) || !f.ContainsHash(h.Sum64(k)) {
				t.Fatalf("%v: false negative for %q", h, k)
			}
		}
		if !f.Hasher().Equal(h) {
			t.Errorf("Hasher() = %v, want %v", f.Hasher(), h)
		}
		g := roundTrip(t, f, hashing.Want(h))
		for _, k := range keys {
			if !g.Contains(k) {
				t.Fatalf("%v decoded: false negative for %q", h, k)
			}
		}
		data, _ := f.MarshalBinary()
		_, err = Decode(data, hashing.Expect{})
		if h.Keyed() != errors.Is(err, bloomery.ErrKeyRequired) {
			t.Errorf("%v: decode without key: %v", h, err)
		}
	}
}

func TestContainsBatch(t *testing.T) {
	keys := filtertest.Hashes(30_000, 41)
	f := mustBuild(t, new(Builder), keys, Params{FPR: 0.1})
	probe := append(filtertest.Hashes(10_007, 42), keys[:5000]...)
	out := make([]bool, len(probe))
	f.ContainsBatch(probe, out)
	for i, h := range probe {
		if out[i] != f.ContainsHash(h) {
			t.Fatalf("ContainsBatch[%d] = %v, ContainsHash = %v", i, out[i], !out[i])
		}
	}
	empty := mustBuild(t, new(Builder), nil, Params{FPR: 0.1})
	out[0] = true
	empty.ContainsBatch(probe[:1], out)
	if out[0] {
		t.Error("empty filter: ContainsBatch true")
	}
}

func TestZeroAllocs(t *testing.T) {
	keys := filtertest.Keys(1000, 51)
	f, err := BuildKeys(keys, Params{FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	hs := filtertest.Hashes(100, 52)
	out := make([]bool, len(hs))
	s := string(keys[3])
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(keys[7]) })
	filtertest.ZeroAllocs(t, "ContainsString", func() { f.ContainsString(s) })
	filtertest.ZeroAllocs(t, "ContainsHash", func() { f.ContainsHash(hs[0]) })
	filtertest.ZeroAllocs(t, "ContainsBatch", func() { f.ContainsBatch(hs, out) })
}

func TestParams(t *testing.T) {
	bad := []Params{
		{},
		{FPR: 0.01, BloomBitsPerKey: 10},
		{FPR: 0.6},
		{FPR: -1},
		{FPR: math.NaN()},
		{FPR: 1e-10},
		{BloomBitsPerKey: 0.5},
		{BloomBitsPerKey: 65},
		{BloomBitsPerKey: 1}, // a 1-bit/key Bloom filter has FPR > 1/2
	}
	for _, p := range bad {
		if _, err := Build([]uint64{1, 2, 3}, p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: err = %v, want ErrInvalidParams", p, err)
		}
		if _, err := Size(10, p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("Size %+v: err = %v, want ErrInvalidParams", p, err)
		}
	}
	if _, err := Build(nil, Params{FPR: 0.5}); err != nil {
		t.Errorf("FPR 0.5: %v", err)
	}
	if _, err := BuildKeys([][]byte{[]byte("a")}, Params{FPR: 2.4e-10}); err != nil {
		t.Errorf("FPR 2.4e-10 (32 columns): %v", err)
	}
}

// BloomBitsPerKey stands for the best FPR of a 512-bit blocked Bloom filter
// at that many bits per key.
func TestBloomEquivalentFPR(t *testing.T) {
	for _, bpk := range []float64{4, 6, 8, 10, 12, 16, 20} {
		got := BloomEquivalentFPR(bpk)
		best := 1.0
		bestK := 0
		for k := 1; k <= 40; k++ {
			if f := fpmath.BlockedFPR(bpk, 1, k, 512); f < best {
				best, bestK = f, k
			}
		}
		if got != best {
			t.Errorf("%v bits/key: %v, want %v (k=%d)", bpk, got, best, bestK)
		}
		s, err := Size(1_000_000, Params{BloomBitsPerKey: bpk})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Bloom-equivalent %v bits/key: FPR %.4f%% (k=%d), Ribbon %.3f bits/key (%.0f%% saving)", bpk, 100*got, bestK, s.BitsPerKey, 100*(1-s.BitsPerKey/bpk))
	}
	// The well-known anchor: about 0.957 % at 10 bits/key (7 probes).
	if f := BloomEquivalentFPR(10); f < 0.0095 || f > 0.0096 {
		t.Errorf("10 bits/key: %v", f)
	}
}

func TestColumnsFor(t *testing.T) {
	for _, c := range []struct {
		fpr   float64
		lower int
		lp    float64
	}{
		{0.5, 1, 1}, {0.25, 2, 1}, {0.375, 1, 0.5}, {1.0 / 64, 6, 1}, {0.01, 6, 0.28}, {3e-10, 31, 0.2885},
	} {
		l, lp := columnsFor(c.fpr)
		if l != c.lower || math.Abs(lp-c.lp) > 1e-3 {
			t.Errorf("columnsFor(%v) = %d, %v; want %d, %v", c.fpr, l, lp, c.lower, c.lp)
		}
		mix := lp*math.Ldexp(1, -l) + (1-lp)*math.Ldexp(1, -l-1)
		if math.Abs(mix-c.fpr) > 1e-12*c.fpr+1e-15 {
			t.Errorf("columnsFor(%v): mix %v", c.fpr, mix)
		}
	}
}

// TestOverheadTable checks the sizing table's promise: one seed fails
// rarely (about 1 in 20 in RocksDB's tuning; this bound is 1 in 8, loose
// enough not to flake with the fixed seeds, tight enough to catch a
// hashing or sizing regression, which shows as failures near 100 %).
func TestOverheadTable(t *testing.T) {
	cases := []struct{ n, seeds int }{{1000, 200}, {10_000, 100}, {100_000, 40}}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, c := range cases {
		keys := filtertest.Hashes(c.n, 61)
		var b Builder
		fails := 0
		for s := range c.seeds {
			b.bucketKeys(keys, uint32(s))
			if ok, _ := b.band(newLayout(slotsFor(len(keys)), 0.01), false); !ok {
				fails++
			}
		}
		t.Logf("n=%d: %d slots (%.4f per key), %d of %d seeds failed", c.n, slotsFor(c.n), float64(slotsFor(c.n))/float64(c.n), fails, c.seeds)
		if fails*8 > c.seeds {
			t.Errorf("n=%d: %d of %d seeds failed", c.n, fails, c.seeds)
		}
	}
}

// Seed retries happen (about 1 build in 20) and lose no key.
func TestSeedRetry(t *testing.T) {
	var b Builder
	retried := 0
	for set := range 100 {
		keys := filtertest.Hashes(2000, uint64(1000+set))
		f := mustBuild(t, &b, keys, Params{FPR: 0.05})
		if b.Attempts > 1 {
			retried++
			if f.Seed() == 0 {
				t.Errorf("set %d: %d attempts but seed 0", set, b.Attempts)
			}
		}
		filtertest.NoFalseNegatives(t, "retry", f.ContainsHash, keys)
	}
	t.Logf("%d of 100 builds needed more than one seed", retried)
	if retried == 0 {
		t.Error("no build retried; the retry path is untested")
	}
}

// When a size cannot work (more keys than slots), the builder grows the
// slots after seedsPerSize seeds instead of failing or dropping keys.
func TestGrowth(t *testing.T) {
	keys := filtertest.Hashes(300, 71)
	b := Builder{forceSlots: 256}
	f := mustBuild(t, &b, keys, Params{FPR: 0.01})
	if b.Attempts <= seedsPerSize || f.Slots() <= 256 {
		t.Errorf("%d attempts, %d slots: expected growth", b.Attempts, f.Slots())
	}
	filtertest.NoFalseNegatives(t, "grown", f.ContainsHash, keys)
	roundTrip(t, f, hashing.Expect{})
}

func TestStats(t *testing.T) {
	keys := filtertest.Hashes(100_000, 81)
	f := mustBuild(t, new(Builder), keys, Params{FPR: 0.01})
	s := f.Stats()
	if s.Kind != bloomery.KindRibbon || s.Len != len(keys) || s.SizeBytes != f.SizeBytes() || s.Overfilled {
		t.Errorf("stats %+v", s)
	}
	if s.EstimatedFPR != f.EstimatedFPR() || s.DesignFPR != 0.01 || s.FingerprintBits != 6 {
		t.Errorf("stats %+v", s)
	}
	extra := map[string]float64{}
	for _, e := range s.Extra {
		extra[e.Name] = e.Value
	}
	if extra["slots"] != float64(f.Slots()) || extra["blocks"]*128 != extra["slots"] {
		t.Errorf("extra %v", extra)
	}
	// Every slot carries avg_columns bits.
	if bpk := extra["avg_columns"] * extra["slots_per_key"]; math.Abs(bpk-s.BitsPerKey) > 1e-9 {
		t.Errorf("avg_columns*slots_per_key = %v, BitsPerKey = %v", bpk, s.BitsPerKey)
	}
	if lf := extra["lower_fraction"]; math.Abs(lf-0.28) > 0.01 {
		t.Errorf("lower fraction %v, want about 0.28", lf)
	}
}

func TestZeroFilter(t *testing.T) {
	var f Filter
	if f.ContainsHash(1) || f.Contains([]byte("a")) || f.Len() != 0 || f.SizeBytes() != 0 {
		t.Error("zero Filter is not empty")
	}
	if _, err := f.MarshalBinary(); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Errorf("MarshalBinary of zero Filter: %v", err)
	}
	g := mustBuild(t, new(Builder), filtertest.Hashes(10, 1), Params{FPR: 0.1})
	data, _ := g.MarshalBinary()
	if err := f.UnmarshalBinary(data); err != nil || !f.ContainsHash(filtertest.Hashes(10, 1)[3]) {
		t.Errorf("UnmarshalBinary: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	f := mustBuild(t, new(Builder), filtertest.Hashes(1000, 91), Params{FPR: 0.01})
	good, _ := f.MarshalBinary()
	if _, err := Decode(good[:len(good)-1], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := Decode(append(good[:len(good):len(good)], 0), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := Decode(good, hashing.Want(hashing.XXH3(1))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("other seed: %v", err)
	}
	// Re-wrap modified params in a valid envelope to reach the checks
	// behind the checksum.
	rewrap := func(layout uint8, edit func(p []byte), payloadCut int) []byte {
		var p [paramsLen]byte
		copy(p[:], good[20:20+paramsLen])
		edit(p[:])
		payload := good[20+paramsLen+8 : len(good)-4]
		return containerAppend(layout, p[:], payload[:len(payload)-payloadCut])
	}
	if _, err := Decode(rewrap(Layout, func([]byte) {}, 0), hashing.Expect{}); err != nil {
		t.Fatalf("rewrapped original: %v", err)
	}
	if _, err := Decode(rewrap(2, func([]byte) {}, 0), hashing.Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Errorf("layout 2: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(p []byte)
		cut  int
	}{
		"lower 0":       {func(p []byte) { p[24] = 0 }, 0},
		"lower 32":      {func(p []byte) { p[24] = 32 }, 0},
		"lower 7":       {func(p []byte) { p[24] = 7 }, 0},
		"blocks +1":     {func(p []byte) { p[8]++ }, 0},
		"blocks 1":      {func(p []byte) { p[8], p[9] = 1, 0 }, 0},
		"blocks huge":   {func(p []byte) { p[15] = 0x40 }, 0},
		"keys 0":        {func(p []byte) { clear(p[0:8]) }, 0},
		"keys > slots":  {func(p []byte) { binary.LittleEndian.PutUint64(p, uint64(f.Slots())+1) }, 0},
		"keys > max":    {func(p []byte) { p[4] = 1 }, 0},
		"upper > total": {func(p []byte) { p[21] = 1 }, 0},
		"fpr 0":         {func(p []byte) { clear(p[29:37]) }, 0},
		"payload short": {func([]byte) {}, 8},
	} {
		if _, err := Decode(rewrap(Layout, c.edit, c.cut), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// When no size in the retry policy can hold the keys, Build gives up with
// ErrBuildFailed after a bounded number of attempts.
func TestBuildFailed(t *testing.T) {
	keys := filtertest.Hashes(2000, 72)
	b := Builder{forceSlots: 256} // grows to at most 256 + 8*128 slots
	_, err := b.Build(keys, Params{FPR: 0.01})
	if !errors.Is(err, bloomery.ErrBuildFailed) {
		t.Fatalf("err = %v, want ErrBuildFailed", err)
	}
	if want := seedsPerSize * (maxGrowths + 1); b.Attempts != want {
		t.Errorf("%d attempts, want %d", b.Attempts, want)
	}
	t.Log(err)
	// The same builder then builds normally.
	b.forceSlots = 0
	f := mustBuild(t, &b, keys, Params{FPR: 0.01})
	filtertest.NoFalseNegatives(t, "after failure", f.ContainsHash, keys)
}
