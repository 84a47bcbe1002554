package fpmath

import "math"

// BlockedKeyBitProb is the probability that one key, inserted into a
// blocked Bloom filter of m bits in blocks of blockBits bits with k probes
// uniform (with replacement) inside its block, sets a given bit: the key
// lands in that bit's block with probability blockBits/m, and then misses
// the bit with all k probes with probability (1 - 1/blockBits)^k.
//
//	q = (blockBits/m) * (1 - (1 - 1/blockBits)^k)
//
// For blockBits = m this is the standard filter's 1 - (1 - 1/m)^k.
func BlockedKeyBitProb(m float64, k int, blockBits int) float64 {
	b := float64(blockBits)
	return b / m * -math.Expm1(float64(k)*math.Log1p(-1/b))
}

// BlockedCountFromFill estimates how many distinct keys a blocked Bloom
// filter of m bits (blocks of blockBits bits, k probes per key) holds when
// x of its bits are set. Every bit is set by each key independently with
// probability q = BlockedKeyBitProb, so E[x] = m(1 - (1-q)^n), giving
//
//	n = ln(1 - x/m) / ln(1 - q).
//
// This is Swamidass and Baldi's estimator with the per-key bit probability
// of the blocked layout (it counts the repeated probes of one key inside
// its block exactly). A full filter returns +Inf.
func BlockedCountFromFill(m, x float64, k int, blockBits int) float64 {
	if x >= m {
		return math.Inf(1)
	}
	if x <= 0 {
		return 0
	}
	q := BlockedKeyBitProb(m, k, blockBits)
	return math.Log1p(-x/m) / math.Log1p(-q)
}

// BlockedBestK returns the probe count in [1, maxK] that minimises
// BlockedFPR for a blocked filter at bitsPerKey bits per key, and that FPR.
// It evaluates the Poisson sum for each k (a few microseconds each), so
// callers tabulate it rather than calling it on a hot path.
func BlockedBestK(bitsPerKey float64, blockBits, maxK int) (int, float64) {
	const n = 1 << 20
	m := bitsPerKey * n
	bestK, best := 1, math.Inf(1)
	for k := 1; k <= maxK; k++ {
		if p := BlockedFPR(m, n, k, blockBits); p < best {
			bestK, best = k, p
		}
	}
	return bestK, best
}
