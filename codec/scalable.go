package codec

import (
	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
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
func planScalable(n int, p float64) (Plan, error) {
	f, err := scalable.New(scalable.Params{InitialCapacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	l := f.Links()[0]
	return Plan{
		Kind:       bloomery.KindScalable,
		BitsPerKey: float64(l.Bits) / float64(n),
		Bytes:      int64(l.SizeBytes),
		HashFuncs:  l.HashFuncs,
		FPR:        l.DesignFPR,
		CacheLines: 2,
		Mutability: Insert,
		Note:       "grows past n: +1 link (x2 keys, +1.44 bits/key) per doubling",
	}, nil
}
