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

func TestBlockedFPRExact(t *testing.T) {
	// One block per key set and k=1: the query hits a set bit with
	// probability E[X]/b exactly, so both formulas agree.
	for _, bpk := range []float64{4, 10} {
		a := BlockedFPR(bpk*1e6, 1e6, 1, 512)
		e := BlockedFPRExact(bpk*1e6, 1e6, 1, 512)
		if math.Abs(a-e) > 1e-9 {
			t.Errorf("k=1 bpk=%v: %g vs %g", bpk, a, e)
		}
	}
	// For k > 1 the exact value is larger (Jensen), by 1.2% at 10
	// bits/key and 2.6% at 16.
	for _, c := range []struct {
		bpk    float64
		k      int
		lo, hi float64
	}{{10, 7, 1.003, 1.02}, {16, 10, 1.02, 1.08}} {
		a := BlockedFPR(c.bpk*1e6, 1e6, c.k, 512)
		e := BlockedFPRExact(c.bpk*1e6, 1e6, c.k, 512)
		if r := e / a; r < c.lo || r > c.hi {
			t.Errorf("bpk=%v k=%d: exact/Poisson-mean = %.4f, want in [%v, %v]", c.bpk, c.k, r, c.lo, c.hi)
		} else {
			t.Logf("bpk=%v k=%d: Poisson-mean %.5f%%, exact %.5f%% (x%.4f)", c.bpk, c.k, 100*a, 100*e, r)
		}
	}
}
