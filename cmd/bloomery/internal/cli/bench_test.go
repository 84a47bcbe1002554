package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/bloomery/bloomery/codec"
)

// TestBench runs `bloomery bench` on a small key set: every registered
// family appears, each measured FPR is plausible for its design (no family
// is silently broken), and the JSON form parses.
func TestBench(t *testing.T) {
	r := mustRun(t, "", "bench", "-n", "20000", "--queries", "50000", "--reps", "1")
	for _, f := range codec.Families() {
		if !strings.Contains(r.stdout, "\n"+f.Kind.String()+" ") {
			t.Errorf("bench output lacks %v:\n%s", f.Kind, r.stdout)
		}
	}
	r = mustRun(t, "", "bench", "-n", "20000", "--queries", "100000", "--reps", "1", "--kind", "bloom,blocked,cuckoo", "--json")
	var rows []benchRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, row := range rows {
		// Each of these is designed for 1%: 5 sigma at 10^5 probes is
		// about ±0.16%, and blocked/cuckoo sit a little below target.
		if f := float64(row.FPR); f < 0.002 || f > 0.0125 || math.IsNaN(f) {
			t.Errorf("%s: measured FPR %.4f not near the 1%% design", row.Kind, f)
		}
		if row.BuildNs <= 0 || row.NegNs <= 0 || row.BitsPerKey <= 0 {
			t.Errorf("%s: missing figures %+v", row.Kind, row)
		}
	}
	if r := run(t, "", "bench", "--kind", "nosuch"); r.code != ExitUsage {
		t.Errorf("unknown kind: exit %d", r.code)
	}
	if r := run(t, "", "bench", "--reps", "0"); r.code != ExitUsage {
		t.Errorf("reps 0: exit %d", r.code)
	}
}
