package pebblefilter

import (
	"math"
	"testing"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// A leveled shape: L0 small, L1-L2 empty, L3..L6 growing by 10x, 100 bytes
// of data per key.
var shape = func() (l [NumLevels]LevelInfo) {
	keys := [NumLevels]uint64{20_000, 0, 0, 3_000, 27_000, 270_000, 2_700_000}
	for i, k := range keys {
		l[i] = LevelInfo{Keys: k, DataBytes: 100 * k}
	}
	return l
}()

func spent(t *testing.T, p Plan) (bits float64) {
	for i, s := range p.Specs {
		switch s.Family {
		case BlockedBloom:
			bits += s.BitsPerKey * float64(shape[i].Keys)
		case Ribbon:
			bits += -math.Log2(s.FPR) * ribbonOverhead * float64(shape[i].Keys)
		}
	}
	return bits
}

func TestAllocateUnweighted(t *testing.T) {
	p, err := Allocate(shape, AllocOptions{BitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, l := range shape {
		total += l.Keys
	}
	if got, want := spent(t, p), 10*float64(total); math.Abs(got-want) > 0.01*want {
		t.Fatalf("spent %v bits, budget %v", got, want)
	}
	// Textbook Monkey: smaller levels get more bits (up to the cap).
	prev := math.Inf(1)
	for _, i := range []int{3, 4, 5, 6} {
		b := p.Specs[i].BitsPerKey
		if b > prev+1e-9 || b > 24+1e-9 {
			t.Fatalf("L%d: %v bits/key after %v (specs %v)", i, b, prev, p.Specs)
		}
		prev = b
	}
	if p.Specs[6].BitsPerKey >= 10 || p.Specs[5].BitsPerKey <= 10 {
		t.Fatalf("specs %v", p.Specs)
	}
	// Empty levels inherit from the next larger non-empty level.
	if p.Specs[1] != p.Specs[3] || p.Specs[2] != p.Specs[3] {
		t.Fatalf("empty levels: %v", p.Specs)
	}
	if p.Monkey.Cost >= uniformCost(t, 10) {
		t.Fatalf("allocated cost %v not below uniform %v", p.Monkey.Cost, uniformCost(t, 10))
	}
}

func uniformCost(t *testing.T, b float64) float64 {
	c := 0.0
	for _, l := range shape {
		if l.Keys > 0 {
			c += BloomModelFPR(b)
		}
	}
	return c
}

// TestAllocateCacheWeighted: with a cache that holds the data of L0-L4,
// those levels' false positives are cheap, so they get fewer bits than in
// the unweighted plan and L6 gets more.
func TestAllocateCacheWeighted(t *testing.T) {
	un, err := Allocate(shape, AllocOptions{BitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Allocate(shape, AllocOptions{BitsPerKey: 10, CacheBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("weights %v\nunweighted %v\nweighted %v", w.Weights, un.Specs, w.Specs)
	for _, i := range []int{0, 3, 4} {
		if w.Weights[i] != 0.1 {
			t.Errorf("L%d weight %v, want the floor 0.1 (its data is cached)", i, w.Weights[i])
		}
		if w.Specs[i].BitsPerKey >= un.Specs[i].BitsPerKey {
			t.Errorf("L%d: weighted %v, unweighted %v", i, w.Specs[i], un.Specs[i])
		}
	}
	if w.Weights[6] != 1 || w.Specs[6].BitsPerKey <= un.Specs[6].BitsPerKey {
		t.Errorf("L6: weight %v, weighted %v, unweighted %v", w.Weights[6], w.Specs[6], un.Specs[6])
	}
	if math.Abs(spent(t, w)-spent(t, un)) > 0.01*spent(t, un) {
		t.Errorf("budgets differ: %v vs %v", spent(t, w), spent(t, un))
	}
}

func TestAllocateGetAndRibbon(t *testing.T) {
	p, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Workload: Get})
	if err != nil {
		t.Fatal(err)
	}
	if p.Specs[6].Family != None {
		t.Fatalf("Get: L6 %v", p.Specs[6])
	}
	var upper float64
	for i := range 6 {
		upper += float64(shape[i].Keys)
	}
	if got := spent(t, p); math.Abs(got-10*upper) > 0.01*10*upper {
		t.Fatalf("Get: spent %v, budget %v", got, 10*upper)
	}
	r, err := Allocate(shape, AllocOptions{BitsPerKey: 7, Family: Ribbon})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range r.Specs {
		if shape[i].Keys > 0 && s.Family != Ribbon {
			t.Fatalf("ribbon plan L%d: %v", i, s)
		}
	}
	if r.Specs[6].FPR <= r.Specs[5].FPR {
		t.Fatalf("ribbon plan: %v", r.Specs)
	}
	for _, o := range []AllocOptions{{}, {BitsPerKey: -1}, {BitsPerKey: 10, Family: 7}, {BitsPerKey: 10, MinWeight: 2}} {
		if _, err := Allocate(shape, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestMissCosts(t *testing.T) {
	l := [NumLevels]LevelInfo{{DataBytes: 100}, {}, {}, {DataBytes: 50}, {DataBytes: 1000}, {DataBytes: 10_000}, {DataBytes: 100_000}}
	w := MissCosts(l, 1_000+50+100+500+100, 100, 0.05)
	want := [NumLevels]float64{0.05, 0.05, 0.05, 0.05, 0.05, 0.95, 1}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-12 {
			t.Fatalf("weights %v, want %v", w, want)
		}
	}
}

// TestBloomModelTable: the tabulated model matches the formula at and
// between grid points.
func TestBloomModelTable(t *testing.T) {
	for _, b := range []float64{1, 2.5, 7.3, 10, 10.01, 16.77, 24, 40.2, 64} {
		want := fpmath.BlockedFPR(b, 1, bloom.BlockedK(b), bloom.BlockBits)
		if got := BloomModelFPR(b); math.Abs(got-want) > 0.01*want {
			t.Errorf("b=%v: table %v, formula %v", b, got, want)
		}
	}
	if BloomModelFPR(0.5) != 1 || BloomModelFPR(math.NaN()) != 1 {
		t.Error("below the minimum: want 1")
	}
}

// TestAllocateExplicitWeights: measured weights replace the model; a level
// whose false positives cost more gets more bits.
func TestAllocateExplicitWeights(t *testing.T) {
	a, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Weights: [NumLevels]float64{0.3, 0, 0, 0.3, 0.4, 0.95, 0.93}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Weights: [NumLevels]float64{0.3, 0, 0, 0.3, 0.4, 0.1, 0.93}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Weights[1] != 0.1 || a.Weights[5] != 0.95 {
		t.Fatalf("weights %v", a.Weights)
	}
	if a.Specs[5].BitsPerKey <= b.Specs[5].BitsPerKey {
		t.Fatalf("L5 at weight .95: %v, at .1: %v", a.Specs[5], b.Specs[5])
	}
	if _, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Weights: [NumLevels]float64{2}}); err == nil {
		t.Fatal("weight 2 accepted")
	}
}

// TestPilotWeights: counts from a pilot become weights (reads per false
// positive) and probes (checks per lookup); a level whose false positives
// never miss the cache gets the MinWeight floor and fewer bits than a
// level of the same size whose false positives always miss.
func TestPilotWeights(t *testing.T) {
	c := PilotCounts{
		Lookups:        1000,
		Checks:         [NumLevels]int64{2000, 0, 0, 1000, 1000, 1000, 1000},
		FalsePositives: [NumLevels]int64{20, 0, 0, 10, 10, 10, 10},
		DataReads:      [NumLevels]int64{1, 0, 0, 0, 5, 10, 7},
	}
	w := c.Weights()
	want := [NumLevels]float64{0.05, 1, 1, 0, 0.5, 1, 0.7}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-12 {
			t.Fatalf("weights %v, want %v", w, want)
		}
	}
	p := c.Probes()
	if p != ([NumLevels]float64{2, 0, 0, 1, 1, 1, 1}) {
		t.Fatalf("probes %v", p)
	}
	if (PilotCounts{}).Probes() != ([NumLevels]float64{}) {
		t.Fatal("no lookups: want zero probes")
	}

	// Equal-sized L4 and L5: L4's false positives are free, L5's cost a read.
	eq := shape
	eq[4] = eq[5]
	plan, err := Allocate(eq, AllocOptions{BitsPerKey: 10, Weights: [NumLevels]float64{1, 1, 1, 1, 0, 1, 1}, MinWeight: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Weights[4] != 0.01 || plan.Specs[4].BitsPerKey >= plan.Specs[5].BitsPerKey-3 {
		t.Fatalf("weights %v, specs %v", plan.Weights, plan.Specs)
	}
}

// TestAllocateProbes: probing a level twice per lookup doubles the cost of
// its false positives, so it gets more bits (textbook: log2(2)/ln2 ≈ 1.44
// more); the budget is unchanged; out-of-range probe counts are rejected.
func TestAllocateProbes(t *testing.T) {
	one, err := Allocate(shape, AllocOptions{BitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Probes: [NumLevels]float64{1, 1, 1, 1, 1, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	d := two.Specs[5].BitsPerKey - one.Specs[5].BitsPerKey
	if d < 1 || d > 2 {
		t.Fatalf("L5 probed twice: %v bits/key more (%v vs %v)", d, two.Specs[5], one.Specs[5])
	}
	if math.Abs(spent(t, two)-spent(t, one)) > 0.01*spent(t, one) {
		t.Fatalf("budgets differ: %v vs %v", spent(t, two), spent(t, one))
	}
	for _, bad := range []float64{-1, 65, math.NaN()} {
		if _, err := Allocate(shape, AllocOptions{BitsPerKey: 10, Probes: [NumLevels]float64{bad}}); err == nil {
			t.Errorf("probes %v accepted", bad)
		}
	}
}
