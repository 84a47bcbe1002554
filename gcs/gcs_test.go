package gcs

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func million() int {
	if filtertest.Short() {
		return 100_000
	}
	return 1_000_000
}

// checkFilter runs the no-false-negative check (single and batch) and the
// FPR check on f, built from hashes.
func checkFilter(t *testing.T, what string, f *Filter, hashes []uint64, probeSeed uint64) {
	t.Helper()
	filtertest.NoFalseNegatives(t, what+" ContainsHash", f.ContainsHash, hashes)
	sorted := slices.Clone(hashes)
	slices.Sort(sorted)
	out := make([]bool, len(sorted))
	f.ContainsBatch(sorted, out)
	for i, ok := range out {
		if !ok {
			t.Fatalf("%s: sorted ContainsBatch missed hash %#x", what, sorted[i])
		}
	}
	probes := million()
	measured := filtertest.MeasureFPR(f.ContainsHash, probes, probeSeed)
	filtertest.CheckFPR(t, what, measured, f.EstimatedFPR(), 0.15, probes)

	// The merge answers exactly as the single lookups do.
	ps := filtertest.Hashes(probes/10, probeSeed+1000)
	slices.Sort(ps)
	pout := make([]bool, len(ps))
	f.ContainsBatch(ps, pout)
	for i, h := range ps {
		if pout[i] != f.ContainsHash(h) {
			t.Fatalf("%s: merge and single lookup disagree on %#x", what, h)
		}
	}
}

func TestNoFalseNegativesAndFPR(t *testing.T) {
	n := million()
	hashes := filtertest.Hashes(n, 1)
	// P = 7: M = 192, FPR ≈ 0.52%, so 10^6 probes give ±1.4% (1 sigma).
	f, err := Build(hashes, Params{P: 7})
	if err != nil {
		t.Fatal(err)
	}
	if f.M() != 192 || f.Len() != n {
		t.Fatalf("M = %d, N = %d", f.M(), f.Len())
	}
	checkFilter(t, "P=7 built", f, hashes, 2)
	bpk := float64(f.StreamBits()) / float64(n)
	want := CodeBits(7, 192)
	if bpk < want-0.05 || bpk > want+0.05 {
		t.Errorf("stream bits/key %.3f, expected %.3f", bpk, want)
	}
	t.Logf("stream bits/key %.3f (expected %.3f, index adds %.3f)", bpk, want, float64(16*len(f.idx)*8)/float64(n))

	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	checkFilter(t, "P=7 decoded", &g, hashes, 3)
	raw, err := ParseRaw(f.Bytes(), 7, 192, hashing.Hasher{})
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "P=7 raw parse", raw.ContainsHash, hashes)
}

// TestKeysAndFPRParam covers byte keys, sizing by FPR and keyed hashing;
// the 10^6-key checks are in TestNoFalseNegativesAndFPR, so this one uses
// 2·10^5 keys (still within ±15% at 5 sigma for a 1% FPR).
func TestKeysAndFPRParam(t *testing.T) {
	n := million() / 5
	keys := filtertest.Keys(n, 11)
	h := hashing.XXH3(42)
	f, err := BuildKeys(keys, Params{FPR: 0.01, Hasher: h})
	if err != nil {
		t.Fatal(err)
	}
	if f.M() != 100 || f.P() != BestP(100) {
		t.Fatalf("FPR 1%%: M = %d, P = %d", f.M(), f.P())
	}
	for _, k := range keys {
		if !f.Contains(k) {
			t.Fatalf("false negative for %q", k)
		}
	}
	absent := filtertest.Keys(n, 12)
	fp := 0
	for _, k := range absent {
		if f.Contains(k) {
			fp++
		}
	}
	filtertest.CheckFPR(t, "FPR=1% keys", float64(fp)/float64(n), f.EstimatedFPR(), 0.15, n)
	if !f.MatchAny(append(slices.Clone(absent[:1000]), keys[n/2])) {
		t.Error("MatchAny missed a member")
	}
	// Keyed (SipHash) general filter: decodes only with the key.
	sh := hashing.SipHash([16]byte{1, 2, 3})
	kf, err := BuildKeys(keys[:1000], Params{P: 10, Hasher: sh})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := kf.MarshalBinary()
	if _, err := Decode(enc, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Fatalf("want ErrKeyRequired, got %v", err)
	}
	if _, err := Decode(enc, hashing.Want(hashing.SipHash([16]byte{9}))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("wrong key: want ErrIncompatible, got %v", err)
	}
	d, err := Decode(enc, hashing.Want(sh))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:1000] {
		if !d.Contains(k) {
			t.Fatal("keyed filter: false negative after decode")
		}
	}
}

