package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/ribbon"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindRibbon,
		Mutability:  Static,
		Description: "standard Ribbon filter: 128-bit bands over GF(2), about 30% smaller than blocked Bloom at equal FPR",
		Plan:        planRibbon,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return ribbon.Decode(data, want)
		},
		Build: func(hashes []uint64, p float64, h hashing.Hasher) (bloomery.Filter, error) {
			return ribbon.Build(hashes, ribbon.Params{FPR: p, Hasher: h})
		},
	})
}

func planRibbon(n int, p float64) (Plan, error) {
	s, err := ribbon.Size(n, ribbon.Params{FPR: p})
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Kind:            bloomery.KindRibbon,
		BitsPerKey:      s.BitsPerKey,
		Bytes:           int64(s.Bytes),
		FingerprintBits: s.LowerColumns,
		FPR:             s.FPR,
		// A query reads its start block and the next (1 to 3 lines);
		// a non-member stops after two columns on average.
		CacheLines: 2,
		Mutability: Static,
		Note:       fmt.Sprintf("%d or %d result columns per block (fractional bits)", s.LowerColumns, s.LowerColumns+1),
	}, nil
}
