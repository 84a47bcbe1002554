package codec

import (
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/quotient"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindQuotient,
		Mutability:  InsertDelete,
		Description: "rank-and-select quotient filter: deletes, counts, merge and resize without the keys",
		Plan: func(n int, p float64) (Plan, error) {
			q, r, size, err := quotient.Size(quotient.Params{Capacity: n, FPR: p})
			if err != nil {
				return Plan{}, err
			}
			return Plan{
				Kind:            bloomery.KindQuotient,
				BitsPerKey:      float64(8*size) / float64(n),
				Bytes:           size,
				FingerprintBits: q + r,
				FPR:             -math.Expm1(float64(n) * math.Log1p(-math.Ldexp(1, -(q+r)))),
				CacheLines:      2,
				Mutability:      InsertDelete,
				Note:            "power-of-two slots; resizable",
			}, nil
		},
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return quotient.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return quotient.New(quotient.Params{Capacity: n, FPR: p, Hasher: h})
		},
		Merge: func(a, b bloomery.Filter) (bloomery.Filter, error) {
			fa, okA := a.(*quotient.Filter)
			fb, okB := b.(*quotient.Filter)
			if !okA || !okB {
				return nil, bloomery.ErrIncompatible
			}
			return quotient.Merge(fa, fb)
		},
	})
}
