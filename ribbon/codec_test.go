package ribbon_test

import (
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/ribbon"
)

// The catalog entry plans with the real sizing, builds, and decodes.
func TestCodecRegistration(t *testing.T) {
	fam, err := codec.Lookup(bloomery.KindRibbon)
	if err != nil {
		t.Fatal(err)
	}
	if fam.Mutability != codec.Static || fam.Build == nil || fam.New != nil {
		t.Fatalf("family %+v", fam)
	}
	const n = 100_000
	plan, err := fam.Plan(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := ribbon.Size(n, ribbon.Params{FPR: 0.01})
	if plan.Bytes != int64(size.Bytes) || plan.BitsPerKey != size.BitsPerKey || plan.FPR != size.FPR || plan.CacheLines < 1 || plan.CacheLines > 3 {
		t.Errorf("plan %+v, size %+v", plan, size)
	}
	keys := filtertest.Hashes(n, 3)
	h := hashing.XXH3(9)
	f, err := fam.Build(keys, 0.01, h)
	if err != nil {
		t.Fatal(err)
	}
	if f.SizeBytes() != int(plan.Bytes) {
		t.Errorf("built %d bytes, planned %d", f.SizeBytes(), plan.Bytes)
	}
	data, _ := f.MarshalBinary()
	g, err := codec.Decode(data, hashing.Want(h))
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "codec", g.ContainsHash, keys)
	if _, err := fam.Plan(n, 0.9); err == nil {
		t.Error("plan at FPR 0.9: no error")
	}
}
