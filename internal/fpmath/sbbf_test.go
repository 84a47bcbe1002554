package fpmath

import (
	"math"
	"testing"
)

// The Parquet specification's sizing table (bits per key -> FPR).
func TestSBBFFPRSpecTable(t *testing.T) {
	for _, c := range []struct{ bpk, fpr float64 }{
		{6.0, 0.10}, {10.5, 0.01}, {16.9, 0.001}, {26.4, 0.0001}, {41, 0.00001},
	} {
		got := SBBFFPR(256 / c.bpk)
		if math.Abs(got-c.fpr)/c.fpr > 0.02 {
			t.Errorf("%.1f bits/key: %.5g, spec table says %.5g", c.bpk, got, c.fpr)
		}
	}
	if got := SBBFFPR(25.6); math.Abs(got-0.012648) > 0.000005 {
		t.Errorf("10 bits/key: %.6f, want 0.012648", got)
	}
}

func TestSBBFInverses(t *testing.T) {
	for _, p := range []float64{0.1, 0.01, 0.001, 1e-5} {
		l := SBBFLambdaForFPR(p)
		if got := SBBFFPR(l); got > p || got < 0.999*p {
			t.Errorf("fpr %g: lambda %g gives %g", p, l, got)
		}
	}
	for _, l := range []float64{1, 10, 25.6, 100} {
		fill := -math.Expm1(-l / 32)
		if got := SBBFLambdaFromFill(fill); math.Abs(got-l) > 1e-9*l {
			t.Errorf("lambda %g: from fill %g", l, got)
		}
	}
	// Arrow's sizing for 1% gives 9.68 bits/key and really about 1.46%.
	bpk := ArrowSBBFBits(1, 0.01)
	if math.Abs(bpk-9.68) > 0.01 || math.Abs(SBBFFPR(256/bpk)-0.0146) > 0.0002 {
		t.Errorf("arrow sizing: %.3f bits/key, FPR %.4f", bpk, SBBFFPR(256/bpk))
	}
}
