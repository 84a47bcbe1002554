package fpmath

import "math"

// CuckooFPR is the false-positive rate of a cuckoo filter whose non-zero
// f-bit fingerprints are uniform over the 2^f - 1 non-zero values (0 marks
// an empty slot), with buckets of bucketSize slots filled to load (the
// fraction of occupied slots). A negative query compares its fingerprint
// with the occupied slots of its two buckets, 2*bucketSize*load of them on
// average, each matching with probability 1/(2^f - 1):
//
//	FPR = 1 - (1 - 1/(2^f - 1))^(2*bucketSize*load)  ≈ 2*bucketSize*load / 2^f.
//
// (Fan et al. 2014 bound it with 2^-f per slot and load 1; the difference
// is below 0.4% relative for f >= 8.)
func CuckooFPR(f, bucketSize int, load float64) float64 {
	if load <= 0 {
		return 0
	}
	p := 1 / (math.Ldexp(1, f) - 1)
	return -math.Expm1(2 * float64(bucketSize) * load * math.Log1p(-p))
}
