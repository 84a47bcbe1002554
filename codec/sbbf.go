package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/sbbf"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindSBBF,
		Mutability:  Insert,
		Description: "Parquet split-block Bloom filter: 256-bit blocks, one bit per 32-bit word (Parquet/Arrow compatible)",
		Plan:        planSBBF,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return sbbf.Decode(data, want)
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			return sbbf.New(sbbf.Params{Capacity: n, FPR: p, Hasher: h})
		},
		Merge: mergeSBBF,
	})
}

// planSBBF sizes the filter without allocating it.
func planSBBF(n int, p float64) (Plan, error) {
	bytes, err := sbbf.Size(sbbf.Params{Capacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	blocks := bytes / sbbf.BlockBytes
	return Plan{
		Kind:       bloomery.KindSBBF,
		BitsPerKey: float64(bytes) * 8 / float64(n),
		Bytes:      int64(bytes),
		HashFuncs:  8,
		FPR:        fpmath.SBBFFPR(float64(n) / float64(blocks)),
		CacheLines: 1,
		Mutability: Insert,
		Note:       fmt.Sprintf("%d blocks; Poisson sizing (Arrow's would use %d bytes)", blocks, sbbf.ArrowBytes(n, p)),
	}, nil
}

func mergeSBBF(a, b bloomery.Filter) (bloomery.Filter, error) {
	x, ok1 := a.(*sbbf.Filter)
	y, ok2 := b.(*sbbf.Filter)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("sbbf: merge of %T and %T: %w", a, b, bloomery.ErrIncompatible)
	}
	return sbbf.Merge(x, y)
}