// TestValuesAndLongCodes checks the decoded values against the reference
// computation, including parameters whose unary quotients are long (the
// decoder's slow path) and a tiny M (mostly zero quotients).
func TestValuesAndLongCodes(t *testing.T) {
	for _, p := range []Params{{P: 1, M: 5000}, {P: 2, M: 1 << 12}, {P: 32, M: 1 << 33}, {P: 19, M: 784931}, {P: 8, M: 3}, {P: 32, M: 1}} {
		hashes := filtertest.Hashes(5000, 7)
		hashes = append(hashes, hashes[:100]...) // duplicates are removed
		f, err := Build(hashes, p)
		if err != nil {
			t.Fatal(err)
		}
		uniq := slices.Compact(slices.Sorted(slices.Values(hashes)))
		var want []uint64
		for _, h := range uniq {
			want = append(want, hashing.Reduce(h, uint64(len(uniq))*p.M))
		}
		var got []uint64
		f.Values(func(v uint64) bool { got = append(got, v); return true })
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: decoded values differ", p)
		}
		filtertest.NoFalseNegatives(t, "long codes", f.ContainsHash, hashes)
		// The sorted merge (windowed decoder and its slow path) agrees
		// with single lookups on members and on absent probes.
		probes := append(slices.Clone(uniq), filtertest.Hashes(5000, 8)...)
		slices.Sort(probes)
		out := make([]bool, len(probes))
		f.ContainsBatch(probes, out)
		for i, h := range probes {
			if out[i] != f.ContainsHash(h) {
				t.Fatalf("%+v: merge and single lookup disagree on %#x", p, h)
			}
		}
		if !f.MatchAnyHashes(uniq[len(uniq)-1:]) {
			t.Fatalf("%+v: MatchAnyHashes missed the largest member", p)
		}
		g, err := ParseRaw(f.Bytes(), p.P, p.M, hashing.Hasher{})
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		filtertest.NoFalseNegatives(t, "long codes parsed", g.ContainsHash, hashes)
		ref, _ := Build(uniq, p)
		if !bytes.Equal(ref.Bytes(), f.Bytes()) {
			t.Fatalf("%+v: duplicates changed the encoding", p)
		}
	}
}

func TestEmptyAndParams(t *testing.T) {
	f, err := Build(nil, Params{P: 19})
	if err != nil {
		t.Fatal(err)
	}
	if f.ContainsHash(0) || f.Contains([]byte("x")) || f.MatchAny([][]byte{[]byte("x")}) {
		t.Error("empty filter matched")
	}
	if !bytes.Equal(f.Bytes(), []byte{0}) {
		t.Errorf("empty filter serializes as %x", f.Bytes())
	}
	for _, p := range []Params{{}, {FPR: 0.6}, {P: 33}, {P: -1}, {P: 5, M: MaxM + 1}, {FPR: 1e-20}} {
		if _, err := Build([]uint64{1}, p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: %v, want ErrInvalidParams", p, err)
		}
	}
	if _, err := Build(filtertest.Hashes(1<<17, 1), Params{P: 32, M: MaxM}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Errorf("N·M overflow: %v", err)
	}
	if BestP(784931) != 19 {
		t.Errorf("BestP(784931) = %d, want 19", BestP(784931))
	}
	if b := CodeBits(19, 784931); b < 21.0 || b > 21.1 {
		t.Errorf("CodeBits(19, 784931) = %.3f, want 21.05", b)
	}
}

func TestZeroAllocs(t *testing.T) {
	hashes := filtertest.Hashes(10000, 5)
	f, err := Build(hashes, Params{P: 10})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("some key")
	probes := filtertest.Hashes(64, 6)
	sorted := slices.Sorted(slices.Values(probes))
	out := make([]bool, 64)
	filtertest.ZeroAllocs(t, "ContainsHash", func() { f.ContainsHash(hashes[77]) })
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(key) })
	filtertest.ZeroAllocs(t, "ContainsString", func() { f.ContainsString("some key") })
	filtertest.ZeroAllocs(t, "ContainsBatch unsorted", func() { f.ContainsBatch(probes, out) })
	filtertest.ZeroAllocs(t, "ContainsBatch sorted", func() { f.ContainsBatch(sorted, out) })
}

