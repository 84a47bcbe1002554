// Package monkey spreads a memory budget for filters across the levels of
// an LSM-tree so that a lookup for an absent key wastes as few reads as
// possible (Dayan, Athanassoulis and Idreos, "Monkey", SIGMOD 2017).
//
// # The problem
//
// A point lookup for a key that is not in the tree probes one filter per run
// and reads a run whenever its filter gives a false positive, so the
// expected number of wasted reads is Σ w_i·p_i, where p_i is level i's FPR
// and w_i the cost of one false positive there (1 if every wasted read goes
// to disk; the probability that the wasted block read misses the block
// cache on an engine that has one). The filters of level i hold n_i keys at
// b_i bits per key; the budget is Σ n_i·b_i = M bits.
//
// # Closed form (the textbook Bloom model)
//
// With p(b) = e^(−c·b), c = (ln 2)² (a standard Bloom filter with the optimal
// real-valued probe count), the Lagrange condition w_i·c·p_i = λ·n_i gives
//
//	p_i = θ · n_i / w_i
//
// for a common θ: every level's FPR is proportional to its size over its
// weight. Unweighted leveling with size ratio T then gives each level a T
// times lower FPR than the next larger one, i.e. ln T / (ln 2)² ≈ 4.79 more
// bits per key for T = 10. θ follows from the budget:
//
//	ln θ = −(c·M + Σ n_i·ln(n_i/w_i)) / Σ n_i
//
// summed over the levels that get a filter. A level whose p_i would reach 1
// gets no filter (b_i = 0, p_i = 1), which takes its negative "bits" away
// from the others, so θ is recomputed without it until no level is dropped
// (at most one pass per level). [Optimize] uses this whenever the model is
// the textbook one and no per-level cap is set.
//
// # Numeric solver
//
// For any other decreasing FPR model (a blocked Bloom filter's real FPR, an
// integer probe count, a fingerprint filter) or with a per-level
// bits-per-key cap, [Optimize] solves the same Lagrange conditions
// numerically: for a multiplier λ each level's best b_i minimises
// w_i·p(b) + λ·n_i·b over [0, cap] (a grid scan, then a golden-section
// search), and λ is bisected until the levels spend the budget. Both
// solvers agree to 10⁻⁶ on the textbook model (tested). For a convex model
// the result is the optimum; for a model that is not convex everywhere
// (integer probe counts make the curve slightly wavy) it is an optimum up
// to those waves, and the budget may be underspent by the jump of one
// level between two local optima.
//
// # Elasticity: weights that depend on the FPR
//
// On an engine with a block cache the cost of a false positive is not a
// constant: frequent false positives on a level keep its blocks cached,
// rare ones find them evicted. Measuring w_i at the current allocation
// and re-allocating until nothing moves finds a fixed point of
// "w_i·p_i ∝ n_i", which is not the optimum of the true cost when the
// reads r_i(p_i) = t_i·w_i(p_i)·p_i are not proportional to p_i. With the
// local model r_i(p) = r_i(q_i)·(p/q_i)^α_i around the measured point q_i
// (α_i = d ln r_i / d ln p_i, 1 for a constant weight) the marginal cost
// is dr_i/db_i = α_i·(r_i/p_i)·dp_i/db_i, so the condition becomes
//
//	α_i · w_i · p_i · |d ln p/d b| = λ · n_i
//
// (textbook model: p_i ∝ n_i/(α_i·w_i)): a level whose reads fall more
// slowly than its FPR (α_i < 1) deserves fewer bits than its weight alone
// says. [Level.Elasticity] and [Level.RefFPR] give each level this cost;
// both solvers minimise it (the cost stays convex in b for α_i > 0).
//
// # The figures to expect
//
// T = 10, 7 levels, 10 bits per key overall: uniform allocation gives every
// level 0.819 %, a sum of 5.73 %; the optimum gives 1.058 % to the largest
// level and a sum of 1.176 %, 4.9 times fewer wasted reads
// (`bloomery plan lsm --levels 7 --fanout 10 --bits 10`).
package monkey

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
)

// C is the textbook Bloom constant: p(b) = e^(−C·b) with C = (ln 2)².
const C = math.Ln2 * math.Ln2

// TextbookFPR is the FPR of a standard Bloom filter at b bits per key with
// the optimal real-valued probe count: e^(−b·(ln 2)²).
func TextbookFPR(b float64) float64 { return math.Exp(-C * b) }

