package codec

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindBloom,
		Mutability:  Insert,
		Description: "standard Bloom filter: k probes over the whole array (64-bit double hashing)",
		Plan:        planBloom,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return bloom.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return bloom.New(bloom.Params{Capacity: n, FPR: p, Hasher: h})
		},
		Merge: mergeBloom,
	})
	Register(Family{
		Kind:        bloomery.KindBlocked,
		Mutability:  Insert,
		Description: "blocked Bloom filter: all probes in one 512-bit cache line",
		Plan:        planBlocked,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return bloom.DecodeBlocked(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return bloom.NewBlocked(bloom.Params{Capacity: n, FPR: p, Hasher: h})
		},
		Merge: mergeBlocked,
	})
}

// The planners size without allocating, so planning a filter larger than
// memory is cheap.

func planBloom(n int, p float64) (Plan, error) {
	bits, k, err := bloom.Size(bloom.Params{Capacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	m := float64(bits)
	// A negative query stops at the first clear bit. At design fill x
	// (= 1 - e^(-kn/m)) probe i is reached with probability x^i, so it
	// touches sum_{i<k} x^i = (1 - x^k)/(1 - x) lines (about 2 at x=1/2).
	x := -math.Expm1(-float64(k) * float64(n) / m)
	return Plan{
		Kind:       bloomery.KindBloom,
		BitsPerKey: m / float64(n),
		Bytes:      int64(bits / 8),
		HashFuncs:  k,
		FPR:        fpmath.StandardFPR(m, float64(n), k),
		CacheLines: (1 - math.Pow(x, float64(k))) / (1 - x),
		Mutability: Insert,
	}, nil
}

func planBlocked(n int, p float64) (Plan, error) {
	blocks, k, err := bloom.BlockedSize(bloom.Params{Capacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	m := float64(blocks * bloom.BlockBits)
	return Plan{
		Kind:       bloomery.KindBlocked,
		BitsPerKey: m / float64(n),
		Bytes:      int64(blocks * bloom.BlockBits / 8),
		HashFuncs:  k,
		FPR:        fpmath.BlockedFPR(m, float64(n), k, bloom.BlockBits),
		CacheLines: 1,
		Mutability: Insert,
		Note:       "batch queries overlap misses",
	}, nil
}

func mergeBloom(a, b bloomery.Filter) (bloomery.Filter, error) {
	fa, ok1 := a.(*bloom.Filter)
	fb, ok2 := b.(*bloom.Filter)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("codec: merge bloom: got %T and %T: %w", a, b, bloomery.ErrIncompatible)
	}
	out := fa.Clone()
	if err := out.Union(fb); err != nil {
		return nil, err
	}
	return out, nil
}

func mergeBlocked(a, b bloomery.Filter) (bloomery.Filter, error) {
	fa, ok1 := a.(*bloom.Blocked)
	fb, ok2 := b.(*bloom.Blocked)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("codec: merge blocked: got %T and %T: %w", a, b, bloomery.ErrIncompatible)
	}
	out := fa.Clone()
	if err := out.Union(fb); err != nil {
		return nil, err
	}
	return out, nil
}
