package bloom

import (
	"math/bits"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// The probe rules exactly as docs/format/bloom.md states them.

// docStandardProbes returns the bit positions of a key's k probes on an
// m-bit standard filter in the given layout.
func docStandardProbes(h, m uint64, k int, layout uint8) []uint64 {
	out := make([]uint64, k)
	if layout == Layout1 {
		d := hashing.Mix64(h) | 1
		for j := range k {
			out[j], _ = bits.Mul64(h+uint64(j)*d, m)
		}
		return out
	}
	d := bits.RotateLeft64(h, 32) | 1
	for j := range k {
		g := h + uint64(j)*d
		word, _ := bits.Mul64(g, m/64)
		out[j] = 64*word + g%64
	}
	return out
}

// newLayout is New for a layout of the caller's choice: layout 1 filters
// are otherwise only decoded, from files written before layout 2.
func newLayout(t testing.TB, p Params, layout uint8) *Filter {
	t.Helper()
	f, err := New(p)
	if layout == Layout1 {
		f, err = newLayout1(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
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
		f1 := newLayout(t, Params{Capacity: 1000, BitsPerKey: 10.3, HashFuncs: k}, Layout1)
		b, _ := NewBlocked(Params{Capacity: 1000, BitsPerKey: 10.3, HashFuncs: k})
		wf := make([]uint64, len(f.words))
		wf1 := make([]uint64, len(f.words))
		wb := make([]uint64, len(b.words))
		for _, h := range filtertest.Hashes(1000, 81) {
			f.AddHash(h)
			f1.AddHash(h)
			b.AddHash(h)
			for _, p := range docStandardProbes(h, f.Bits(), k, Layout2) {
				wf[p/64] |= 1 << (p % 64)
			}
			for _, p := range docStandardProbes(h, f.Bits(), k, Layout1) {
				wf1[p/64] |= 1 << (p % 64)
			}
			for _, p := range docBlockedProbes(h, b.Bits(), k) {
				wb[p/64] |= 1 << (p % 64)
			}
		}
		if f.Layout() != Layout2 || f1.Layout() != Layout1 {
			t.Fatalf("layouts %d and %d", f.Layout(), f1.Layout())
		}
		for i := range wf {
			if wf[i] != f.words[i] {
				t.Fatalf("standard k=%d: word %d is %#x, documented rule gives %#x", k, i, f.words[i], wf[i])
			}
			if wf1[i] != f1.words[i] {
				t.Fatalf("standard layout 1 k=%d: word %d is %#x, documented rule gives %#x", k, i, f1.words[i], wf1[i])
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
	for _, layout := range []uint8{Layout1, Layout2} {
		repeated, collapsed := 0, 0
		for _, h := range filtertest.Hashes(n, 82) {
			ps := docStandardProbes(h, m, k, layout)
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
				t.Logf("layout %d, hash %#x: %d distinct probes of %d", layout, h, distinct, k)
			}
		}
		birthday := float64(n) * k * (k - 1) / 2 / m
		t.Logf("layout %d: %d of %d keys have a repeated probe; independent probes would give %.1f", layout, repeated, n, birthday)
		if float64(repeated) > 3*birthday+10 {
			t.Errorf("layout %d: %d keys with repeated probes, birthday rate %.1f", layout, repeated, birthday)
		}
		if limit := 4*float64(k)*float64(n)/m + 2; float64(collapsed) > limit {
			t.Errorf("layout %d: %d keys lost two or more probes, more than %.0f", layout, collapsed, limit)
		}
	}
}
