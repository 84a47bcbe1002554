package codec

import (
	"errors"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestWindowAndChainFamilies checks the catalog entries of the scalable
// and rotating kinds: plans agree with a created filter, New, decode
// through the catalog with the hasher checked, no merge.
func TestWindowAndChainFamilies(t *testing.T) {
	keys := filtertest.Hashes(60_000, 1)
	for _, kind := range []bloomery.Kind{bloomery.KindScalable, bloomery.KindRotating} {
		t.Run(kind.String(), func(t *testing.T) {
			fam, err := Lookup(kind)
			if err != nil {
				t.Fatal(err)
			}
			if fam.Mutability != Insert || fam.New == nil || fam.Build != nil || fam.Merge != nil {
				t.Fatalf("%v: want an insert family with New and no merge", kind)
			}
			p, err := fam.Plan(len(keys), 0.01)
			if err != nil {
				t.Fatal(err)
			}
			h := hashing.XXH3(5)
			f, err := fam.New(len(keys), 0.01, h)
			if err != nil {
				t.Fatal(err)
			}
			if int64(f.SizeBytes()) != p.Bytes || p.FPR > 0.01 || p.FPR < 0.004 || p.HashFuncs < 1 {
				t.Errorf("plan %+v, created filter %d bytes", p, f.SizeBytes())
			}
			for _, k := range keys {
				f.AddHash(k)
			}
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			g, err := Decode(data, hashing.Want(h))
			if err != nil {
				t.Fatal(err)
			}
			if g.Kind() != kind {
				t.Fatalf("decoded %v", g.Kind())
			}
			filtertest.NoFalseNegatives(t, kind.String(), g.ContainsHash, keys)
			if _, err := Decode(data, hashing.Want(hashing.XXH3(6))); !errors.Is(err, bloomery.ErrIncompatible) {
				t.Errorf("decode with another seed: %v", err)
			}
			if _, err := Merge(f, g); !errors.Is(err, bloomery.ErrIncompatible) {
				t.Errorf("merge: %v", err)
			}
			if _, err := fam.Plan(0, 0.01); !errors.Is(err, bloomery.ErrInvalidParams) {
				t.Errorf("plan of 0 keys: %v", err)
			}
		})
	}
}
