package fpmath

import (
	"math"
	"testing"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// Figures from the literature (algorithms.md §1): standard Bloom at 10
// bits/key, k=7: 0.819%; ideal 512-bit blocked, k=6: 0.9576%; Parquet's
// 256-bit SBBF is a different model and is checked in its package.
func TestKnownFigures(t *testing.T) {
	if got := StandardFPR(10, 1, 7); !near(got, 0.00819, 0.01) {
		t.Errorf("standard 10/7 = %v", got)
	}
	if got := BlockedFPR(10e6, 1e6, 6, 512); !near(got, 0.009576, 0.01) {
		t.Errorf("blocked 10/6 = %v", got)
	}
	if got := StandardK(10); got != 7 {
		t.Errorf("k(10) = %d", got)
	}
	if got := BitsPerKeyForFPR(0.01); !near(got, 9.585, 0.001) {
		t.Errorf("bits(1%%) = %v", got)
	}
	if got := FingerprintFPR(12, 8); !near(got, 0.00195, 0.01) {
		t.Errorf("fp(12,8) = %v", got)
	}
	// CountFromFill inverts the expected fill.
	m, n, k := 1e6, 1e5, 7.0
	x := m * -math.Expm1(-k*n/m)
	if got := CountFromFill(m, x, 7); !near(got, n, 1e-9) {
		t.Errorf("count = %v", got)
	}
}
