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
		// The batch pass times every filter: the batch API where there
		// is one, else the per-key query the batch ratios divide by.
		if (r.BatchNs > 0) == (r.NegBesideBatchNs > 0) {
			t.Errorf("%s: batch %.1f ns, per-key beside the batches %.1f ns: want exactly one", r.Name, r.BatchNs, r.NegBesideBatchNs)
		}
		if r.BatchReferenceNs() <= 0 {
			t.Errorf("%s: no per-key reference time", r.Name)
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

// TestQuerySets: ribbon is measured beside blocked Bloom and fuse8-4 beside
// fuse8, every other group on its own; sets and members keep the order.
func TestQuerySets(t *testing.T) {
	groups := []string{"bloom", "ribbon", "blocked", "fuse8-4", "bloom", "fuse8", "blocked"}
	impls := make([]Impl[uint64], len(groups))
	for i, g := range groups {
		impls[i].Group = g
	}
	order := []int{2, 3, 4, 5, 6, 0, 1}
	got := querySetsOf(impls, order)
	want := [][]int{{2, 6, 1}, {3, 5}, {4, 0}}
	if len(got) != len(want) {
		t.Fatalf("sets %v, want %v", got, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("sets %v, want %v", got, want)
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("sets %v, want %v", got, want)
			}
		}
	}
}

// TestInterleave: every filter answers every key exactly once, in chunks
// whose turn order rotates, and gets its own count back.
func TestInterleave(t *testing.T) {
	keys := make([]uint64, 3*Chunk+5)
	for i := range keys {
		keys[i] = uint64(i)
	}
	var turns []int
	seen := make([][]int, 3)
	built := make([]Built[uint64], 3)
	for i := range built {
		built[i].Bytes = i // identifies the filter in f
		seen[i] = make([]int, len(keys))
	}
	_, counts := interleave(built, keys, func(b Built[uint64], ks []uint64) int {
		turns = append(turns, b.Bytes)
		for _, k := range ks {
			seen[b.Bytes][k]++
		}
		return len(ks) * (b.Bytes + 1)
	})
	for i := range built {
		if counts[i] != len(keys)*(i+1) {
			t.Errorf("filter %d: count %d", i, counts[i])
		}
		for k, n := range seen[i] {
			if n != 1 {
				t.Fatalf("filter %d saw key %d %d times", i, k, n)
			}
		}
	}
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}
	if len(turns) != len(want) {
		t.Fatalf("turns %v", turns)
	}
	for i := range want {
		if turns[i] != want[i] {
			t.Fatalf("turns %v, want %v", turns, want)
		}
	}
}
