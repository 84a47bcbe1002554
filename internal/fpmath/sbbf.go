package fpmath

import "math"

// SBBFFPR is the false-positive rate of a Parquet split-block Bloom filter
// (256-bit blocks of eight 32-bit words, one bit set per word and key)
// whose blocks hold lambda keys on average. The keys per block are Poisson
// with mean lambda; a word of a block holding i keys has its probed bit set
// with probability 1 - (31/32)^i, and a probe needs all eight:
//
//	FPR = sum_i Pois(i; lambda) * (1 - (31/32)^i)^8.
//
// At 10 bits per key (lambda = 25.6) this is 1.2648%; it reproduces every
// row of the Parquet specification's sizing table (10.5 bits/key: 1.01%).
// The sum runs outward from the mode until its terms are negligible.
func SBBFFPR(lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	if math.IsInf(lambda, 1) || math.IsNaN(lambda) {
		return 1
	}
	logq := math.Log(31.0 / 32.0)
	term := func(i float64) float64 {
		lg, _ := math.Lgamma(i + 1)
		return math.Exp(i*math.Log(lambda)-lambda-lg) * math.Pow(-math.Expm1(i*logq), 8)
	}
	mode := math.Floor(lambda)
	sum := 0.0
	for i := mode; ; i++ {
		t := term(i)
		sum += t
		if (i > mode+10 && t < 1e-18) || i > mode+1e7 {
			break
		}
	}
	for i := mode - 1; i >= 0; i-- {
		t := term(i)
		sum += t
		if i < mode-10 && t < 1e-18 {
			break
		}
	}
	return min(sum, 1)
}

// SBBFLambdaForFPR returns the largest mean number of keys per 256-bit
// block at which SBBFFPR stays at or below fpr (bisection on the monotone
// SBBFFPR). Blocks needed for n keys: ceil(n / lambda).
func SBBFLambdaForFPR(fpr float64) float64 {
	if fpr >= 1 {
		return math.Inf(1)
	}
	if fpr <= 0 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for SBBFFPR(hi) <= fpr {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return hi
		}
	}
	for i := 0; i < 64; i++ {
		mid := (lo + hi) / 2
		if SBBFFPR(mid) <= fpr {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// SBBFLambdaFromFill inverts the expected fill of a split-block filter:
// with Poisson block loads of mean lambda, the expected fraction of set
// bits is 1 - e^(-lambda/32), so lambda = -32 ln(1 - fill). A full filter
// returns +Inf.
func SBBFLambdaFromFill(fill float64) float64 {
	if fill >= 1 {
		return math.Inf(1)
	}
	if fill <= 0 {
		return 0
	}
	return -32 * math.Log1p(-fill)
}

// ArrowSBBFBits is the bitset size, in bits, that the Arrow, parquet-mr and
// parquet-rs writers compute for ndv keys at FPR fpp:
// m = -8 ndv / ln(1 - fpp^(1/8)), from the standard-Bloom approximation.
// It ignores the variance of block loads, so the real FPR is higher than
// fpp (about 1.46% for 1% before the writers round up to a power of two).
func ArrowSBBFBits(ndv, fpp float64) float64 {
	return -8 * ndv / math.Log1p(-math.Pow(fpp, 1.0/8))
}
