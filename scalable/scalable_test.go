package scalable

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

func mustNew(t testing.TB, p Params) *Filter {
	t.Helper()
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func item(i int) string { return fmt.Sprintf("item:%d", i) }

// TestRedisReserve checks the figures observed on RedisBloom with
// BF.RESERVE k 0.01 100 and 1000 distinct BF.ADDs (redisbloom.md §2.1).
func TestRedisReserve(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis})
	if got := f.SizeBytes(); got != 144 {
		t.Fatalf("empty RESERVE 0.01 100: %d bytes, want 144", got)
	}
	for i := range 1000 {
		if _, err := f.TryAddString(item(i)); err != nil {
			t.Fatal(err)
		}
	}
	links := f.Links()
	wantCap := []int{100, 200, 400, 800}
	wantBytes := []int{144, 312, 696, 1536}
	wantK := []int{8, 9, 10, 11}
	wantErr := []float64{0.005, 0.0025, 0.00125, 0.000625}
	if len(links) != 4 || f.NumLinks() != 4 {
		t.Fatalf("%d links, want 4", len(links))
	}
	for i, l := range links {
		if l.Capacity != wantCap[i] || l.SizeBytes != wantBytes[i] || l.HashFuncs != wantK[i] || math.Abs(l.Error-wantErr[i]) > 1e-15 {
			t.Errorf("link %d: capacity %d bytes %d hashes %d error %g; want %d %d %d %g",
				i, l.Capacity, l.SizeBytes, l.HashFuncs, l.Error, wantCap[i], wantBytes[i], wantK[i], wantErr[i])
		}
		if i < 3 && l.Len != l.Capacity {
			t.Errorf("link %d holds %d, want its capacity %d", i, l.Len, l.Capacity)
		}
	}
	if f.Cap() != 1500 {
		t.Errorf("Capacity %d, want 1500", f.Cap())
	}
	// RedisBloom counted 994 (6 false positives with its hash); ours has
	// its own false positives, but a handful at most.
	if n := f.Len(); n > 1000 || n < 985 {
		t.Errorf("items inserted %d, want 985..1000", n)
	}
	if sum := links[0].Len + links[1].Len + links[2].Len + links[3].Len; sum != f.Len() {
		t.Errorf("links hold %d, Len %d", sum, f.Len())
	}
	for i := range 1000 {
		if !f.ContainsString(item(i)) {
			t.Fatalf("false negative for %s", item(i))
		}
	}
}

func TestRedisExpansion4(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 1000, FPR: 0.01, Expansion: 4, Sizing: SizingRedis})
	for i := range 30000 {
		f.AddString(item(i))
	}
	var caps []int
	for _, l := range f.Links() {
		caps = append(caps, l.Capacity)
	}
	if fmt.Sprint(caps) != "[1000 4000 16000 64000]" || f.Cap() != 85000 {
		t.Fatalf("capacities %v (sum %d), want [1000 4000 16000 64000] (85000)", caps, f.Cap())
	}
}

// TestRedisSingleLinkSizes: BF.INFO Size minus RedisBloom's 96 bytes of
// headers for one-link chains.
func TestRedisSingleLinkSizes(t *testing.T) {
	for _, c := range []struct {
		capacity int
		fpr      float64
		bytes    int
	}{{100, 0.01, 144}, {1000, 0.01, 1384}, {1000, 0.001, 1984}} {
		f := mustNew(t, Params{InitialCapacity: c.capacity, FPR: c.fpr, Sizing: SizingRedis})
		if f.SizeBytes() != c.bytes {
			t.Errorf("RESERVE %v %d: %d bytes, want %d", c.fpr, c.capacity, f.SizeBytes(), c.bytes)
		}
	}
	// NONSCALING uses the error as is: 0.01 -> bpe 9.585, 958 bits -> 960.
	f := mustNew(t, Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis, NonScaling: true})
	if l := f.Links()[0]; l.Bits != 960 || l.HashFuncs != 7 || l.Error != 0.01 {
		t.Errorf("NONSCALING 0.01 100: %d bits, %d hashes, error %v; want 960, 7, 0.01", l.Bits, l.HashFuncs, l.Error)
	}
}

func TestLazyGrowth(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis})
	i := 0
	for f.Len() < 100 {
		f.AddString(item(i))
		i++
	}
	if f.NumLinks() != 1 {
		t.Fatalf("a full first link and no new key: %d links, want 1", f.NumLinks())
	}
	for f.Len() == 100 {
		f.AddString(item(i))
		i++
	}
	if f.NumLinks() != 2 || f.Links()[1].Len != 1 {
		t.Fatalf("after the 101st new key: %d links", f.NumLinks())
	}
}

