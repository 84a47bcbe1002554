package codec

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

func TestBloomFamilies(t *testing.T) {
	for _, kind := range []bloomery.Kind{bloomery.KindBloom, bloomery.KindBlocked} {
		fam, err := Lookup(kind)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := fam.Plan(1_000_000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if plan.FPR > 0.01 || plan.BitsPerKey < 9.5 || plan.BitsPerKey > 10.5 || plan.HashFuncs < 6 || plan.HashFuncs > 7 {
			t.Errorf("%v plan: %+v", kind, plan)
		}
		if math.Abs(float64(plan.Bytes)-plan.BitsPerKey*1_000_000/8) > 1 {
			t.Errorf("%v plan bytes %d", kind, plan.Bytes)
		}
		wantLines := 1.0
		if kind == bloomery.KindBloom {
			wantLines = 2 // (1-x^k)/(1-x) at fill x near 1/2 (2.05 at k=7)
		}
		if math.Abs(plan.CacheLines-wantLines) > 0.1 {
			t.Errorf("%v: %.3f cache lines per negative query, want about %v", kind, plan.CacheLines, wantLines)
		}
		// Planning does not allocate the filter: 10^11 keys (120 GB) plan
		// instantly (on 64-bit platforms; where int has 32 bits, where
		// the limit is 1 GiB, 2^26 keys).
		n := int(min(100_000_000_000, uint64(math.MaxInt)/32))
		if big, err := fam.Plan(n, 0.01); err != nil || big.Bytes < int64(n) {
			t.Errorf("%v: plan for %d keys: %+v, %v", kind, n, big, err)
		}
		if _, err := fam.Plan(0, 0.01); err == nil {
			t.Errorf("%v: plan for 0 keys accepted", kind)
		}

		a, err := fam.New(1000, 0.01, hashing.XXH3(5))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := fam.New(1000, 0.01, hashing.XXH3(5))
		a.AddString("a")
		b.AddString("b")
		data, _ := b.MarshalBinary()
		bd, err := Decode(data, hashing.Want(hashing.XXH3(5)))
		if err != nil || bd.Kind() != kind {
			t.Fatalf("%v: decode: %v", kind, err)
		}
		m, err := Merge(a, bd)
		if err != nil {
			t.Fatal(err)
		}
		if !m.ContainsString("a") || !m.ContainsString("b") {
			t.Errorf("%v: merge lost a key", kind)
		}
		if a.ContainsString("b") {
			t.Errorf("%v: merge modified its input", kind)
		}
		c, _ := fam.New(1000, 0.01, hashing.XXH3(6))
		if _, err := Merge(a, c); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("%v: merge with another seed: %v", kind, err)
		}
	}
	// Mixing the two kinds is refused.
	fa, _ := Lookup(bloomery.KindBloom)
	fb, _ := Lookup(bloomery.KindBlocked)
	x, _ := fa.New(100, 0.01, hashing.Hasher{})
	y, _ := fb.New(100, 0.01, hashing.Hasher{})
	if _, err := Merge(x, y); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("bloom+blocked merge: %v", err)
	}
}
