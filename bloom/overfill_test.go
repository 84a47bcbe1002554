package bloom

import (
	"fmt"
	"math"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// TestOverfillCurve fills a standard filter sized for n = 10^6 at 1% to
// 1x, 1.5x, 2x, 3x and 5x its capacity and measures the FPR at each step
// against the formula and the textbook curve (about 1%, 5.8%, 16%, 44%,
// 83%), the fill-based estimate, ApproxCount and Overfilled, and where
// Overfilled switches on (about 1.16x).
func TestOverfillCurve(t *testing.T) {
	t.Parallel()
	n := million()
	f, err := NewForCapacity(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	keys := filtertest.Hashes(5*n, 41)
	textbook := map[float64]float64{1: 0.01, 1.5: 0.058, 2: 0.16, 3: 0.44, 5: 0.83}
	m, k := float64(f.Bits()), float64(f.K())
	// Overfilled switches on when fill^k exceeds twice the design FPR:
	// the formula puts that at n' = -(m/k) ln(1 - (2p)^(1/k)) keys.
	threshold := -(m / k) * math.Log1p(-math.Pow(2*f.DesignFPR(), 1/k))
	switched := 0
	added := 0
	for _, x := range []float64{1, 1.5, 2, 3, 5} {
		upto := int(x * float64(n))
		for i, h := range keys[added:upto] {
			f.AddHash(h)
			if switched == 0 && i%1000 == 0 && f.Overfilled() {
				switched = added + i + 1
			}
		}
		added = upto
		name := fmt.Sprintf("standard %.1fx", x)
		got := filtertest.MeasureFPR(f.ContainsHash, n, 42)
		want := fpmath.StandardFPR(float64(f.Bits()), float64(added), f.K())
		filtertest.CheckFPR(t, name+" vs formula", got, want, 0.15, n)
		filtertest.CheckFPR(t, name+" vs textbook", got, textbook[x], 0.15, n)
		filtertest.CheckFPR(t, name+" vs EstimatedFPR", got, f.EstimatedFPR(), 0.15, n)
		if c := f.ApproxCount(); math.Abs(float64(c-added)) > 0.03*float64(added) {
			t.Errorf("%s: ApproxCount %d, true %d", name, c, added)
		} else {
			t.Logf("%s: ApproxCount %d, true %d (%+.2f%%), Len %d", name, c, added, 100*float64(c-added)/float64(added), f.Len())
		}
		if over := f.Overfilled(); over != (x >= 1.5) {
			t.Errorf("%s: Overfilled = %v (estimated %.4f, design %.4f)", name, over, f.EstimatedFPR(), f.DesignFPR())
		}
		if x == 1.5 {
			t.Logf("Overfilled from %d keys (%.3fx capacity); formula predicts %.0f (%.3fx)", switched, float64(switched)/float64(n), threshold, threshold/float64(n))
			if math.Abs(float64(switched)/threshold-1) > 0.02 {
				t.Errorf("Overfilled switched on at %d keys, formula %.0f", switched, threshold)
			}
		}
		if s := f.Stats(); s.Overfilled != f.Overfilled() || s.EstimatedFPR != f.EstimatedFPR() || s.Len != f.Len() {
			t.Errorf("%s: Stats disagree with methods: %+v", name, s)
		}
	}
}

// TestBlockedOverfill does the same for the blocked filter: measured FPR
// against fpmath.BlockedFPR at the true count, EstimatedFPR against the
// measurement, and ApproxCount against the true count.
func TestBlockedOverfill(t *testing.T) {
	t.Parallel()
	n := million()
	f, err := NewBlockedForCapacity(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if f.DesignFPR() > 0.01 {
		t.Errorf("blocked sized for 1%% has design FPR %.4f%%", 100*f.DesignFPR())
	}
	keys := filtertest.Hashes(5*n, 44)
	added := 0
	for _, x := range []float64{1, 1.5, 2, 3, 5} {
		upto := int(x * float64(n))
		f.AddBatch(keys[added:upto])
		added = upto
		name := fmt.Sprintf("blocked %.1fx", x)
		got := filtertest.MeasureFPR(f.ContainsHash, n, 45)
		want := fpmath.BlockedFPR(float64(f.Bits()), float64(added), f.K(), BlockBits)
		filtertest.CheckFPR(t, name+" vs formula", got, want, 0.15, n)
		filtertest.CheckFPR(t, name+" vs EstimatedFPR", got, f.EstimatedFPR(), 0.15, n)
		if c := f.ApproxCount(); math.Abs(float64(c-added)) > 0.03*float64(added) {
			t.Errorf("%s: ApproxCount %d, true %d", name, c, added)
		} else {
			t.Logf("%s: ApproxCount %d, true %d (%+.2f%%)", name, c, added, 100*float64(c-added)/float64(added))
		}
		if over := f.Overfilled(); over != (x >= 1.5) {
			t.Errorf("%s: Overfilled = %v (estimated %.4f, design %.4f)", name, over, f.EstimatedFPR(), f.DesignFPR())
		}
	}
}