func TestNonScalingFull(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 2, FPR: 0.01, NonScaling: true, Sizing: SizingRedis})
	for _, k := range []string{"a", "b"} {
		if ok, err := f.TryAddString(k); !ok || err != nil {
			t.Fatalf("TryAdd %q = %v, %v", k, ok, err)
		}
	}
	if !f.Full() {
		t.Fatal("Full() = false at capacity")
	}
	before, _ := f.MarshalBinary()
	ok, err := f.TryAddString("c")
	if ok || !errors.Is(err, bloomery.ErrFull) {
		t.Fatalf("TryAdd on a full non-scaling filter = %v, %v; want ErrFull", ok, err)
	}
	after, _ := f.MarshalBinary()
	if !bytes.Equal(before, after) {
		t.Fatal("a refused TryAdd changed the filter")
	}
	// A known key is reported present, not refused.
	if ok, err := f.TryAddString("a"); ok || err != nil {
		t.Fatalf("TryAdd of a present key on a full filter = %v, %v; want false, nil", ok, err)
	}
	// Add cannot refuse: it overfills rather than lose the key.
	if !f.AddString("c") || !f.ContainsString("c") || f.Len() != 3 || f.NumLinks() != 1 {
		t.Fatalf("Add on a full filter: len %d links %d", f.Len(), f.NumLinks())
	}
}

func TestAddReportsNewOnlyWhenNoLinkClaims(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 50, FPR: 0.2}) // high FPR: many claims
	news := 0
	for i := range 5000 {
		k := item(i)
		claimed := f.ContainsString(k)
		added := f.AddString(k)
		if added == claimed {
			t.Fatalf("key %d: claimed %v but Add reported new=%v", i, claimed, added)
		}
		if added {
			news++
		}
	}
	if news != f.Len() || news == 5000 {
		t.Fatalf("%d adds reported new, Len %d (some of 5000 must be false positives at 20%%)", news, f.Len())
	}
	for i := range 5000 {
		if f.AddString(item(i)) {
			t.Fatalf("re-adding key %d reported new", i)
		}
	}
	if news != f.Len() {
		t.Fatal("re-adds changed Len")
	}
}

// TestFPR grows a chain from 1000 to 10^6 keys (10 links) and measures its
// FPR over 10^6 absent probes against the compounded estimate from the
// links' fills, and checks it stays below the target.
func TestFPR(t *testing.T) {
	n, probes := 1_000_000, 1_000_000
	if filtertest.Short() {
		n, probes = 100_000, 200_000
	}
	// The full-size case grows 10 links; the variants start larger (fewer
	// links, same key count scaled down) to keep the package's run short.
	cases := []struct {
		name string
		p    Params
		n    int
	}{
		{"optimal", Params{InitialCapacity: 1000, FPR: 0.01}, n},
		{"redis", Params{InitialCapacity: 1000, FPR: 0.01, Sizing: SizingRedis}, n / 4},
		{"blocked", Params{InitialCapacity: 1000, FPR: 0.01, Blocked: true}, n / 4},
		{"r0.8-s4", Params{InitialCapacity: 1000, FPR: 0.02, Expansion: 4, TighteningRatio: 0.8}, n / 4},
	}
	all := filtertest.Hashes(n, 1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := all[:c.n]
			f := mustNew(t, c.p)
			for _, h := range keys {
				f.AddHash(h)
			}
			filtertest.NoFalseNegatives(t, c.name, f.ContainsHash, keys)
			got := filtertest.MeasureFPR(f.ContainsHash, probes, 2)
			filtertest.CheckFPR(t, c.name, got, f.EstimatedFPR(), 0.15, probes)
			if got > c.p.FPR+3*math.Sqrt(c.p.FPR/float64(probes)) {
				t.Errorf("measured FPR %.4f%% above the chain's target %.4f%%", 100*got, 100*c.p.FPR)
			}
			s := f.Stats()
			if s.Overfilled || s.Len != f.Len() || s.Extra[0].Value != float64(f.NumLinks()) {
				t.Errorf("stats %+v", s)
			}
			t.Logf("%s: %d links, %.2f bits/key, measured %.4f%%, design of links %.4f%%",
				c.name, f.NumLinks(), 8*float64(f.SizeBytes())/float64(c.n), 100*got, 100*s.Extra[5].Value)

			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			g, err := Decode(data, hashing.Expect{})
			if err != nil {
				t.Fatal(err)
			}
			filtertest.NoFalseNegatives(t, c.name+" decoded", g.ContainsHash, keys)
			again, _ := g.MarshalBinary()
			if !bytes.Equal(again, data) || g.Len() != f.Len() || g.Cap() != f.Cap() {
				t.Fatal("decoded filter differs")
			}
			if c.name != "optimal" {
				return
			}
			// Keep growing after decoding.
			more := filtertest.Hashes(n/4, 3)
			for _, h := range more {
				g.AddHash(h)
			}
			filtertest.NoFalseNegatives(t, c.name+" grown after decode", g.ContainsHash, keys)
			filtertest.NoFalseNegatives(t, c.name+" grown after decode (new)", g.ContainsHash, more)
		})
	}
}

