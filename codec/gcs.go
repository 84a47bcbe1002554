package codec

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/gcs"
	"github.com/bloomery/bloomery/hashing"
)

func init() {
	Register(Family{
		Kind:        bloomery.KindGCS,
		Mutability:  Static,
		Description: "Golomb-coded set: sorted hashes, Golomb-Rice coded (BIP-158 compatible); smallest static filter, slower queries",
		Plan:        planGCS,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return gcs.Decode(data, want)
		},
		Build: func(hashes []uint64, p float64, h hashing.Hasher) (bloomery.Filter, error) {
			return gcs.Build(hashes, gcs.Params{FPR: p, Hasher: h})
		},
	})
}

func planGCS(n int, p float64) (Plan, error) {
	if n < 0 {
		return Plan{}, fmt.Errorf("gcs: %d keys: %w", n, bloomery.ErrInvalidParams)
	}
	if !(p > 0 && p <= 0.5) {
		return Plan{}, fmt.Errorf("gcs: FPR %v outside (0, 0.5]: %w", p, bloomery.ErrInvalidParams)
	}
	mf := math.Round(1 / p)
	if mf > gcs.MaxM {
		return Plan{}, fmt.Errorf("gcs: FPR %v needs M > 2^48: %w", p, bloomery.ErrInvalidParams)
	}
	m := uint64(mf)
	P := gcs.BestP(m)
	bpk := gcs.CodeBits(P, m)
	// The in-memory sampled index adds 16 bytes per gcs.IndexInterval keys.
	indexBits := 128.0 / gcs.IndexInterval
	return Plan{
		Kind:       bloomery.KindGCS,
		BitsPerKey: bpk + indexBits,
		Bytes:      int64(math.Ceil(float64(n)*bpk/8)) + 16*int64((n+gcs.IndexInterval-1)/gcs.IndexInterval),
		FPR:        gcs.ExpectedFPR(uint64(n), m),
		// A query binary-searches the index and decodes a stretch of
		// about IndexInterval/2 codes: a few lines of the stream.
		CacheLines: 1 + math.Ceil(gcs.IndexInterval/2*bpk/512),
		Mutability: Static,
		Note:       fmt.Sprintf("P=%d M=%d; stream %.2f bits/key when shipped (index rebuilt on load)", P, m, bpk),
	}, nil
}