// Level is one level (or run) of the tree.
type Level struct {
	// Keys is the number of entries whose filters this level holds.
	Keys float64
	// Weight is the cost of one false positive at this level: the
	// probability that the wasted read misses the cache. Zero means 1.
	Weight float64
	// NoFilter marks a level whose filters are never consulted (Pebble's
	// Get skips the last level's): it gets no bits.
	NoFilter bool
	// Elasticity α is how fast the level's wasted reads fall with its FPR
	// when the cost of a false positive itself depends on the FPR: reads
	// r(p) = Weight·RefFPR·(p/RefFPR)^α, so Weight is the cost of a false
	// positive at the FPR RefFPR and w(p) = Weight·(p/RefFPR)^(α−1)
	// elsewhere. Zero means 1 (a constant weight: the classic model, in
	// which RefFPR plays no part). α < 1 describes a level whose false
	// positives get more expensive as they get rarer (with a block cache:
	// the blocks frequent false positives kept warm are evicted once they
	// are rare). It must be in (0, 4].
	Elasticity float64
	// RefFPR is the FPR at which Weight holds, in (0, 1]; required when
	// Elasticity is neither 0 nor 1.
	RefFPR float64
}

func (l Level) weight() float64 {
	if l.Weight == 0 {
		return 1
	}
	return l.Weight
}

func (l Level) elasticity() float64 {
	if l.Elasticity == 0 {
		return 1
	}
	return l.Elasticity
}

// Cost is the level's modelled wasted reads per lookup at FPR p:
// Weight·p (Weight 0 counting as 1), or Weight·RefFPR·(p/RefFPR)^α with
// an elasticity α ≠ 1.
func (l Level) Cost(p float64) float64 {
	a := l.elasticity()
	if a == 1 {
		return l.weight() * p
	}
	return l.weight() * l.RefFPR * math.Pow(p/l.RefFPR, a)
}

// Leveled returns the levels of a leveled tree with the given number of
// levels and size ratio (fanout) holding totalKeys entries: level i
// (smallest first, i = 1..levels) holds a share proportional to
// fanout^(i−1). Every weight is 1.
func Leveled(levels int, fanout, totalKeys float64) ([]Level, error) {
	if levels < 1 || levels > 64 || !(fanout > 1) || !(totalKeys > 0) || math.IsInf(fanout, 0) || math.IsInf(totalKeys, 0) {
		return nil, fmt.Errorf("monkey: levels %d, fanout %v, keys %v: %w", levels, fanout, totalKeys, bloomery.ErrInvalidParams)
	}
	sum := 0.0
	for i := range levels {
		sum += math.Pow(fanout, float64(i))
	}
	out := make([]Level, levels)
	for i := range out {
		out[i] = Level{Keys: totalKeys * math.Pow(fanout, float64(i)) / sum, Weight: 1}
	}
	return out, nil
}

// LevelAllocation is the plan for one level.
type LevelAllocation struct {
	Keys, Weight float64
	// BitsPerKey and the resulting FPR (1 for a level with no filter).
	BitsPerKey, FPR float64
	// Bits is Keys * BitsPerKey.
	Bits float64
}

// Allocation is a plan for all levels, in the order given.
type Allocation struct {
	Levels []LevelAllocation
	// TotalBits is the budget spent (equal to the budget, up to rounding).
	TotalBits float64
	// SumFPR is Σ p_i: wasted reads per zero-result lookup when every
	// false positive costs a read.
	SumFPR float64
	// Cost is Σ w_i·p_i: the expected wasted reads with the weights (with
	// elasticities: Σ Level.Cost(p_i)).
	Cost float64
}

// Options selects the FPR model.
type Options struct {
	// FPR maps bits per key to the false-positive rate of the filter the
	// engine uses. It must be decreasing and convex on [0, MaxBitsPerKey]
	// with FPR(0) = 1 or less. Nil means TextbookFPR, solved in closed
	// form when MaxBitsPerKey is also zero.
	FPR func(bitsPerKey float64) float64
	// MaxBitsPerKey caps every level (0: no cap). Real blocked Bloom
	// filters stop improving around 20-24 bits per key.
	MaxBitsPerKey float64
}

