package codec

import (
	"errors"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/cuckoo"
	"github.com/bloomery/bloomery/hashing"
)

// TestCuckooPlanAtLoad: the plan at a load describes the filter NewAtLoad
// makes (fingerprint width, bucket count, bytes), meets the target FPR at
// n keys, equals Plan at the default load, and refuses the loads
// NewAtLoad refuses.
func TestCuckooPlanAtLoad(t *testing.T) {
	fam, err := Lookup(bloomery.KindCuckoo)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	for _, p := range []float64{0.01, 0.0184, 0.001} {
		def, err := fam.Plan(n, p)
		if err != nil {
			t.Fatal(err)
		}
		if at, err := fam.PlanAtLoad(n, p, cuckoo.DesignLoad); err != nil || at != def {
			t.Errorf("p=%v: PlanAtLoad at the design load = %+v, %v; Plan = %+v", p, at, err, def)
		}
		prev := def
		for _, load := range []float64{0.85, 0.6, 0.5} {
			pl, err := fam.PlanAtLoad(n, p, load)
			if err != nil {
				t.Fatalf("p=%v load=%v: %v", p, load, err)
			}
			a, err := fam.NewAtLoad(n, p, load, hashing.XXH3(0))
			if err != nil {
				t.Fatal(err)
			}
			f := a.(*cuckoo.Filter)
			if f.FingerprintBits() != pl.FingerprintBits || int64(f.SizeBytes()) != pl.Bytes {
				t.Errorf("p=%v load=%v: plan says %d-bit fingerprints in %d bytes, the filter has %d in %d",
					p, load, pl.FingerprintBits, pl.Bytes, f.FingerprintBits(), f.SizeBytes())
			}
			if pl.FPR > p {
				t.Errorf("p=%v load=%v: planned FPR %v above the target", p, load, pl.FPR)
			}
			if pl.Bytes < prev.Bytes {
				t.Errorf("p=%v: a table at load %v planned smaller (%d bytes) than at a higher load (%d)", p, load, pl.Bytes, prev.Bytes)
			}
			prev = pl
		}
	}
	for _, load := range []float64{0, -0.5, 0.95, 1} {
		if _, err := fam.PlanAtLoad(n, 0.01, load); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("load %v: err = %v, want ErrInvalidParams", load, err)
		}
	}
}
