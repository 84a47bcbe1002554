package codec

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/counting"
	"github.com/bloomery/bloomery/hashing"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindCounting,
		Mutability:  InsertDelete,
		Description: "counting Bloom filter: 4-bit (or 8-bit) sticky saturating counters; add, delete, count",
		Plan:        planCounting,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return counting.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return counting.New(counting.Params{Capacity: n, FPR: p, Hasher: h})
		},
		Merge: mergeCounting,
	})
}

// planCounting sizes the default counting filter (standard layout, 4-bit
// counters) without allocating it.
func planCounting(n int, p float64) (Plan, error) {
	s, err := counting.Plan(counting.Params{Capacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	bytes := int64(s.Counters / 2)
	// A negative query stops at the first zero counter: at design fill x
	// = 1 - e^(-kn/m) it touches sum_{i<k} x^i = (1 - x^k)/(1 - x) lines.
	// (A positive query touches k; the blocked layout, counting.Params
	// Blocked, touches 1.)
	x := -math.Expm1(-float64(s.K) * float64(n) / float64(s.Counters))
	return Plan{
		Kind:       bloomery.KindCounting,
		BitsPerKey: float64(8*bytes) / float64(n),
		Bytes:      bytes,
		HashFuncs:  s.K,
		FPR:        s.FPR,
		CacheLines: (1 - math.Pow(x, float64(s.K))) / (1 - x),
		Mutability: InsertDelete,
		Note:       "4-bit counters, 4x a Bloom filter's bits",
	}, nil
}

// mergeCounting adds two counting filters counter by counter (saturating);
// neither input is modified.
func mergeCounting(a, b bloomery.Filter) (bloomery.Filter, error) {
	fa, ok1 := a.(*counting.Filter)
	fb, ok2 := b.(*counting.Filter)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("codec: merge counting: got %T and %T: %w", a, b, bloomery.ErrIncompatible)
	}
	out := fa.Clone()
	if err := out.Merge(fb); err != nil {
		return nil, err
	}
	return out, nil
}