func validate(levels []Level, totalBits float64, o Options) error {
	if len(levels) == 0 {
		return fmt.Errorf("monkey: no levels: %w", bloomery.ErrInvalidParams)
	}
	if !(totalBits >= 0) || math.IsInf(totalBits, 0) {
		return fmt.Errorf("monkey: budget %v bits: %w", totalBits, bloomery.ErrInvalidParams)
	}
	if !(o.MaxBitsPerKey >= 0) {
		return fmt.Errorf("monkey: MaxBitsPerKey %v: %w", o.MaxBitsPerKey, bloomery.ErrInvalidParams)
	}
	for i, l := range levels {
		if !(l.Keys >= 0) || math.IsInf(l.Keys, 0) || !(l.Weight >= 0) || math.IsInf(l.Weight, 0) {
			return fmt.Errorf("monkey: level %d: keys %v weight %v: %w", i+1, l.Keys, l.Weight, bloomery.ErrInvalidParams)
		}
		if !(l.Elasticity >= 0 && l.Elasticity <= 4) || l.elasticity() != 1 && !(l.RefFPR > 0 && l.RefFPR <= 1) {
			return fmt.Errorf("monkey: level %d: elasticity %v at reference FPR %v: %w", i+1, l.Elasticity, l.RefFPR, bloomery.ErrInvalidParams)
		}
	}
	return nil
}

func finish(levels []Level, bpk []float64, fpr func(float64) float64) Allocation {
	a := Allocation{Levels: make([]LevelAllocation, len(levels))}
	for i, l := range levels {
		p := 1.0
		if bpk[i] > 0 {
			p = min(1, fpr(bpk[i]))
		}
		la := LevelAllocation{Keys: l.Keys, Weight: l.weight(), BitsPerKey: bpk[i], FPR: p, Bits: l.Keys * bpk[i]}
		if l.NoFilter {
			la.Weight = 0
		}
		a.Levels[i] = la
		a.TotalBits += la.Bits
		if l.Keys > 0 {
			a.SumFPR += p
			if !l.NoFilter {
				a.Cost += l.Cost(p)
			}
		}
	}
	return a
}

// Uniform gives every filtered level the same bits per key, spending
// totalBits; it is the baseline Monkey improves on. The FPR model is
// o.FPR (textbook if nil); MaxBitsPerKey is ignored.
func Uniform(levels []Level, totalBits float64, o Options) (Allocation, error) {
	if err := validate(levels, totalBits, o); err != nil {
		return Allocation{}, err
	}
	keys := 0.0
	for _, l := range levels {
		if !l.NoFilter {
			keys += l.Keys
		}
	}
	bpk := make([]float64, len(levels))
	for i, l := range levels {
		if !l.NoFilter && keys > 0 {
			bpk[i] = totalBits / keys
		}
	}
	return finish(levels, bpk, model(o)), nil
}

func model(o Options) func(float64) float64 {
	if o.FPR == nil {
		return TextbookFPR
	}
	return o.FPR
}

// Optimize returns the bits per key per level that minimise the expected
// wasted reads Σ w_i·p_i (with elasticities: Σ Level.Cost(p_i)) for a
// budget of totalBits. Levels with no keys,
// levels marked NoFilter, and levels whose optimum FPR would be 1 get no
// filter. See the
// package doc for the two solvers; the cost is O(levels²) for the closed
// form and about levels · 100 · 380 model evaluations for the numeric one,
// so the model should be cheap (a closed formula, not a simulation).
func Optimize(levels []Level, totalBits float64, o Options) (Allocation, error) {
	if err := validate(levels, totalBits, o); err != nil {
		return Allocation{}, err
	}
	if o.FPR == nil && o.MaxBitsPerKey == 0 {
		return finish(levels, closedForm(levels, totalBits), TextbookFPR), nil
	}
	return finish(levels, numeric(levels, totalBits, model(o), o.MaxBitsPerKey), model(o)), nil
}

