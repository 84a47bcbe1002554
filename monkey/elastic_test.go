package monkey

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
)

// TestElasticTwoLevelsClosedForm checks the elastic optimum against a
// solution derived by hand. Two levels of one key each, textbook model,
// costs p₁ and p₂^(1/2) (Weight 1 at RefFPR 1, α = 1 and 1/2). With
// x = C·b₁, y = C·b₂ the Lagrange conditions C·e^(−x) = λ and
// (C/2)·e^(−y/2) = λ give x = y/2 + ln 2, and x + y = C·M gives
// y = (2/3)(C·M − ln 2). At M = 20 bits: b₁ ≈ 7.628, b₂ ≈ 12.372: the
// level whose cost falls more slowly gets more bits here, because at an
// equal FPR its cost p^(1/2) is far higher.
func TestElasticTwoLevelsClosedForm(t *testing.T) {
	const M = 20.0
	y := 2 * (C*M - math.Ln2) / 3
	want := []float64{(C*M - y) / C, y / C}
	ls := []Level{{Keys: 1, Weight: 1}, {Keys: 1, Weight: 1, Elasticity: 0.5, RefFPR: 1}}
	for _, o := range []Options{{}, {FPR: TextbookFPR, MaxBitsPerKey: 1000}} {
		a, err := Optimize(ls, M, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if math.Abs(a.Levels[i].BitsPerKey-w) > 1e-3 {
				t.Errorf("%+v: level %d %.5f bits/key, want %.5f", o.MaxBitsPerKey, i+1, a.Levels[i].BitsPerKey, w)
			}
		}
		c := TextbookFPR(want[0]) + math.Sqrt(TextbookFPR(want[1]))
		if !near(a.Cost, c, 1e-6) {
			t.Errorf("cost %.9g, want %.9g", a.Cost, c)
		}
	}
	if math.Abs(want[0]-7.628) > 0.001 || math.Abs(want[1]-12.372) > 0.001 {
		t.Fatalf("hand-derived optimum %v", want)
	}
}

// trueCost is a synthetic level whose wasted reads are r(p) = A·p^α: its
// weight (reads per false positive) w(p) = A·p^(α−1) rises as p falls
// when α < 1, as with a block cache (it is not capped at 1 here, so that
// the power law holds exactly and the optimum is known).
type trueCost struct{ keys, A, alpha float64 }

func (c trueCost) reads(p float64) float64 { return c.A * math.Pow(p, c.alpha) }

