package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/xor"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindXor8,
		Mutability:  Static,
		Description: "xor filter, 8-bit fingerprints: 9.84 bits/key, FPR 2^-8, 3 cache lines per query (fuse8 is smaller and builds faster)",
		Plan:        planXor8,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return xor.Decode(data, want)
		},
		// The FPR is fixed at 2^-8; the target is ignored.
		Build: func(hashes []uint64, _ float64, h hashing.Hasher) (bloomery.Filter, error) {
			return xor.Build(hashes, xor.Params{Hasher: h})
		},
	})
}

// planXor8 sizes an xor8 filter with the sizing function Build uses.
func planXor8(n int, p float64) (Plan, error) {
	if n < 0 || uint64(n) > xor.MaxKeys {
		return Plan{}, fmt.Errorf("xor8: %d keys: %w", n, bloomery.ErrInvalidParams)
	}
	fpr := fpmath.FingerprintFPR(xor.FingerprintBits, 1)
	note := "fixed FPR 2^-8"
	if p > 0 && p < fpr {
		note += fmt.Sprintf(" (above the %.3g target)", p)
	}
	return Plan{
		Kind:            bloomery.KindXor8,
		BitsPerKey:      xor.BitsPerKey(n),
		Bytes:           int64(xor.Cells(n)),
		FingerprintBits: xor.FingerprintBits,
		FPR:             fpr,
		CacheLines:      3,
		Mutability:      Static,
		Note:            note,
	}, nil
}