// closedForm is the water-filling solution of the textbook model
// p = e^(−C·b). Level i costs A_i·e^(−α_i·C·b_i) with A_i = w_i·q_i^(1−α_i)
// (q_i its RefFPR; A_i = w_i when α_i = 1), so the Lagrange condition
// α_i·C·A_i·e^(−α_i·C·b_i) = λ·n_i gives
//
//	b_i = (ln(α_i·C·A_i/n_i) − ln λ) / (α_i·C)
//
// and the budget Σ n_i·b_i = M gives
//
//	ln λ = (Σ (n_i/(α_i·C))·ln(α_i·C·A_i/n_i) − M) / Σ n_i/(α_i·C)
//
// over the active levels. With every α_i = 1 this is p_i = θ·n_i/w_i with
// θ = λ/C (the package doc). A level whose b_i would be ≤ 0 is dropped
// and λ recomputed.
func closedForm(levels []Level, M float64) []float64 {
	bpk := make([]float64, len(levels))
	active := make([]bool, len(levels))
	for i, l := range levels {
		active[i] = l.Keys > 0 && !l.NoFilter
	}
	// g_i = ln(α_i·C·A_i/n_i), the level's log marginal value at b = 0.
	g := make([]float64, len(levels))
	for i, l := range levels {
		if active[i] {
			a := l.elasticity()
			lnA := math.Log(l.weight())
			if a != 1 {
				lnA += (1 - a) * math.Log(l.RefFPR)
			}
			g[i] = math.Log(a*C) + lnA - math.Log(l.Keys)
		}
	}
	for {
		S, A := 0.0, 0.0
		for i, l := range levels {
			if active[i] {
				s := l.Keys / (l.elasticity() * C)
				S += s
				A += s * g[i]
			}
		}
		if S == 0 {
			return bpk
		}
		lnLambda := (A - M) / S
		dropped := false
		for i := range levels {
			if active[i] && g[i]-lnLambda <= 0 {
				active[i] = false
				dropped = true
			}
		}
		if dropped {
			continue
		}
		for i, l := range levels {
			bpk[i] = 0
			if active[i] {
				bpk[i] = (g[i] - lnLambda) / (l.elasticity() * C)
			}
		}
		return bpk
	}
}

// numeric solves the Lagrange conditions for a general convex model by
// nested bisection.
func numeric(levels []Level, M float64, fpr func(float64) float64, maxBPK float64) []float64 {
	hi := maxBPK
	if hi == 0 {
		hi = 128 // a filter beyond 128 bits per key has an FPR below 1e-26
	}
	bpk := make([]float64, len(levels))
	// best b for level l at multiplier lam minimises cost(p(b)) + lam·n·b over
	// [0, hi]: a scan of a 256-step grid finds the best cell (which also
	// copes with models that are flat near b = 0, where a Bloom filter
	// with one probe is concave), then a golden-section search refines it.
	const steps = 256
	best := func(l Level, lam float64) float64 {
		w, g := l.Cost(1), lam*l.Keys // w: the cost with no filter, p(0) = 1
		phi := func(b float64) float64 { return l.Cost(min(1, fpr(b))) + g*b }
		bi, bv := 0, w
		for i := 1; i <= steps; i++ {
			if v := phi(hi * float64(i) / steps); v < bv {
				bi, bv = i, v
			}
		}
		lo, up := hi*float64(max(0, bi-1))/steps, hi*float64(min(steps, bi+1))/steps
		const gr = 0.6180339887498949
		x1, x2 := up-gr*(up-lo), lo+gr*(up-lo)
		f1, f2 := phi(x1), phi(x2)
		for range 60 {
			if f1 < f2 {
				up, x2, f2 = x2, x1, f1
				x1 = up - gr*(up-lo)
				f1 = phi(x1)
			} else {
				lo, x1, f1 = x1, x2, f2
				x2 = lo + gr*(up-lo)
				f2 = phi(x2)
			}
		}
		b := (lo + up) / 2
		if bi == 0 && phi(b) >= w {
			return 0
		}
		return b
	}
	spend := func(lam float64) float64 {
		s := 0.0
		for i, l := range levels {
			bpk[i] = 0
			if l.Keys > 0 && !l.NoFilter {
				bpk[i] = best(l, lam)
				s += l.Keys * bpk[i]
			}
		}
		return s
	}
	// spend is decreasing in lam; bisect log(lam).
	lo, up := -200.0, 50.0
	if spend(math.Exp(lo)) <= M {
		return bpk // even a nearly free budget buys the cap everywhere
	}
	for range 100 {
		mid := (lo + up) / 2
		if spend(math.Exp(mid)) > M {
			lo = mid
		} else {
			up = mid
		}
	}
	spend(math.Exp(up))
	return bpk
}

// LeveledLimit is the closed-form sum of FPRs of an unweighted leveled tree
// with size ratio T and an unlimited number of levels at an overall
// bitsPerKey, under the textbook model:
//
//	R = e^(−b·(ln 2)²) · T^(T/(T−1)) / (T − 1)
//
// (valid while the largest level's FPR, R·(T−1)/T, stays below 1).
func LeveledLimit(T, bitsPerKey float64) float64 {
	return math.Exp(-bitsPerKey*C) * math.Pow(T, T/(T-1)) / (T - 1)
}
