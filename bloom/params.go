package bloom

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Params describes a Bloom filter to create. Capacity is required, and
// exactly one of FPR and BitsPerKey.
type Params struct {
	// Capacity is the design number of distinct keys n: the filter meets
	// its design FPR when it holds this many, and reports itself
	// overfilled once its estimated FPR exceeds twice the design FPR.
	Capacity int
	// FPR is the target false-positive rate at Capacity keys, in (0, 1).
	// The filter is sized with the smallest m that meets it.
	FPR float64
	// BitsPerKey sizes the filter directly (m = Capacity*BitsPerKey,
	// rounded up to whole words or cache lines), as an alternative to
	// FPR. It must lie in [MinBitsPerKey, MaxBitsPerKey].
	BitsPerKey float64
	// HashFuncs is the number of probes k per key; 0 chooses the optimum
	// for the layout (standard: round(ln2*m/n); blocked: the table in
	// BlockedK). At most MaxHashFuncs.
	HashFuncs int
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
	// Concurrent makes a Blocked filter safe for concurrent Add and
	// Contains (and their variants) without locks: bits are set with an
	// atomic OR and read with atomic loads. The standard Filter does not
	// support it (New refuses it).
	Concurrent bool
}

// Limits on parameters.
const (
	// MaxHashFuncs is the largest probe count k.
	MaxHashFuncs = 32
	// MinBitsPerKey and MaxBitsPerKey bound Params.BitsPerKey.
	MinBitsPerKey = 0.5
	MaxBitsPerKey = 1000
	// MaxBytes bounds the size of one filter's bit array (1 TiB).
	MaxBytes = 1 << 40
)

// validate checks p and returns the total number of bits wanted before
// rounding, computed from BitsPerKey, or 0 when the size must come from
// FPR.
func (p Params) validate(ctx string) error {
	if p.Capacity <= 0 {
		return fmt.Errorf("%s: capacity %d must be positive: %w", ctx, p.Capacity, bloomery.ErrInvalidParams)
	}
	hasFPR, hasBPK := p.FPR != 0, p.BitsPerKey != 0
	switch {
	case hasFPR && hasBPK:
		return fmt.Errorf("%s: set FPR or BitsPerKey, not both: %w", ctx, bloomery.ErrInvalidParams)
	case !hasFPR && !hasBPK:
		return fmt.Errorf("%s: set FPR or BitsPerKey: %w", ctx, bloomery.ErrInvalidParams)
	case hasFPR && !(p.FPR > 0 && p.FPR < 1):
		return fmt.Errorf("%s: FPR %v outside (0, 1): %w", ctx, p.FPR, bloomery.ErrInvalidParams)
	case hasBPK && !(p.BitsPerKey >= MinBitsPerKey && p.BitsPerKey <= MaxBitsPerKey):
		return fmt.Errorf("%s: bits per key %v outside [%v, %v]: %w", ctx, p.BitsPerKey, MinBitsPerKey, MaxBitsPerKey, bloomery.ErrInvalidParams)
	}
	if p.HashFuncs < 0 || p.HashFuncs > MaxHashFuncs {
		return fmt.Errorf("%s: hash functions %d outside [0, %d]: %w", ctx, p.HashFuncs, MaxHashFuncs, bloomery.ErrInvalidParams)
	}
	if p.Hasher.Keyed() && !p.Hasher.HasKey() {
		return fmt.Errorf("%s: keyed hasher without its key: %w", ctx, bloomery.ErrKeyRequired)
	}
	return nil
}

// sizeLimit is the largest bit array New builds, in bytes: MaxBytes, or
// less where bloomery.MaxTableBytes is (1 GiB where int has 32 bits).
const sizeLimit = min(MaxBytes, bloomery.MaxTableBytes)

// checkSize refuses a bit count beyond sizeLimit.
func checkSize(ctx string, bits float64) error {
	if !(bits/8 <= sizeLimit) {
		return fmt.Errorf("%s: %.4g bits exceed the %d-byte limit: %w", ctx, bits, uint64(sizeLimit), bloomery.ErrInvalidParams)
	}
	return nil
}

// Size returns the number of bits m and the probe count k that New(p)
// would use, without allocating the bit array (for planners). Errors are
// New's.
func Size(p Params) (m uint64, k int, err error) { return standardSize(p) }

