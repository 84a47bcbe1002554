package bench

import (
	"math"
	"testing"
)

// TestSmoke runs every implementation, ours and peers, on a small key set
// with both key types: builds succeed, no false negatives (Run checks), and
// each measured FPR is within a sane band of the 1% target (fixed-FPR
// families at their own rate).
func TestSmoke(t *testing.T) {
	cfg := Config{N: 50000, P: 0.01, Reps: 1, Queries: 200000, Seed: 1}
	keys, absent := Uint64Keys(cfg.N, cfg.Queries, 1)
	res, err := Run(cfg, keys, absent, Uint64Impls(), nil)
	if err != nil {
		t.Fatal(err)
	}
	skeys, sabsent := StringKeys(cfg.N, cfg.Queries, 2)
	sres, err := Run(cfg, skeys, sabsent, StringImpls(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(res[0], sres[0]...) {
		t.Logf("%-40s %6.2f bits/key FPR %.3f%%", r.Name, r.BitsPerKey, 100*r.FPR)
		if r.FPR > 0.03 || math.IsNaN(r.FPR) || r.BitsPerKey <= 0 {
			t.Errorf("%s: FPR %.4f, bits/key %.2f", r.Name, r.FPR, r.BitsPerKey)
		}
	}
}

func TestMedianRatio(t *testing.T) {
	if Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 2, 3}) != 2.5 {
		t.Fatal("median")
	}
	reps := [][]Result{{{NegNs: 1}, {NegNs: 3}}, {{NegNs: 2}, {NegNs: 2}}, {{NegNs: 1}, {NegNs: 5}}}
	if r := Ratio(reps, 0, 1, func(r Result) float64 { return r.NegNs }); r != 3 {
		t.Fatalf("ratio %v", r)
	}
}

func TestStringKeysDistinct(t *testing.T) {
	keys, absent := StringKeys(20000, 20000, 3)
	seen := map[string]bool{}
	for _, k := range append(keys, absent...) {
		if len(k) < 16 || len(k) > 32 {
			t.Fatalf("length %d", len(k))
		}
		if seen[string(k)] {
			t.Fatalf("duplicate %q", k)
		}
		seen[string(k)] = true
	}
}
