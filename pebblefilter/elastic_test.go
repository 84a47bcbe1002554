package pebblefilter

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
)

// synthetic is a database whose levels' data-block reads per lookup follow
// r_i(p) = A_i·p^α_i exactly (a cached level's weight r/p rises as p
// falls when α_i < 1).
type synthetic struct {
	A, alpha [NumLevels]float64
}

// pilot returns the counts a pilot of n lookups would give with the
// filters bpk (one check per level per lookup, FPR from the model).
func (s synthetic) pilot(bpk [NumLevels]float64, n int64) PilotCounts {
	c := PilotCounts{Lookups: n}
	for l := range bpk {
		if shape[l].Keys == 0 {
			continue
		}
		p := BloomModelFPR(bpk[l])
		c.Checks[l] = n
		c.FalsePositives[l] = int64(math.Round(p * float64(n)))
		c.DataReads[l] = int64(math.Round(s.A[l] * math.Pow(p, s.alpha[l]) * float64(n)))
	}
	return c
}

func (s synthetic) reads(bpk [NumLevels]float64) (r float64) {
	for l := range bpk {
		if shape[l].Keys > 0 {
			r += s.A[l] * math.Pow(BloomModelFPR(bpk[l]), s.alpha[l])
		}
	}
	return r
}

func uniformBits(b float64) (u [NumLevels]float64) {
	for i := range u {
		u[i] = b
	}
	return u
}

func bitsOf(p Plan) (b [NumLevels]float64) {
	for i, s := range p.Specs {
		b[i] = s.BitsPerKey
	}
	return b
}

// syn's weights r/p stay below 1 between 9 and 24 bits per key (as a
// measured weight must: PilotCounts.Weights clamps to 1), e.g. L6 0.66 at
// 10 bits and 0.70 at 9.3.
var syn = synthetic{
	A:     [NumLevels]float64{0.1, 0, 0, 0.1, 0.1, 0.3, 0.12},
	alpha: [NumLevels]float64{0.8, 1, 1, 0.8, 0.8, 0.85, 0.6},
}