// standardSize returns m (a multiple of 64) and k for a standard filter.
func standardSize(p Params) (m uint64, k int, err error) {
	const ctx = "bloom: new"
	if err := p.validate(ctx); err != nil {
		return 0, 0, err
	}
	if p.Concurrent {
		return 0, 0, fmt.Errorf("%s: the standard Filter has no concurrent mode (use Blocked): %w", ctx, bloomery.ErrInvalidParams)
	}
	n := float64(p.Capacity)
	var bits float64
	if p.BitsPerKey != 0 {
		bits = n * p.BitsPerKey
	} else {
		// The optimum for a target FPR: m = n * -ln p / ln^2 2. With
		// k rounded to an integer the FPR can land slightly above p, so
		// grow m by a few words until the formula meets the target.
		bits = n * fpmath.BitsPerKeyForFPR(p.FPR)
	}
	if err := checkSize(ctx, bits); err != nil {
		return 0, 0, err
	}
	m = max(64, uint64(math.Ceil(bits/64))*64)
	k = p.HashFuncs
	choose := k == 0
	if choose {
		k = fpmath.StandardK(float64(m) / n)
	}
	if p.FPR != 0 {
		for fpmath.StandardFPR(float64(m), n, k) > p.FPR {
			m += 64 * max(1, m/64/1000) // 0.1% steps
			if choose {
				k = fpmath.StandardK(float64(m) / n)
			}
			if err := checkSize(ctx, float64(m)); err != nil {
				return 0, 0, err
			}
		}
	}
	return m, k, nil
}

// BlockBits is the size of one block of a Blocked filter: one 64-byte
// cache line.
const BlockBits = 512

// blockedKThresholds[i] is the largest bits/key, in millibits, for which
// BlockedK returns i+1. The crossover points come from minimising the
// Poisson model fpmath.BlockedFPR over k for 512-bit blocks with
// independent uniform probes, which is the model this package's probe
// derivation follows (TestBlockedKTable re-derives them and
// TestBlockedKMeasured measures the FPR at neighbouring k). They sit close
// to RocksDB's FastLocalBloom thresholds at low bits/key and drift to
// fewer bits per probe at high bits/key: at 10 bits/key the optimum is 7
// probes (RocksDB chooses 6, because its multiply-only probe sequence is
// slightly correlated).
var blockedKThresholds = [...]int{
	2079, 3576, 5086, 6643, 8269, 9987, 11821, 13795, 15939, 18285,
	20868, 23730, 26919, 30490, 34508, 39048, 44196, 50059, 56757, 64435,
	73267, 83456, 95248, 108937, 124875, 143486, 165282, 190884, 221044, 256668,
	298882,
}

// BlockedK returns the probe count for a 512-bit blocked filter at the
// given bits per key, from the threshold table above; beyond the table
// (about 299 bits/key) it is MaxHashFuncs.
func BlockedK(bitsPerKey float64) int {
	mb := int(math.Round(bitsPerKey * 1000))
	for i, t := range blockedKThresholds {
		if mb <= t {
			return i + 1
		}
	}
	return len(blockedKThresholds) + 1
}

// blockedSize returns the number of 512-bit blocks and k for a Blocked
// filter.
func blockedSize(p Params) (blocks uint64, k int, err error) {
	const ctx = "bloom: new blocked"
	if err := p.validate(ctx); err != nil {
		return 0, 0, err
	}
	n := float64(p.Capacity)
	pick := func(blocks uint64) int {
		if p.HashFuncs != 0 {
			return p.HashFuncs
		}
		return BlockedK(float64(blocks*BlockBits) / n)
	}
	if p.BitsPerKey != 0 {
		bits := n * p.BitsPerKey
		if err := checkSize(ctx, bits); err != nil {
			return 0, 0, err
		}
		blocks = max(1, uint64(math.Ceil(bits/BlockBits)))
		return blocks, pick(blocks), nil
	}
	// The blocked layout needs more bits than the standard formula for
	// the same FPR (keys per block vary, and the FPR is convex in the
	// load). fpmath.BlockedFPR with the chosen k decreases with the
	// number of blocks, so binary-search the smallest count that meets
	// the target, starting from the standard size.
	fpr := func(blocks uint64) float64 {
		return fpmath.BlockedFPR(float64(blocks*BlockBits), n, pick(blocks), BlockBits)
	}
	lo := max(1, uint64(n*fpmath.BitsPerKeyForFPR(p.FPR)/BlockBits))
	if err := checkSize(ctx, float64(lo)*BlockBits); err != nil {
		return 0, 0, err
	}
	hi := lo
	for fpr(hi) > p.FPR {
		lo = hi
		hi = hi + hi/4 + 1
		if err := checkSize(ctx, float64(hi)*BlockBits); err != nil {
			return 0, 0, err
		}
	}
	// Invariant: fpr(hi) <= target; lo is the last failing size or the start.
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fpr(mid) <= p.FPR {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, pick(hi), nil
}
