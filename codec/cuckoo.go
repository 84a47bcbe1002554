package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/cuckoo"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindCuckoo,
		Mutability:  InsertDelete,
		Description: "cuckoo filter: 8-16 bit fingerprints in buckets of 4, any bucket count; add, delete, count",
		Plan: func(n int, p float64) (Plan, error) {
			return planCuckoo(n, p, cuckoo.DesignLoad)
		},
		PlanAtLoad: planCuckoo,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return cuckoo.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return cuckoo.New(cuckoo.Params{Capacity: n, FPR: p, Hasher: h})
		},
		NewAtLoad: func(n int, p, load float64, h hashing.Hasher) (bloomery.Adder, error) {
			return cuckoo.New(cuckoo.Params{Capacity: n, FPR: p, Load: load, Hasher: h})
		},
		// Cuckoo filters of different contents place fingerprints by
		// different eviction walks; there is no slot-wise union.
		Merge: nil,
	})
}

// planCuckoo sizes, without allocating it, the cuckoo filter that
// NewAtLoad(n, p, load) makes.
func planCuckoo(n int, p, load float64) (Plan, error) {
	if n < 1 || uint64(n) > cuckoo.MaxCapacity {
		return Plan{}, fmt.Errorf("codec: cuckoo: capacity %d outside 1..%d: %w", n, uint64(cuckoo.MaxCapacity), bloomery.ErrInvalidParams)
	}
	f, err := cuckoo.FingerprintBitsAt(p, load)
	if err != nil {
		return Plan{}, err
	}
	m, err := cuckoo.BucketsAt(n, load)
	if err != nil {
		return Plan{}, err
	}
	bytes := int64(cuckoo.TableBytes(m, f)) + 8 // in-memory padding
	load = float64(n) / float64(m*cuckoo.BucketSize)
	return Plan{
		Kind:            bloomery.KindCuckoo,
		BitsPerKey:      float64(8*bytes) / float64(n),
		Bytes:           bytes,
		FingerprintBits: f,
		FPR:             fpmath.CuckooFPR(f, cuckoo.BucketSize, load),
		CacheLines:      2,
		Mutability:      InsertDelete,
		Note:            fmt.Sprintf("%d buckets at %.0f%% load; inserts fail (ErrFull) near 95%%", m, 100*load),
	}, nil
}
