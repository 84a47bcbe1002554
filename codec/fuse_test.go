package codec

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestFuseXorFamilies checks the catalog entries of the binary fuse and
// xor kinds: plans from the real sizing, build, decode through the
// catalog, no merge.
func TestFuseXorFamilies(t *testing.T) {
	hs := filtertest.Hashes(100_000, 1)
	for _, c := range []struct {
		kind        bloomery.Kind
		bits, lines int
		bpk1e7      float64
	}{
		{bloomery.KindFuse8, 8, 3, 9.02},
		{bloomery.KindFuse16, 16, 3, 18.04},
		{bloomery.KindFuse8x4, 8, 4, 8.61},
		{bloomery.KindFuse16x4, 16, 4, 17.22},
		{bloomery.KindXor8, 8, 3, 9.84},
	} {
		t.Run(c.kind.String(), func(t *testing.T) {
			fam, err := Lookup(c.kind)
			if err != nil {
				t.Fatal(err)
			}
			if fam.Mutability != Static || fam.Build == nil || fam.New != nil || fam.Merge != nil {
				t.Fatalf("%v: want a static, unmergeable family with Build", c.kind)
			}
			p, err := fam.Plan(10_000_000, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(p.BitsPerKey-c.bpk1e7) > 0.005 || p.FingerprintBits != c.bits || p.CacheLines != float64(c.lines) {
				t.Errorf("plan %+v", p)
			}
			if math.Abs(p.FPR-math.Ldexp(1, -c.bits)) > 1e-12 {
				t.Errorf("plan FPR %v, want 2^-%d", p.FPR, c.bits)
			}
			if float64(p.Bytes)*8/1e7 != p.BitsPerKey {
				t.Errorf("plan bytes %d disagree with %.4f bits/key", p.Bytes, p.BitsPerKey)
			}
			if _, err := fam.Plan(-1, 0.01); !errors.Is(err, bloomery.ErrInvalidParams) {
				t.Errorf("plan of -1 keys: %v", err)
			}
			f, err := fam.Build(hs, 0.01, hashing.XXH3(3))
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind() != c.kind || f.SizeBytes() != int(must(fam.Plan(len(hs), 0)).Bytes) {
				t.Errorf("built %v of %d bytes; plan says %d", f.Kind(), f.SizeBytes(), must(fam.Plan(len(hs), 0)).Bytes)
			}
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			g, err := Decode(data, hashing.Want(hashing.XXH3(3)))
			if err != nil {
				t.Fatal(err)
			}
			if g.Kind() != c.kind || g.Len() != len(hs) {
				t.Fatalf("decoded %v with %d keys", g.Kind(), g.Len())
			}
			filtertest.NoFalseNegatives(t, c.kind.String(), g.ContainsHash, hs)
			if _, err := Merge(f, g); !errors.Is(err, bloomery.ErrIncompatible) {
				t.Errorf("merge: %v", err)
			}
		})
	}
}

func must(p Plan, err error) Plan {
	if err != nil {
		panic(err)
	}
	return p
}
