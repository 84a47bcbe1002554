//go:build !purego

package bloom

import (
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestContainsWithoutMULX makes filters as on a CPU without BMI2: their
// probes fields send containsKey (after the assembly hash, which uses no
// BMI2 instruction) and containsHash to the Go path (probesGo), whose
// answers are the Go loop's.
func TestContainsWithoutMULX(t *testing.T) {
	defer func(had bool) { haveMULX = had }(haveMULX)
	haveMULX = false
	keys := filtertest.Keys(2000, 41)
	absent := filtertest.Keys(2000, 42)
	for _, n := range []int{1000, 1 << 20} {
		f, err := New(Params{Capacity: n, FPR: 0.01, Hasher: hashing.XXH3(3)})
		if err != nil {
			t.Fatal(err)
		}
		if f.probes != probesGo || f.hprobes != probesGo {
			t.Fatalf("n=%d: probes %d, hprobes %d without MULX, want probesGo", n, f.probes, f.hprobes)
		}
		for _, k := range keys {
			f.Add(k)
		}
		yes := 0
		for _, k := range append(keys, absent...) {
			hv := f.Hasher().Sum64(k)
			want := containsHashGo(f, hv, 0)
			if f.ContainsHash(hv) != want || f.Contains(k) != want || f.ContainsString(string(k)) != want {
				t.Fatalf("n=%d, key %q: Contains disagrees with ContainsHash (%v)", n, k, want)
			}
			if want {
				yes++
			}
		}
		if yes < len(keys) || yes == len(keys)+len(absent) {
			t.Fatalf("n=%d: %d of %d keys answered true", n, yes, len(keys)+len(absent))
		}
	}
}

// TestProbesFor pins the routine each kind of filter gets: the paired
// start up to pairMaxBytes for k >= 2, a straight run for k <= 16, the
// loop above, the Go path for other hashers.
func TestProbesFor(t *testing.T) {
	if !haveMULX {
		t.Skip("no BMI2: every filter takes the Go path")
	}
	x := hashing.XXH3(0)
	for _, c := range []struct {
		h     hashing.Hasher
		words uint64
		k     int
		want  uint8
	}{
		{x, pairMaxBytes / 8, 2, probesPair},
		{x, pairMaxBytes / 8, 30, probesPair},
		{x, pairMaxBytes / 8, 1, probesRun0 + 1},
		{x, pairMaxBytes/8 + 1, 2, probesRun0 + 2},
		{x, pairMaxBytes/8 + 1, 16, probesRun0 + 16},
		{x, pairMaxBytes/8 + 1, 17, probesLoop},
		{hashing.SipHashKeys(1, 2), 1 << 20, 7, probesGo},
	} {
		if got := probesFor(c.h, Layout2, c.words, c.k); got != c.want {
			t.Errorf("probesFor(%v, %d words, k=%d) = %d, want %d", c.h, c.words, c.k, got, c.want)
		}
	}
	// containsHash takes any hasher's hashes.
	for _, c := range []struct {
		words uint64
		k     int
		want  uint8
	}{
		{pairMaxBytes / 8, 2, probesPair},
		{pairMaxBytes / 8, 1, probesRun0 + 1},
		{pairMaxBytes/8 + 1, 7, probesRun0 + 7},
		{pairMaxBytes/8 + 1, 17, probesLoop},
		{1 << 20, 0, probesRun0},
	} {
		if got := hashProbesFor(Layout2, c.words, c.k); got != c.want {
			t.Errorf("hashProbesFor(%d words, k=%d) = %d, want %d", c.words, c.k, got, c.want)
		}
	}
}
