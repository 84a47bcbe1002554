package sbbf_test

import (
	"errors"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/sbbf"
)

// The catalog entry plans with the real sizing, creates, decodes and merges.
func TestCodecRegistration(t *testing.T) {
	fam, err := codec.Lookup(bloomery.KindSBBF)
	if err != nil {
		t.Fatal(err)
	}
	if fam.Mutability != codec.Insert || fam.New == nil || fam.Build != nil || fam.Merge == nil {
		t.Fatalf("family %+v", fam)
	}
	const n = 100_000
	plan, err := fam.Plan(n, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fam.New(n, 0.01, hashing.Hasher{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fam.New(n, 0.01, hashing.Hasher{})
	if a.SizeBytes() != int(plan.Bytes) || plan.FPR > 0.01 || plan.HashFuncs != 8 {
		t.Errorf("plan %+v, filter %d bytes", plan, a.SizeBytes())
	}
	if a.(*sbbf.Filter).Hasher() != sbbf.Parquet {
		t.Error("default hasher is not Parquet's XXH64 seed 0")
	}
	ka, kb := filtertest.Hashes(n/2, 1), filtertest.Hashes(n/2, 2)
	for i := range ka {
		a.AddHash(ka[i])
		b.AddHash(kb[i])
	}
	m, err := codec.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := m.MarshalBinary()
	d, err := codec.Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "merged (a)", d.ContainsHash, ka)
	filtertest.NoFalseNegatives(t, "merged (b)", d.ContainsHash, kb)
	c, _ := fam.New(2*n, 0.01, hashing.Hasher{})
	if _, err := codec.Merge(a, c); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("merge of different sizes: %v", err)
	}
}
