package gcs_test

import (
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/gcs"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// The catalog entry plans with the real sizing, builds, and decodes.
func TestCodecRegistration(t *testing.T) {
	fam, err := codec.Lookup(bloomery.KindGCS)
	if err != nil {
		t.Fatal(err)
	}
	if fam.Mutability != codec.Static || fam.Build == nil || fam.New != nil || fam.Merge != nil {
		t.Fatalf("family %+v", fam)
	}
	const n = 100_000
	plan, err := fam.Plan(n, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	keys := filtertest.Hashes(n, 3)
	h := hashing.XXH3(9)
	f, err := fam.Build(keys, 0.001, h)
	if err != nil {
		t.Fatal(err)
	}
	g := f.(*gcs.Filter)
	if g.M() != 1000 || g.P() != gcs.BestP(1000) {
		t.Fatalf("built P=%d M=%d", g.P(), g.M())
	}
	if d := math.Abs(float64(f.SizeBytes())-float64(plan.Bytes)) / float64(plan.Bytes); d > 0.01 {
		t.Errorf("built %d bytes, planned %d", f.SizeBytes(), plan.Bytes)
	}
	if math.Abs(plan.FPR-f.EstimatedFPR()) > 1e-12 {
		t.Errorf("plan FPR %v, filter %v", plan.FPR, f.EstimatedFPR())
	}
	data, _ := f.MarshalBinary()
	d, err := codec.Decode(data, hashing.Want(h))
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "codec", d.ContainsHash, keys)
	if _, err := fam.Plan(n, 0.9); err == nil {
		t.Error("plan at FPR 0.9: no error")
	}
	if _, err := codec.Merge(f, d); err == nil {
		t.Error("GCS merge: no error")
	}
}
