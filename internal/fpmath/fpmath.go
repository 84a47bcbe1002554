// Package fpmath holds the named false-positive and space formulas that the
// families, the sizing planner and the tests share. Each function states the
// model it assumes; none allocates.
package fpmath

import "math"

// Ln2 and Ln2Sq are ln 2 and (ln 2)^2.
const (
	Ln2   = math.Ln2
	Ln2Sq = math.Ln2 * math.Ln2
)

// StandardFPR is the classic Bloom estimate (1 - e^(-k*n/m))^k for m bits,
// n keys and k independent probes (the estimate RocksDB calls
// StandardFpRate). It is accurate to well under 1% relative for the sizes
// Bloomery builds; the exact form differs by O(k/m).
func StandardFPR(m, n float64, k int) float64 {
	if n <= 0 {
		return 0
	}
	if m <= 0 {
		return 1
	}
	return math.Pow(-math.Expm1(-float64(k)*n/m), float64(k))
}

// StandardK is the probe count that minimises StandardFPR at the given
// bits per key: round(ln2 * m/n), at least 1 and at most 32.
func StandardK(bitsPerKey float64) int {
	k := int(math.Round(Ln2 * bitsPerKey))
	return max(1, min(k, 32))
}

// BitsPerKeyForFPR is the bits per key an optimal standard Bloom filter
// needs for FPR p: -ln p / (ln 2)^2 = 1.44 * log2(1/p).
func BitsPerKeyForFPR(p float64) float64 { return -math.Log(p) / Ln2Sq }

// FillFPR is the FPR of a Bloom filter whose fraction fill of bits is set,
// probed k times at independent uniform positions: fill^k. For a standard
// Bloom filter this is the best estimate from the actual contents.
func FillFPR(fill float64, k int) float64 { return math.Pow(fill, float64(k)) }

// CountFromFill estimates how many distinct keys were inserted into a
// Bloom filter of m bits with k probes per key, x of them set
// (Swamidass and Baldi): n = -(m/k) ln(1 - x/m). A full filter returns
// +Inf.
func CountFromFill(m, x float64, k int) float64 {
	if x >= m {
		return math.Inf(1)
	}
	return -(m / float64(k)) * math.Log1p(-x/m)
}

// BlockedFPR is the FPR of a blocked Bloom filter of m bits in blocks of
// blockBits bits, holding n keys with k probes each, every probe uniform
// within the key's block (Putze, Sanders and Singler): the keys per block
// are Poisson with mean lambda = n*blockBits/m, so
//
//	FPR = sum_i Pois(i; lambda) * (1 - (1 - 1/blockBits)^(k*i))^k.
//
// The sum is truncated once its terms become negligible.
func BlockedFPR(m, n float64, k int, blockBits int) float64 {
	if n <= 0 {
		return 0
	}
	if m <= 0 {
		return 1
	}
	lambda := n * float64(blockBits) / m
	q := 1 - 1/float64(blockBits)
	kk := float64(k)
	sum := 0.0
	// Iterate around the mode in both directions in log space.
	mode := math.Floor(lambda)
	logPois := func(i float64) float64 {
		lg, _ := math.Lgamma(i + 1)
		return i*math.Log(lambda) - lambda - lg
	}
	term := func(i float64) float64 {
		return math.Exp(logPois(i)) * math.Pow(-math.Expm1(kk*i*math.Log(q)), kk)
	}
	for i := mode; ; i++ {
		t := term(i)
		sum += t
		if i > mode+10 && t < 1e-18 {
			break
		}
		if i > mode+1e6 {
			break
		}
	}
	for i := mode - 1; i >= 0; i-- {
		t := term(i)
		sum += t
		if t < 1e-18 && i < mode-10 {
			break
		}
	}
	return min(sum, 1)
}

// FingerprintFPR is the FPR of a filter that compares an f-bit
// fingerprint against probes stored fingerprints (cuckoo: 2*bucket size;
// xor/fuse: 1): 1 - (1 - 2^-f)^probes.
func FingerprintFPR(f int, probes float64) float64 {
	return -math.Expm1(probes * math.Log1p(-math.Ldexp(1, -f)))
}
