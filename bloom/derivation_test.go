package bloom

import (
	"math/bits"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// The probe rules exactly as docs/format/bloom.md states them.

func docStandardProbes(h, m uint64, k int) []uint64 {
	d := hashing.Mix64(h) | 1
	out := make([]uint64, k)
	for j := range k {
		hi, _ := bits.Mul64(h+uint64(j)*d, m)
		out[j] = hi
	}
	return out
}

func docBlockedProbes(h, m uint64, k int) []uint64 {
	block, _ := bits.Mul64(h, m/512)
	out := make([]uint64, k)
	for j := range k {
		x := hashing.Mix64(h)
		if r := uint64(j / 7); r > 0 {
			x = hashing.Remix(h, r)
		}
		out[j] = 512*block + (x>>(9*(j%7)))&511
	}
	return out
}

// TestDerivationMatchesDoc sets the documented bits by hand and compares
// the array with what AddHash produced, for k up to 32 (several refills of
// the blocked probe word).
func TestDerivationMatchesDoc(t *testing.T) {
	for _, k := range []int{1, 6, 7, 8, 15, 32} {
		f, _ := New(Params{Capacity: 1000, BitsPerKey: 10.3, HashFuncs: k})
		b, _ := NewBlocked(Params{Capacity: 1000, BitsPerKey: 10.3, HashFuncs: k})
		wf := make([]uint64, len(f.words))
		wb := make([]uint64, len(b.words))
		for _, h := range filtertest.Hashes(1000, 81) {
			f.AddHash(h)
			b.AddHash(h)
			for _, p := range docStandardProbes(h, f.Bits(), k) {
				wf[p/64] |= 1 << (p % 64)
			}
			for _, p := range docBlockedProbes(h, b.Bits(), k) {
				wb[p/64] |= 1 << (p % 64)
			}
		}
		for i := range wf {
			if wf[i] != f.words[i] {
				t.Fatalf("standard k=%d: word %d is %#x, documented rule gives %#x", k, i, f.words[i], wf[i])
			}
		}
		for i := range wb {
			if wb[i] != b.words[i] {
				t.Fatalf("blocked k=%d: word %d is %#x, documented rule gives %#x", k, i, b.words[i], wb[i])
			}
		}
	}
}

// TestStandardProbesDistinct checks there is no step degeneracy: the share
// of keys whose k probes are not k distinct bits stays at the level of k
// independent uniform probes (the birthday rate k(k-1)/2m). Keys whose
// step d/2^64 falls within about 1/m of a fraction a/q with q < k lose
// several probes at once (the residual weakness of any double hashing,
// documented on Filter); they must stay at a rate of order k/m.
func TestStandardProbesDistinct(t *testing.T) {
	t.Parallel()
	const m, k = 1 << 20, 7
	n := million()
	repeated, collapsed := 0, 0
	for _, h := range filtertest.Hashes(n, 82) {
		ps := docStandardProbes(h, m, k)
		distinct := k
		for i := range ps {
			for j := range i {
				if ps[i] == ps[j] {
					distinct--
					break
				}
			}
		}
		if distinct < k {
			repeated++
		}
		if distinct < k-1 {
			collapsed++
			t.Logf("hash %#x: %d distinct probes of %d", h, distinct, k)
		}
	}
	birthday := float64(n) * k * (k - 1) / 2 / m
	t.Logf("%d of %d keys have a repeated probe; independent probes would give %.1f", repeated, n, birthday)
	if float64(repeated) > 3*birthday+10 {
		t.Errorf("%d keys with repeated probes, birthday rate %.1f", repeated, birthday)
	}
	if limit := 4*float64(k)*float64(n)/m + 2; float64(collapsed) > limit {
		t.Errorf("%d keys lost two or more probes, more than %.0f", collapsed, limit)
	}
}
