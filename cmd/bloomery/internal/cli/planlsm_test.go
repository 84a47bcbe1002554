package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestPlanLSM checks the Monkey figures for T=10, 7 levels, 10 bits/key:
// optimum 1.176% against 5.735% uniform (algorithms reference §9).
func TestPlanLSM(t *testing.T) {
	r := mustRun(t, "", "plan", "lsm", "--levels", "7", "--fanout", "10", "--bits", "10", "--json")
	var rep struct {
		Rows []struct {
			Level      int     `json:"level"`
			OptimalBPK float64 `json:"optimal_bits_per_key"`
			UniformFPR float64 `json:"uniform_fpr"`
		} `json:"rows"`
		UniformSumFPR float64 `json:"uniform_sum_fpr"`
		OptimalSumFPR float64 `json:"optimal_sum_fpr"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rep.Rows) != 7 || math.Abs(rep.OptimalSumFPR-0.011757) > 1e-5 || math.Abs(rep.UniformSumFPR-0.05735) > 1e-4 {
		t.Fatalf("rows %d, optimal %.6f, uniform %.6f", len(rep.Rows), rep.OptimalSumFPR, rep.UniformSumFPR)
	}
	if math.Abs(rep.Rows[6].OptimalBPK-9.47) > 0.01 || math.Abs(rep.Rows[0].OptimalBPK-38.22) > 0.01 {
		t.Fatalf("L7 %.3f, L1 %.3f bits/key", rep.Rows[6].OptimalBPK, rep.Rows[0].OptimalBPK)
	}
	txt := mustRun(t, "", "plan", "lsm", "--levels", "7", "--fanout", "10", "--bits", "10").stdout
	for _, s := range []string{"uniform 5.73%, optimal 1.18% (4.9x fewer)", "L7 ", "9.47"} {
		if !strings.Contains(txt, s) {
			t.Errorf("text lacks %q:\n%s", s, txt)
		}
	}
	w := mustRun(t, "", "plan", "lsm", "--levels", "3", "--fanout", "10", "--bits", "8", "--weights", "0.01,0.5,0").stdout
	if !strings.Contains(w, "no filter") || !strings.Contains(w, "expected wasted reads with the weights") {
		t.Errorf("weighted plan:\n%s", w)
	}
	for _, bad := range [][]string{
		{"plan", "lsm", "--fanout", "1"},
		{"plan", "lsm", "--levels", "0"},
		{"plan", "lsm", "--levels", "3", "--weights", "1,2"},
		{"plan", "lsm", "--weights", "a,b,c,d,e,f,g"},
		{"plan", "lsm", "extra"},
	} {
		if r := run(t, "", bad...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want usage error; stderr %s", bad, r.code, r.stderr)
		}
	}
	if h := mustRun(t, "", "plan", "-h").stdout; !strings.Contains(h, "lsm") {
		t.Errorf("plan help does not list lsm:\n%s", h)
	}
}