func TestInvalidParams(t *testing.T) {
	for _, p := range []Params{
		{InitialCapacity: 0, FPR: 0.01},
		{InitialCapacity: 10, FPR: 0},
		{InitialCapacity: 10, FPR: 1},
		{InitialCapacity: 10, FPR: 0.01, Expansion: -1},
		{InitialCapacity: 10, FPR: 0.01, Expansion: MaxExpansion + 1},
		{InitialCapacity: 10, FPR: 0.01, TighteningRatio: 1},
		{InitialCapacity: 10, FPR: 0.01, Sizing: SizingRedis, Blocked: true},
		{InitialCapacity: 10, FPR: 0.01, Sizing: 7},
	} {
		if _, err := New(p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: err = %v", p, err)
		}
	}
}

func TestKeyed(t *testing.T) {
	key := [16]byte{1, 2, 3}
	f := mustNew(t, Params{InitialCapacity: 10, FPR: 0.01, Hasher: hashing.SipHash(key)})
	for i := range 100 {
		f.AddString(item(i))
	}
	data, _ := f.MarshalBinary()
	if _, err := Decode(data, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Fatalf("keyed filter without key: %v", err)
	}
	if _, err := Decode(data, hashing.Want(hashing.SipHash([16]byte{9}))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("wrong key: %v", err)
	}
	g, err := Decode(data, hashing.Want(hashing.SipHash(key)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if !g.ContainsString(item(i)) {
			t.Fatalf("false negative %d after keyed round trip", i)
		}
	}
	k, err := Decode(data, hashing.Expect{Keyless: true})
	if err != nil || !k.ContainsHash(hashing.SipHash(key).Sum64String(item(5))) {
		t.Fatalf("keyless decode: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 10, FPR: 0.01})
	for i := range 50 {
		f.AddString(item(i))
	}
	data, _ := f.MarshalBinary()
	for i := range data {
		if _, err := Decode(data[:i], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", i, err)
		}
	}
	bad := bytes.Clone(data)
	bad[len(bad)-10] ^= 1
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("flipped bit: %v", err)
	}
	if _, err := Decode(append(bytes.Clone(data), 0), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	l, _ := f.links[0].AppendBinary(nil)
	if _, err := Decode(l, hashing.Expect{}); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Fatalf("a bloom container: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 1 << 20, FPR: 0.01})
	for i := range 1000 {
		f.AddString(item(i))
	}
	// Force a few links so Contains walks a chain.
	g := mustNew(t, Params{InitialCapacity: 10, FPR: 0.01})
	for i := range 1000 {
		g.AddString(item(i))
	}
	k := []byte("some key")
	var h uint64 = 1
	filtertest.ZeroAllocs(t, "Add", func() { h++; f.AddHash(h) })
	filtertest.ZeroAllocs(t, "Contains", func() { g.Contains(k) })
	filtertest.ZeroAllocs(t, "TryAddString", func() { f.TryAddString("x") })
}

func BenchmarkContains(b *testing.B) {
	f := mustNew(b, Params{InitialCapacity: 1000, FPR: 0.01})
	for _, h := range filtertest.Hashes(1_000_000, 1) {
		f.AddHash(h)
	}
	probe := filtertest.Hashes(1<<16, 2)
	i := 0
	for b.Loop() {
		f.ContainsHash(probe[i&(1<<16-1)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
}

// TestRedisSizeProperty: for many capacities and errors a SizingRedis link
// has exactly RedisBloom's bit count and probe count.
func TestRedisSizeProperty(t *testing.T) {
	s := filtertest.SplitMix64(9)
	for range 2000 {
		capacity := 1 + int(s.Next()%200_000)
		fpr := math.Exp(-1 - float64(s.Next()%1500)/100) // e^-1 .. e^-16
		f, err := New(Params{InitialCapacity: capacity, FPR: fpr, Sizing: SizingRedis, NonScaling: true})
		if err != nil {
			t.Fatal(err)
		}
		bits, k := RedisSize(capacity, fpr)
		l := f.Links()[0]
		if l.Bits != max(64, bits) || l.HashFuncs != min(k, 32) {
			t.Fatalf("capacity %d error %g: %d bits %d hashes, RedisBloom %d bits %d hashes", capacity, fpr, l.Bits, l.HashFuncs, bits, k)
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	f := mustNew(b, Params{InitialCapacity: 1000, FPR: 0.01})
	s := filtertest.SplitMix64(1)
	for b.Loop() {
		f.AddHash(s.Next())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
}
