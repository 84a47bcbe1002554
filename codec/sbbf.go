package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
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

func planSBBF(n int, p float64) (Plan, error) {
	f, err := sbbf.New(sbbf.Params{Capacity: n, FPR: p})
	if err != nil {
		return Plan{}, err
	}
	s := f.Stats()
	return Plan{
		Kind:       bloomery.KindSBBF,
		BitsPerKey: s.BitsPerKey,
		Bytes:      int64(f.SizeBytes()),
		HashFuncs:  8,
		FPR:        s.DesignFPR,
		CacheLines: 1,
		Mutability: Insert,
		Note:       fmt.Sprintf("%d blocks; Poisson sizing (Arrow's would use %d bytes)", f.NumBlocks(), sbbf.ArrowBytes(n, p)),
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
