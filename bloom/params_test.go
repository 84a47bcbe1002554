package bloom

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func TestParamsRefused(t *testing.T) {
	keyless, err := hashing.Restore(hashing.AlgSipHash, 1, hashing.Expect{Keyless: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]Params{
		"zero capacity":     {FPR: 0.01},
		"negative capacity": {Capacity: -1, FPR: 0.01},
		"no fpr":            {Capacity: 10},
		"both":              {Capacity: 10, FPR: 0.01, BitsPerKey: 10},
		"fpr 1":             {Capacity: 10, FPR: 1},
		"fpr negative":      {Capacity: 10, FPR: -0.1},
		"fpr NaN":           {Capacity: 10, FPR: math.NaN()},
		"bpk tiny":          {Capacity: 10, BitsPerKey: 0.1},
		"bpk huge":          {Capacity: 10, BitsPerKey: 5000},
		"k 33":              {Capacity: 10, FPR: 0.01, HashFuncs: 33},
		"k negative":        {Capacity: 10, FPR: 0.01, HashFuncs: -1},
		"too big":           {Capacity: math.MaxInt / 2, FPR: 1e-9},
		"keyless hasher":    {Capacity: 10, FPR: 0.01, Hasher: keyless},
	} {
		if _, err := New(p); err == nil {
			t.Errorf("New(%s) accepted %+v", name, p)
		} else if !errors.Is(err, bloomery.ErrInvalidParams) && !errors.Is(err, bloomery.ErrKeyRequired) {
			t.Errorf("New(%s): %v does not wrap ErrInvalidParams", name, err)
		}
		if _, err := NewBlocked(p); err == nil {
			t.Errorf("NewBlocked(%s) accepted %+v", name, p)
		}
	}
	if _, err := New(Params{Capacity: 10, FPR: 0.01, Concurrent: true}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Errorf("standard filter accepted Concurrent: %v", err)
	}
}

// TestSizing checks that both constructors meet the target FPR by the
// formula with little waste, and that k follows the rules.
func TestSizing(t *testing.T) {
	for _, n := range []int{1, 10, 1000, 1_000_000} {
		for _, p := range []float64{0.5, 0.1, 0.01, 0.001, 1e-6} {
			f, err := NewForCapacity(n, p)
			if err != nil {
				t.Fatal(err)
			}
			if f.DesignFPR() > p {
				t.Errorf("standard n=%d p=%v: design FPR %v", n, p, f.DesignFPR())
			}
			if want := fpmath.StandardK(float64(f.Bits()) / float64(n)); f.K() != want {
				t.Errorf("standard n=%d p=%v: k=%d, round(ln2*m/n)=%d", n, p, f.K(), want)
			}
			if opt := fpmath.BitsPerKeyForFPR(p) * float64(n); n >= 1000 && float64(f.Bits()) > 1.01*opt+64 {
				t.Errorf("standard n=%d p=%v: %d bits, optimum %.0f", n, p, f.Bits(), opt)
			}
			b, err := NewBlockedForCapacity(n, p)
			if err != nil {
				t.Fatal(err)
			}
			if b.DesignFPR() > p {
				t.Errorf("blocked n=%d p=%v: design FPR %v", n, p, b.DesignFPR())
			}
			if want := BlockedK(float64(b.Bits()) / float64(n)); b.K() != want {
				t.Errorf("blocked n=%d p=%v: k=%d, BlockedK=%d", n, p, b.K(), want)
			}
			// One block fewer must miss the target (minimal size).
			if b.Blocks() > 1 {
				fewer := fpmath.BlockedFPR(float64((b.Blocks()-1)*BlockBits), float64(n), BlockedK(float64((b.Blocks()-1)*BlockBits)/float64(n)), BlockBits)
				if fewer <= p {
					t.Errorf("blocked n=%d p=%v: %d blocks, but %d meet the target", n, p, b.Blocks(), b.Blocks()-1)
				}
			}
		}
	}
	b, _ := NewBlockedForCapacity(1_000_000, 0.01)
	t.Logf("blocked 1%%: %.2f bits/key, k=%d, design %.4f%%", float64(b.Bits())/1e6, b.K(), 100*b.DesignFPR())
	s, _ := NewForCapacity(1_000_000, 0.01)
	t.Logf("standard 1%%: %.2f bits/key, k=%d, design %.4f%%", float64(s.Bits())/1e6, s.K(), 100*s.DesignFPR())
	// Explicit k and bits per key are honoured.
	f, _ := New(Params{Capacity: 1000, BitsPerKey: 10, HashFuncs: 3})
	if f.K() != 3 || f.Bits() != 10048 {
		t.Errorf("explicit params: k=%d m=%d", f.K(), f.Bits())
	}
}

// TestBlockedKTable re-derives the thresholds of BlockedK from the Poisson
// model: at each threshold t, k = i+1 must be the best probe count at t
// millibits and k = i+2 at t+1 (within the resolution of one millibit).
func TestBlockedKTable(t *testing.T) {
	for i, th := range blockedKThresholds {
		at, _ := fpmath.BlockedBestK(float64(th)/1000, BlockBits, MaxHashFuncs)
		above, _ := fpmath.BlockedBestK(float64(th+1)/1000, BlockBits, MaxHashFuncs)
		if at != i+1 || above != i+2 {
			t.Errorf("threshold %d millibits: best k %d there and %d above, table says %d|%d", th, at, above, i+1, i+2)
		}
		if BlockedK(float64(th)/1000) != i+1 || BlockedK(float64(th+1)/1000) != i+2 {
			t.Errorf("BlockedK disagrees with its table at %d millibits", th)
		}
	}
	if len(blockedKThresholds) != MaxHashFuncs-1 || BlockedK(MaxBitsPerKey) != MaxHashFuncs {
		t.Errorf("table has %d thresholds for k up to %d", len(blockedKThresholds), MaxHashFuncs)
	}
}

// TestBlockedKMeasured measures the FPR at the chosen k and its neighbours
// away from the crossovers: the chosen k must measure best, which checks
// that the Poisson model (and so the table) describes this probe
// derivation.
func TestBlockedKMeasured(t *testing.T) {
	t.Parallel()
	n := million() / 2
	keys := filtertest.Hashes(n, 61)
	for _, bpk := range []float64{4.3, 12.8} {
		k0 := BlockedK(bpk)
		var fprs [3]float64
		for j, k := range []int{k0 - 2, k0, k0 + 2} {
			f, err := NewBlocked(Params{Capacity: n, BitsPerKey: bpk, HashFuncs: k})
			if err != nil {
				t.Fatal(err)
			}
			f.AddBatch(keys)
			fprs[j] = filtertest.MeasureFPR(f.ContainsHash, 2*n, 62)
			want := fpmath.BlockedFPR(float64(f.Bits()), float64(n), k, BlockBits)
			filtertest.CheckFPR(t, fmt.Sprintf("bpk=%v k=%d", bpk, k), fprs[j], want, 0.15, 2*n)
		}
		if !(fprs[1] < fprs[0] && fprs[1] < fprs[2]) {
			t.Errorf("bpk=%v: measured FPR at k=%d,%d,%d: %v; the chosen middle one should be lowest", bpk, k0-2, k0, k0+2, fprs)
		}
	}
}