// TestElasticities: the secant through exact power-law counts recovers α
// on every level; a level with too few counts, or rounds whose FPRs are
// too close, gets 1; estimates are clamped; the nearest round far enough
// away is the one used.
func TestElasticities(t *testing.T) {
	const n = 1_000_000_000
	r1 := syn.pilot([NumLevels]float64{10, 10, 10, 10, 10, 10, 10}, n)
	r2 := syn.pilot([NumLevels]float64{16, 16, 16, 16, 15, 13, 9}, n)
	a, err := Elasticities([]PilotCounts{r1, r2}, 0.1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []int{0, 3, 4, 5, 6} {
		if math.Abs(a[l]-syn.alpha[l]) > 0.005 {
			t.Errorf("L%d: α %.4f, want %.2f", l, a[l], syn.alpha[l])
		}
	}
	if a[1] != 1 || a[2] != 1 {
		t.Errorf("empty levels: %v", a)
	}
	// One round, or the last round unusable: no evidence.
	if a, _ := Elasticities([]PilotCounts{r1}, 0.1, 2); a != ([NumLevels]float64{1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("one round: %v", a)
	}
	few := r2
	few.FalsePositives[5], few.DataReads[6] = 19, 19
	if a, _ := Elasticities([]PilotCounts{r1, few}, 0.1, 2); a[5] != 1 || a[6] != 1 || a[4] == 1 {
		t.Errorf("fewer than 20 counts: %v", a)
	}
	// Too imprecise: 10^5 lookups give L6 about 1,000 reads per round,
	// so FPRs 5 % apart (10 vs 10.1 bits/key) leave a standard error of
	// about 1 on the secant: no estimate; 10 vs 8 bits (a factor 2.5) is
	// enough. A real pilot's counts carry Poisson noise; these are exact,
	// which the rule cannot know.
	if a, _ := Elasticities([]PilotCounts{syn.pilot(uniformBits(10), 1e5), syn.pilot(uniformBits(10.1), 1e5)}, 0.1, 2); a[6] != 1 {
		t.Errorf("close FPRs: %v", a)
	}
	if a, _ := Elasticities([]PilotCounts{syn.pilot(uniformBits(10), 1e5), syn.pilot(uniformBits(8), 1e5)}, 0.1, 2); math.Abs(a[6]-0.6) > 0.01 {
		t.Errorf("FPRs a factor 2.5 apart: %v", a)
	}
	// Clamping.
	steep := syn
	steep.alpha[4] = 1.4
	s1, s2 := steep.pilot([NumLevels]float64{10, 10, 10, 10, 10, 10, 10}, n), steep.pilot([NumLevels]float64{16, 16, 16, 16, 15, 13, 9}, n)
	if a, _ := Elasticities([]PilotCounts{s1, s2}, 0.82, 1.2); a[0] != 0.82 || a[6] != 0.82 || a[4] != 1.2 || math.Abs(a[5]-0.85) > 0.005 {
		t.Errorf("clamped to [0.82, 1.2]: %v", a)
	}
	// The nearest eligible round is used: a round whose L6 follows another
	// law (α 0.2) nearer to the last one in ln FPR wins over a farther one.
	other := syn
	other.alpha[6] = 0.2
	far := syn.pilot([NumLevels]float64{10, 10, 10, 10, 10, 10, 4}, n)
	near := other.pilot([NumLevels]float64{10, 10, 10, 10, 10, 10, 7}, n)
	last := other.pilot([NumLevels]float64{10, 10, 10, 10, 10, 10, 10}, n)
	if a, _ := Elasticities([]PilotCounts{near, far, last}, 0.1, 2); math.Abs(a[6]-0.2) > 0.005 {
		t.Errorf("nearest round: L6 α %.4f, want 0.2", a[6])
	}
	for _, b := range [][2]float64{{0, 1}, {0.5, 0.9}, {1.1, 2}, {0.5, 5}, {math.NaN(), 1}} {
		if _, err := Elasticities([]PilotCounts{r1, r2}, b[0], b[1]); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("bounds %v: err = %v", b, err)
		}
	}
}

// TestAllocateElasticity: at the point where its weight was measured, a
// level whose reads fall more slowly than its FPR (α < 1) gets fewer bits
// than with a constant weight, at the same budget; the options are
// validated.
func TestAllocateElasticity(t *testing.T) {
	w := [NumLevels]float64{0.5, 0, 0, 0.5, 0.6, 0.95, 0.6}
	base := AllocOptions{BitsPerKey: 10, Weights: w}
	p1, err := Allocate(shape, base)
	if err != nil {
		t.Fatal(err)
	}
	o := base
	o.Elasticity[5] = 0.5
	o.WeightFPR[5] = BloomModelFPR(p1.Specs[5].BitsPerKey)
	p2, err := Allocate(shape, o)
	if err != nil {
		t.Fatal(err)
	}
	if d := p1.Specs[5].BitsPerKey - p2.Specs[5].BitsPerKey; d < 0.5 {
		t.Errorf("L5 at α 0.5: %v, at α 1: %v", p2.Specs[5], p1.Specs[5])
	}
	if math.Abs(spent(t, p2)-spent(t, p1)) > 0.001*spent(t, p1) {
		t.Errorf("budgets differ: %v vs %v", spent(t, p2), spent(t, p1))
	}
	// Elasticity 1 everywhere changes nothing.
	o = base
	for i := range o.Elasticity {
		o.Elasticity[i] = 1
	}
	if p3, err := Allocate(shape, o); err != nil || p3.Specs != p1.Specs {
		t.Errorf("α = 1: %v (%v), want %v", p3.Specs, err, p1.Specs)
	}
	for _, bad := range []AllocOptions{
		{BitsPerKey: 10, Elasticity: [NumLevels]float64{0.5}, WeightFPR: [NumLevels]float64{0.01}}, // no weights
		{BitsPerKey: 10, Weights: w, Elasticity: [NumLevels]float64{0.5}},                          // no WeightFPR
		{BitsPerKey: 10, Weights: w, Elasticity: [NumLevels]float64{5}, WeightFPR: [NumLevels]float64{0.01}},
		{BitsPerKey: 10, Weights: w, Elasticity: [NumLevels]float64{-0.5}, WeightFPR: [NumLevels]float64{0.01}},
		{BitsPerKey: 10, Weights: w, Elasticity: [NumLevels]float64{0.5}, WeightFPR: [NumLevels]float64{1.5}},
	} {
		if _, err := Allocate(shape, bad); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}

// TestPilotIterationElastic runs the pilot procedure on the synthetic
// database: rounds of "measure at the current filters, allocate" from
// uniform 10 bits/key. With weights alone the rounds converge to a plan
// where t·w·p·|d ln p/d b| ∝ n with w measured there, whose true reads are
// not minimal; with the elasticities estimated from the rounds they reach
// lower true reads at the same budget.
func TestPilotIterationElastic(t *testing.T) {
	const n = 1_000_000_000
	run := func(elastic bool) ([NumLevels]float64, Plan) {
		bpk := [NumLevels]float64{10, 10, 10, 10, 10, 10, 10}
		var rounds []PilotCounts
		var plan Plan
		for range 12 {
			c := syn.pilot(bpk, n)
			rounds = append(rounds, c)
			o := AllocOptions{BitsPerKey: 10, Weights: c.Weights(), Probes: c.Probes(), MinWeight: 0.01}
			if elastic {
				a, err := Elasticities(rounds, 0.25, 1.5)
				if err != nil {
					t.Fatal(err)
				}
				o.Elasticity = a
				for l := range bpk {
					o.WeightFPR[l] = BloomModelFPR(bpk[l])
				}
			}
			var err error
			if plan, err = Allocate(shape, o); err != nil {
				t.Fatal(err)
			}
			bpk = bitsOf(plan)
		}
		return bpk, plan
	}
	fixed, fp := run(false)
	el, ep := run(true)
	if math.Abs(spent(t, fp)-spent(t, ep)) > 0.001*spent(t, fp) {
		t.Fatalf("budgets differ: %v vs %v", spent(t, fp), spent(t, ep))
	}
	rf, re := syn.reads(fixed), syn.reads(el)
	t.Logf("fixed point %v: %.6g reads/lookup; elastic %v: %.6g (%.2f%%)", fixed, rf, el, re, 100*(re/rf-1))
	if !(re < rf*(1-5e-4)) {
		t.Errorf("elastic plan reads %.6g, fixed point %.6g: want lower", re, rf)
	}
	// Moving 20,000 bits between two levels: no move improves the elastic
	// plan's true reads by more than the counts' rounding allows, while
	// some move improves the weights-only fixed point's.
	bestMove := func(base [NumLevels]float64) (gain float64) {
		r0 := syn.reads(base)
		for i := range NumLevels {
			for j := range NumLevels {
				if i == j || shape[i].Keys == 0 || shape[j].Keys == 0 {
					continue
				}
				b := base
				b[i] += 20000 / float64(shape[i].Keys)
				b[j] -= 20000 / float64(shape[j].Keys)
				if b[i] <= 24 {
					gain = max(gain, 1-syn.reads(b)/r0)
				}
			}
		}
		return gain
	}
	if g := bestMove(el); g > 1e-4 {
		t.Errorf("elastic plan: a move lowers the true reads by %.4f%%", 100*g)
	}
	if g := bestMove(fixed); g < 2e-4 {
		t.Errorf("fixed point: the best move lowers the true reads by only %.4f%%", 100*g)
	}
}
