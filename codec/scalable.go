package codec

import (
	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/scalable"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindScalable,
		Mutability:  Insert,
		Description: "scalable Bloom filter: a chain of growing, tightening Bloom links (RedisBloom BF.* arithmetic)",
		Plan:        planScalable,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return scalable.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return scalable.New(scalable.Params{InitialCapacity: n, FPR: p, Hasher: h})
		},
	})
}

// planScalable sizes the first link for n keys: the chain starts with one
// link at p/2 (tightening 0.5), so it costs about 1.44 more bits per key
// than a plain Bloom filter for the same n, and grows if n is exceeded.
// It computes the sizes without allocating the link.
func planScalable(n int, p float64) (Plan, error) {
	sp := scalable.Params{InitialCapacity: n, FPR: p}
	bytes, err := scalable.LinkBytes(sp, 0)
	if err != nil {
		return Plan{}, err
	}
	bits := 8 * bytes
	k := 0
	if _, k, err = bloom.Size(bloom.Params{Capacity: n, FPR: sp.LinkFPR(0)}); err != nil {
		return Plan{}, err
	}
	return Plan{
		Kind:       bloomery.KindScalable,
		BitsPerKey: float64(bits) / float64(n),
		Bytes:      int64(bytes),
		HashFuncs:  k,
		FPR:        fpmath.StandardFPR(float64(bits), float64(n), k),
		CacheLines: 2,
		Mutability: Insert,
		Note:       "grows past n: +1 link (x2 keys, +1.44 bits/key) per doubling",
	}, nil
}
