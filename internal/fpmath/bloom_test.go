package fpmath

import (
	"math"
	"testing"
)

func TestBlockedKeyBitProb(t *testing.T) {
	// One block spanning everything is the standard filter.
	m := 4096.0
	if got, want := BlockedKeyBitProb(m, 7, 4096), 1-math.Pow(1-1/m, 7); math.Abs(got-want) > 1e-15 {
		t.Errorf("block = m: %g, want %g", got, want)
	}
	// Slightly less than k/m: repeated probes of a key inside its block.
	q := BlockedKeyBitProb(1<<20, 6, 512)
	if !(q < 6.0/(1<<20) && q > 0.99*6.0/(1<<20)) {
		t.Errorf("q = %g, want just under k/m = %g", q, 6.0/(1<<20))
	}
}

func TestBlockedCountFromFill(t *testing.T) {
	for _, n := range []float64{0, 1, 1000, 1e6, 5e6} {
		m, k := 1e7, 7
		q := BlockedKeyBitProb(m, k, 512)
		x := m * -math.Expm1(n*math.Log1p(-q)) // expected set bits
		if got := BlockedCountFromFill(m, x, k, 512); math.Abs(got-n) > 1e-6*n+1e-9 {
			t.Errorf("n=%g: estimate %g", n, got)
		}
	}
	if !math.IsInf(BlockedCountFromFill(512, 512, 3, 512), 1) {
		t.Error("a full filter should estimate +Inf")
	}
}

func TestBlockedBestK(t *testing.T) {
	// At 10 bits/key the Poisson model gives 0.9576% at k=6 (algorithms.md
	// §1.2) and slightly less at k=7, the optimum.
	k, p := BlockedBestK(10, 512, 32)
	if k != 7 || math.Abs(p-0.00957) > 0.00002 {
		t.Errorf("10 bits/key: k=%d FPR %.5f%%", k, 100*p)
	}
	if p6 := BlockedFPR(10<<20, 1<<20, 6, 512); math.Abs(p6-0.009576) > 0.000002 {
		t.Errorf("k=6: %.5f%%, want 0.9576%%", 100*p6)
	}
	// 16 bits/key: about 0.083% (algorithms.md: best blocked ~0.083%).
	if k, p := BlockedBestK(16, 512, 32); k != 10 || math.Abs(p-0.000825) > 0.00001 {
		t.Errorf("16 bits/key: k=%d FPR %.5f%%", k, 100*p)
	}
}