// TestElasticBeatsMeasuredFixedPoint: re-allocating with weights measured
// at the current allocation (each w_i = r_i(p_i)/p_i, α assumed 1) until
// nothing moves converges to a plan with w_i·p_i ∝ n_i, which is not the
// optimum of Σ r_i(p_i) when the α_i differ. Allocating once with the
// elasticities and the weights measured at any point finds the true
// optimum (α_i·w_i·p_i ∝ n_i, checked), whose true cost is lower, and
// which a second elastic round leaves where it is.
func TestElasticBeatsMeasuredFixedPoint(t *testing.T) {
	levels := []trueCost{
		{keys: 1e4, A: 0.5, alpha: 1},   // small, constant weight
		{keys: 1e5, A: 0.9, alpha: 1},   // constant weight
		{keys: 1e6, A: 0.3, alpha: 0.3}, // large, reads fall slowly
	}
	var keys float64
	for _, l := range levels {
		keys += l.keys
	}
	M := 10 * keys
	total := func(a Allocation) (r float64) {
		for i, l := range levels {
			r += l.reads(a.Levels[i].FPR)
		}
		return r
	}
	measured := func(bpk []float64, elastic bool) []Level {
		ls := make([]Level, len(levels))
		for i, l := range levels {
			p := TextbookFPR(bpk[i])
			ls[i] = Level{Keys: l.keys, Weight: l.reads(p) / p}
			if elastic {
				ls[i].Elasticity, ls[i].RefFPR = l.alpha, p
			}
		}
		return ls
	}
	uni := []float64{10, 10, 10}
	for _, o := range []Options{{}, {FPR: TextbookFPR, MaxBitsPerKey: 60}} {
		// Measured-weight iteration to its fixed point.
		bpk := uni
		var fix Allocation
		for range 100 {
			a, err := Optimize(measured(bpk, false), M, o)
			if err != nil {
				t.Fatal(err)
			}
			next := []float64{a.Levels[0].BitsPerKey, a.Levels[1].BitsPerKey, a.Levels[2].BitsPerKey}
			moved := 0.0
			for i := range next {
				moved = max(moved, math.Abs(next[i]-bpk[i]))
			}
			bpk, fix = next, a
			if moved < 1e-9 {
				break
			}
		}
		for i := 1; i < len(levels); i++ { // fixed point: w·p ∝ n
			ri, r0 := levels[i].reads(fix.Levels[i].FPR)/levels[i].keys, levels[0].reads(fix.Levels[0].FPR)/levels[0].keys
			if !near(ri, r0, 1e-4) {
				t.Errorf("fixed point: r/n of level %d %.6g vs level 1 %.6g", i+1, ri, r0)
			}
		}
		// One elastic allocation from the uniform point.
		el, err := Optimize(measured(uni, true), M, o)
		if err != nil {
			t.Fatal(err)
		}
		if !near(el.TotalBits, M, 1e-6) || !near(fix.TotalBits, M, 1e-6) {
			t.Fatalf("budget: elastic %v, fixed point %v, want %v", el.TotalBits, fix.TotalBits, M)
		}
		if !near(el.Cost, total(el), 1e-9) {
			t.Errorf("elastic model cost %.9g, true cost %.9g (the model is exact here)", el.Cost, total(el))
		}
		// Optimum: α·r/n equal across levels.
		for i := 1; i < len(levels); i++ {
			gi := levels[i].alpha * levels[i].reads(el.Levels[i].FPR) / levels[i].keys
			g0 := levels[0].alpha * levels[0].reads(el.Levels[0].FPR) / levels[0].keys
			if !near(gi, g0, 1e-4) {
				t.Errorf("elastic: α·r/n of level %d %.6g vs level 1 %.6g", i+1, gi, g0)
			}
		}
		gain := 1 - total(el)/total(fix)
		if gain < 0.01 {
			t.Errorf("elastic optimum %.6g not clearly below the fixed point %.6g", total(el), total(fix))
		}
		// A second elastic round, measured at the elastic plan, stays.
		var b2 []float64
		for _, l := range el.Levels {
			b2 = append(b2, l.BitsPerKey)
		}
		el2, err := Optimize(measured(b2, true), M, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range levels {
			if math.Abs(el2.Levels[i].BitsPerKey-b2[i]) > 1e-3 {
				t.Errorf("second elastic round moved level %d: %.5f -> %.5f", i+1, b2[i], el2.Levels[i].BitsPerKey)
			}
		}
		t.Logf("cap %v: fixed point %.4f/%.4f/%.4f bits, true reads %.6g; elastic %.4f/%.4f/%.4f, %.6g (%.2f%% fewer)",
			o.MaxBitsPerKey, fix.Levels[0].BitsPerKey, fix.Levels[1].BitsPerKey, fix.Levels[2].BitsPerKey, total(fix),
			el.Levels[0].BitsPerKey, el.Levels[1].BitsPerKey, el.Levels[2].BitsPerKey, total(el), 100*gain)
	}
}

// TestElasticOne: elasticity 1 (or 0) gives exactly the classic allocation
// whatever RefFPR says.
func TestElasticOne(t *testing.T) {
	ls := lsm(t)
	ls[2].Weight = 0.3
	a, err := Optimize(ls, 8e9, Options{MaxBitsPerKey: 30})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls {
		ls[i].Elasticity, ls[i].RefFPR = 1, 0.5
	}
	b, err := Optimize(ls, 8e9, Options{MaxBitsPerKey: 30})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls {
		if a.Levels[i] != b.Levels[i] {
			t.Errorf("level %d: %+v vs %+v", i+1, a.Levels[i], b.Levels[i])
		}
	}
}

func TestElasticInvalid(t *testing.T) {
	for _, l := range []Level{
		{Keys: 1, Elasticity: -1, RefFPR: 0.1},
		{Keys: 1, Elasticity: 5, RefFPR: 0.1},
		{Keys: 1, Elasticity: 0.5},
		{Keys: 1, Elasticity: 0.5, RefFPR: 2},
		{Keys: 1, Elasticity: math.NaN(), RefFPR: 0.1},
	} {
		if _, err := Optimize([]Level{l}, 10, Options{}); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: err = %v", l, err)
		}
	}
}

// TestElasticNumericMatchesClosedForm: on the textbook model the numeric
// solver and the generalised closed form agree with elasticities, down to
// budgets so small that levels are dropped (b = 0).
func TestElasticNumericMatchesClosedForm(t *testing.T) {
	ls := lsm(t)
	alphas := []float64{0.4, 1, 0.7, 1.3, 0.9, 0.8, 0.6}
	for i := range ls {
		ls[i].Weight = 0.2 + 0.1*float64(i)
		if alphas[i] != 1 {
			ls[i].Elasticity, ls[i].RefFPR = alphas[i], 0.01
		}
	}
	for _, bits := range []float64{0.05, 0.3, 2, 10} {
		M := bits * 1e9
		cf, err := Optimize(ls, M, Options{})
		if err != nil {
			t.Fatal(err)
		}
		nu, err := Optimize(ls, M, Options{FPR: TextbookFPR, MaxBitsPerKey: 1000})
		if err != nil {
			t.Fatal(err)
		}
		dropped := 0
		for i := range ls {
			if cf.Levels[i].BitsPerKey == 0 {
				dropped++
			}
			if math.Abs(nu.Levels[i].BitsPerKey-cf.Levels[i].BitsPerKey) > 2e-3 {
				t.Errorf("%v bits/key level %d: numeric %.5f, closed %.5f", bits, i+1, nu.Levels[i].BitsPerKey, cf.Levels[i].BitsPerKey)
			}
		}
		if !near(nu.Cost, cf.Cost, 1e-6) || !near(cf.TotalBits, M, 1e-9) {
			t.Errorf("%v bits/key: numeric cost %.9g, closed %.9g, spent %.6g", bits, nu.Cost, cf.Cost, cf.TotalBits)
		}
		if bits == 0.05 && dropped == 0 {
			t.Errorf("0.05 bits/key: no level dropped (%+v)", cf.Levels)
		}
	}
}
