package monkey

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func lsm(t *testing.T) []Level {
	t.Helper()
	ls, err := Leveled(7, 10, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// TestPaperExample checks the worked example of algorithms.md §9:
// T=10, 7 levels, 10 bits/key.
func TestPaperExample(t *testing.T) {
	ls := lsm(t)
	M := 10 * 1e9
	opt, err := Optimize(ls, M, Options{})
	if err != nil {
		t.Fatal(err)
	}
	uni, err := Uniform(ls, M, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(opt.SumFPR, 0.011757, 0.001) {
		t.Errorf("optimal sum of FPRs %.5f%%, want 1.1757%%", 100*opt.SumFPR)
	}
	if !near(uni.SumFPR, 0.05735, 0.001) {
		t.Errorf("uniform sum %.4f%%, want 5.735%%", 100*uni.SumFPR)
	}
	if !near(opt.TotalBits, M, 1e-9) || !near(uni.TotalBits, M, 1e-9) {
		t.Errorf("budget spent %.6g / %.6g, want %.6g", opt.TotalBits, uni.TotalBits, M)
	}
	want := []float64{38.22, 33.43, 28.64, 23.85, 19.05, 14.26, 9.47}
	for i, w := range want {
		if math.Abs(opt.Levels[i].BitsPerKey-w) > 0.006 {
			t.Errorf("level %d: %.3f bits/key, want %.2f", i+1, opt.Levels[i].BitsPerKey, w)
		}
		if i > 0 && !near(opt.Levels[i].FPR/opt.Levels[i-1].FPR, 10, 1e-9) {
			t.Errorf("level %d/%d FPR ratio %.6f, want 10", i+1, i, opt.Levels[i].FPR/opt.Levels[i-1].FPR)
		}
		if d := opt.Levels[i-min(i, 1)].BitsPerKey - opt.Levels[i].BitsPerKey; i > 0 && !near(d, math.Log(10)/C, 1e-9) {
			t.Errorf("level %d gets %.4f more bits than level %d, want ln10/ln²2", i, d, i+1)
		}
	}
	if !near(opt.Levels[6].FPR, 0.01058, 0.001) {
		t.Errorf("largest level FPR %.4f%%, want 1.058%%", 100*opt.Levels[6].FPR)
	}
	// The infinite-level closed form agrees to 4 digits.
	if lim := LeveledLimit(10, 10); !near(lim, opt.SumFPR, 1e-4) || !near(lim, 0.011757, 1e-4) {
		t.Errorf("LeveledLimit = %.6f%%, finite optimum %.6f%%", 100*lim, 100*opt.SumFPR)
	}
	t.Logf("uniform %.3f%%, monkey %.4f%% (%.2fx)", 100*uni.SumFPR, 100*opt.SumFPR, uni.SumFPR/opt.SumFPR)
}

func TestNumericMatchesClosedForm(t *testing.T) {
	ls := lsm(t)
	ls[6].Weight = 0.2 // the largest level's blocks mostly miss... less than others
	ls[0].Weight = 0.01
	for _, bits := range []float64{2, 5, 10, 16} {
		M := bits * 1e9
		cf, err := Optimize(ls, M, Options{})
		if err != nil {
			t.Fatal(err)
		}
		nu, err := Optimize(ls, M, Options{FPR: TextbookFPR, MaxBitsPerKey: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if !near(nu.Cost, cf.Cost, 1e-6) {
			t.Errorf("%v bits/key: numeric cost %.9g, closed form %.9g", bits, nu.Cost, cf.Cost)
		}
		for i := range ls {
			if math.Abs(nu.Levels[i].BitsPerKey-cf.Levels[i].BitsPerKey) > 1e-3 {
				t.Errorf("%v bits/key level %d: numeric %.5f, closed %.5f", bits, i+1, nu.Levels[i].BitsPerKey, cf.Levels[i].BitsPerKey)
			}
		}
		// Weighted optimum: p_i ∝ n_i / w_i among filtered levels.
		for i := 1; i < len(ls); i++ {
			a, b := cf.Levels[i-1], cf.Levels[i]
			if a.FPR < 1 && b.FPR < 1 && !near(b.FPR/a.FPR, (b.Keys/b.Weight)/(a.Keys/a.Weight), 1e-9) {
				t.Errorf("%v bits/key: p%d/p%d = %.6g, want %.6g", bits, i+1, i, b.FPR/a.FPR, (b.Keys/b.Weight)/(a.Keys/a.Weight))
			}
		}
	}
}

// TestOptimality moves bits between every pair of levels and checks that
// the cost never improves: the allocation is a local (hence, by convexity,
// global) optimum.
func TestOptimality(t *testing.T) {
	ls := lsm(t)
	ls[3].Weight = 0.3
	M := 8 * 1e9
	for _, o := range []Options{{}, {MaxBitsPerKey: 20}, {FPR: integerK}} {
		a, err := Optimize(ls, M, o)
		if err != nil {
			t.Fatal(err)
		}
		f := model(o)
		cost := func(bpk []float64) float64 {
			c := 0.0
			for i, l := range ls {
				p := 1.0
				if bpk[i] > 0 {
					p = min(1, f(bpk[i]))
				}
				c += l.weight() * p
			}
			return c
		}
		base := make([]float64, len(ls))
		for i := range ls {
			base[i] = a.Levels[i].BitsPerKey
		}
		c0 := cost(base)
		if !near(c0, a.Cost, 1e-12) {
			t.Fatalf("reported cost %.9g, recomputed %.9g", a.Cost, c0)
		}
		for i := range ls {
			for j := range ls {
				if i == j {
					continue
				}
				const delta = 1e6 // bits moved from level j to level i
				b := append([]float64(nil), base...)
				b[i] += delta / ls[i].Keys
				b[j] -= delta / ls[j].Keys
				if b[j] < 0 || (o.MaxBitsPerKey > 0 && b[i] > o.MaxBitsPerKey) {
					continue
				}
				tol := 1e-9
				if o.FPR != nil {
					tol = 1e-4 // integer k: optimal up to the waves of the curve
				}
				if c := cost(b); c < c0*(1-tol) {
					t.Errorf("%+v: moving bits from level %d to %d lowers cost %.9g -> %.9g", o, j+1, i+1, c0, c)
				}
			}
		}
		uni, _ := Uniform(ls, M, o)
		if a.Cost > uni.Cost {
			t.Errorf("%+v: optimum %.6g worse than uniform %.6g", o, a.Cost, uni.Cost)
		}
	}
}

// integerK is a standard Bloom filter with the probe count rounded to an
// integer: not exactly convex, the case the numeric solver exists for.
func integerK(b float64) float64 {
	if b <= 0 {
		return 1
	}
	return fpmath.StandardFPR(b, 1, fpmath.StandardK(b))
}

func TestCapAndNoFilter(t *testing.T) {
	ls := lsm(t)
	a, err := Optimize(ls, 10*1e9, Options{MaxBitsPerKey: 20})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range a.Levels {
		if l.BitsPerKey > 20+1e-9 {
			t.Errorf("level %d: %.3f bits/key over the cap", i+1, l.BitsPerKey)
		}
	}
	if a.Levels[0].BitsPerKey < 19.99 {
		t.Errorf("smallest level %.3f bits/key, want the cap", a.Levels[0].BitsPerKey)
	}
	if !near(a.TotalBits, 10*1e9, 1e-6) {
		t.Errorf("spent %.6g bits", a.TotalBits)
	}
	// A tiny budget: the largest level's optimum reaches p = 1, so it gets
	// no filter and the others share everything.
	b, err := Optimize(ls, 0.3*1e9, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Levels[6].BitsPerKey != 0 || b.Levels[6].FPR != 1 {
		t.Errorf("largest level at 0.3 bits/key: %.4f bits/key, FPR %.4f; want no filter", b.Levels[6].BitsPerKey, b.Levels[6].FPR)
	}
	if b.Levels[5].BitsPerKey <= 0 || !near(b.TotalBits, 0.3*1e9, 1e-9) {
		t.Errorf("level 6 got %.4f bits/key, total %.6g", b.Levels[5].BitsPerKey, b.TotalBits)
	}
	// NoFilter: Pebble's last level is never consulted by Get.
	ls[6].NoFilter = true
	c, err := Optimize(ls, 1e9, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Levels[6].BitsPerKey != 0 || c.Levels[6].Weight != 0 || !near(c.TotalBits, 1e9, 1e-9) {
		t.Errorf("NoFilter level: %+v, total %.6g", c.Levels[6], c.TotalBits)
	}
	// With 1e9 bits over the 1.1e8 keys of levels 1-6 they all get filters.
	if c.Levels[5].BitsPerKey < 8 {
		t.Errorf("level 6 got %.3f bits/key", c.Levels[5].BitsPerKey)
	}
}

func TestInvalid(t *testing.T) {
	bad := []func() error{
		func() error { _, err := Leveled(0, 10, 100); return err },
		func() error { _, err := Leveled(3, 1, 100); return err },
		func() error { _, err := Optimize(nil, 10, Options{}); return err },
		func() error { _, err := Optimize([]Level{{Keys: -1}}, 10, Options{}); return err },
		func() error { _, err := Optimize([]Level{{Keys: 1}}, math.NaN(), Options{}); return err },
		func() error { _, err := Uniform([]Level{{Keys: 1, Weight: -1}}, 10, Options{}); return err },
	}
	for i, f := range bad {
		if err := f(); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
}