func TestDecodeErrors(t *testing.T) {
	f, _ := Build(filtertest.Hashes(1000, 1), Params{P: 10})
	enc, _ := f.MarshalBinary()
	if _, err := Decode(enc[:len(enc)-1], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	raw := f.Bytes()
	for _, bad := range [][]byte{raw[:len(raw)-1], append(slices.Clone(raw), 0), {}} {
		if _, err := ParseRaw(bad, 10, f.M(), hashing.Hasher{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("raw of %d bytes: %v, want ErrCorrupt", len(bad), err)
		}
	}
	// Nonzero padding.
	g, _ := Build([]uint64{1 << 63}, Params{P: 3, M: 8})
	b := g.Bytes()
	if g.StreamBits()%8 != 0 {
		b[len(b)-1] |= 1
		if _, err := ParseRaw(b, 3, 8, hashing.Hasher{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("nonzero padding: %v", err)
		}
	}
	// A huge N announced by a short stream is refused before allocating.
	huge := appendCompactSize(nil, 1<<31)
	if _, err := ParseBIP158([32]byte{}, append(huge, 0xff)); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("huge N: %v", err)
	}
}

// goldenCases are the fixed filters written to testdata/golden/v1.
func goldenCases(t *testing.T) map[string]struct {
	f    *Filter
	keys [][]byte
	want hashing.Expect
} {
	t.Helper()
	out := map[string]struct {
		f    *Filter
		keys [][]byte
		want hashing.Expect
	}{}
	keys := filtertest.Keys(1000, 99)
	general, err := BuildKeys(keys, Params{P: 10})
	if err != nil {
		t.Fatal(err)
	}
	out["general-p10-1000"] = struct {
		f    *Filter
		keys [][]byte
		want hashing.Expect
	}{general, keys, hashing.Expect{}}
	var bh [32]byte
	for i := range bh {
		bh[i] = byte(i * 7)
	}
	bip, err := BuildBIP158(bh, keys[:200])
	if err != nil {
		t.Fatal(err)
	}
	out["bip158-200"] = struct {
		f    *Filter
		keys [][]byte
		want hashing.Expect
	}{bip, keys[:200], hashing.Want(BIP158Params(bh).Hasher)}
	empty, _ := BuildKeys(nil, Params{FPR: 0.001})
	out["empty"] = struct {
		f    *Filter
		keys [][]byte
		want hashing.Expect
	}{empty, nil, hashing.Expect{}}
	return out
}

func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "v1")
	for name, c := range goldenCases(t) {
		path := filepath.Join(dir, name+".blmy")
		enc, err := c.f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create)", err)
		}
		d, err := Decode(data, c.want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range c.keys {
			if !d.Contains(k) {
				t.Fatalf("%s: golden filter misses %q", name, k)
			}
		}
		re, _ := d.MarshalBinary()
		if !bytes.Equal(re, data) {
			t.Fatalf("%s: re-encoding differs from the golden file", name)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("%s: building today gives different bytes than the golden file", name)
		}
	}
}

func BenchmarkContainsHash(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		f, _ := Build(filtertest.Hashes(n, 1), Params{P: 19})
		probes := filtertest.Hashes(1024, 2)
		b.Run(bName(n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.ContainsHash(probes[i&1023])
				i++
			}
		})
	}
}

func BenchmarkContainsBatchSorted(b *testing.B) {
	n := 1_000_000
	f, _ := Build(filtertest.Hashes(n, 1), Params{P: 19})
	probes := slices.Sorted(slices.Values(filtertest.Hashes(100_000, 2)))
	out := make([]bool, len(probes))
	for b.Loop() {
		f.ContainsBatch(probes, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(probes)), "ns/key")
}

func BenchmarkBuild(b *testing.B) {
	hashes := filtertest.Hashes(1_000_000, 1)
	var bl Builder
	for b.Loop() {
		if _, err := bl.Build(hashes, Params{P: 19}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hashes)), "ns/key")
}

func bName(n int) string {
	if n >= 1_000_000 {
		return "n=1e6"
	}
	return "n=1e3"
}

func TestSortHashes(t *testing.T) {
	for _, n := range []int{0, 1, 100, radixThreshold, 100_000} {
		a := filtertest.Hashes(n, uint64(n)+1)
		for i := 0; i < n/10; i++ {
			a[i] &= 0xffff // shared high digits: skipped passes
		}
		want := slices.Sorted(slices.Values(a))
		sortHashes(a, nil)
		if !slices.Equal(a, want) {
			t.Fatalf("n=%d: not sorted", n)
		}
	}
	same := make([]uint64, radixThreshold)
	sortHashes(same, nil) // every pass skipped
}
