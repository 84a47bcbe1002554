package codec

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/fuse"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

func init() {
	for _, v := range []struct {
		kind        bloomery.Kind
		arity, bits int
		desc        string
	}{
		{bloomery.KindFuse8, 3, 8, "binary fuse filter, 3-wise, 8-bit fingerprints: ~9.0 bits/key, FPR 2^-8, 3 cache lines per query"},
		{bloomery.KindFuse16, 3, 16, "binary fuse filter, 3-wise, 16-bit fingerprints: ~18.0 bits/key, FPR 2^-16"},
		{bloomery.KindFuse8x4, 4, 8, "binary fuse filter, 4-wise, 8-bit fingerprints: ~8.6 bits/key, FPR 2^-8, 4 cache lines per query"},
		{bloomery.KindFuse16x4, 4, 16, "binary fuse filter, 4-wise, 16-bit fingerprints: ~17.2 bits/key, FPR 2^-16"},
	} {
		kind, arity, bits := v.kind, v.arity, v.bits
		fam := Family{
			Kind:        kind,
			Mutability:  Static,
			Description: v.desc,
			Plan: func(n int, p float64) (Plan, error) {
				return planFuse(kind, arity, bits, n, p)
			},
		}
		if bits == 8 {
			fam.Decode = func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
				return fuse.Decode[uint8](data, want)
			}
			fam.Build = func(hashes []uint64, _ float64, h hashing.Hasher) (bloomery.Filter, error) {
				return fuse.Build[uint8](hashes, fuse.Params{Arity: arity, Hasher: h})
			}
		} else {
			fam.Decode = func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
				return fuse.Decode[uint16](data, want)
			}
			fam.Build = func(hashes []uint64, _ float64, h hashing.Hasher) (bloomery.Filter, error) {
				return fuse.Build[uint16](hashes, fuse.Params{Arity: arity, Hasher: h})
			}
		}
		Register(fam)
	}
}

// planFuse sizes a binary fuse filter with the sizing function Build uses.
// The FPR is fixed by the fingerprint width, so the target p only appears
// in the note.
func planFuse(kind bloomery.Kind, arity, bits, n int, p float64) (Plan, error) {
	if n < 0 {
		return Plan{}, fmt.Errorf("%v: %d keys: %w", kind, n, bloomery.ErrInvalidParams)
	}
	if uint64(n) > fuse.MaxKeys {
		return Plan{}, fmt.Errorf("%v: %d keys exceed %d: %w", kind, n, uint64(fuse.MaxKeys), bloomery.ErrInvalidParams)
	}
	fpr := fpmath.FingerprintFPR(bits, 1)
	note := fmt.Sprintf("fixed FPR 2^-%d", bits)
	if p > 0 && p < fpr {
		note += fmt.Sprintf(" (above the %.3g target)", p)
	}
	return Plan{
		Kind:            kind,
		BitsPerKey:      fuse.BitsPerKey(arity, bits, n),
		Bytes:           fuse.SizeBytes(arity, bits, n),
		FingerprintBits: bits,
		FPR:             fpr,
		CacheLines:      float64(arity),
		Mutability:      Static,
		Note:            note,
	}, nil
}
