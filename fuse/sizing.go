package fuse

import (
	"math"
)

// maxSegmentLog caps the segment length at 2^18 cells, as published: longer
// segments buy no space and make construction less cache friendly.
const maxSegmentLog = 18

// minSegmentLog keeps at least 4 cells per segment. The published formulas
// give 2^2 for arity 3 at n = 1 and a negative exponent for arity 4 at
// n < 3, which no implementation can use.
const minSegmentLog = 2

// geometry is the shape of a binary fuse array: segCount+arity-1 segments
// of segLen cells each. A key's first position h0 lies in the first
// segCount segments (span = segCount*segLen cells) and position i lies in
// the i-th segment after h0's, at an offset taken from the key's hash.
type geometry struct {
	arity    int
	segLen   uint64 // a power of two
	mask     uint64 // segLen-1
	span     uint64 // segCount*segLen
	segLog   uint   // log2(segLen)
	segCount uint64 // number of segments a key's first position can fall in
	cells    uint64 // (segCount+arity-1)*segLen
}

// segmentLog is log2 of the published segment length for n keys:
//
//	arity 3: floor(ln n / ln 3.33 + 2.25)
//	arity 4: floor(ln n / ln 2.91 - 0.5)
//
// clamped to [minSegmentLog, maxSegmentLog]. The formula was fitted
// empirically by Graf and Lemire; its floor (not a rounding) matters: a
// segment twice as long often makes construction fail.
func segmentLog(arity int, n int) uint {
	if n < 1 {
		return minSegmentLog
	}
	ln := math.Log(float64(n))
	var e float64
	if arity == 3 {
		e = math.Floor(ln/math.Log(3.33) + 2.25)
	} else {
		e = math.Floor(ln/math.Log(2.91) - 0.5)
	}
	return uint(max(minSegmentLog, min(maxSegmentLog, e)))
}

// sizeFactor is the published ratio of cells to keys for n keys:
//
//	arity 3: max(1.125, 0.875 + 0.25 * ln(10^6) / ln n)
//	arity 4: max(1.075, 0.77 + 0.305 * ln(600000) / ln n)
//
// The floors 1.125 and 1.075 are the asymptotic peeling thresholds plus a
// margin; small sets need more room because the spatially coupled
// hypergraph has relatively more boundary segments. For n <= 1 the factor
// is undefined (ln 1 = 0) and the array is sized by its minimum of arity
// segments instead.
func sizeFactor(arity int, n int) float64 {
	if n <= 1 {
		return 0
	}
	ln := math.Log(float64(n))
	if arity == 3 {
		return max(1.125, 0.875+0.25*math.Log(1e6)/ln)
	}
	return max(1.075, 0.77+0.305*math.Log(600000)/ln)
}

// newGeometry sizes the array for n distinct keys: capacity =
// round(n*factor) cells, cut into ceil(capacity/segLen) segments (at least
// arity), of which the last arity-1 only receive a key's later positions.
func newGeometry(arity, n int) geometry {
	return geometryWithLog(arity, n, segmentLog(arity, n))
}

func geometryWithLog(arity, n int, segLog uint) geometry {
	segLen := uint64(1) << segLog
	capacity := uint64(math.Round(float64(n) * sizeFactor(arity, n)))
	total := max((capacity+segLen-1)>>segLog, uint64(arity))
	return makeGeometry(arity, segLog, total-uint64(arity-1))
}

func makeGeometry(arity int, segLog uint, segCount uint64) geometry {
	segLen := uint64(1) << segLog
	return geometry{
		arity:    arity,
		segLog:   segLog,
		segLen:   segLen,
		mask:     segLen - 1,
		segCount: segCount,
		span:     segCount * segLen,
		cells:    (segCount + uint64(arity) - 1) * segLen,
	}
}

// BitsPerKey returns the space, in bits per key, of a binary fuse filter
// with the given arity (3 or 4) and fingerprint width (8 or 16) built from
// n distinct keys, from the same sizing function that Build uses. It
// returns 0 for n <= 0 and for invalid arguments. Build with n distinct
// keys allocates exactly this much.
func BitsPerKey(arity, fingerprintBits, n int) float64 {
	if n <= 0 || (arity != 3 && arity != 4) || (fingerprintBits != 8 && fingerprintBits != 16) {
		return 0
	}
	g := newGeometry(arity, n)
	return float64(g.cells) * float64(fingerprintBits) / float64(n)
}

// SizeBytes returns the bytes of fingerprint array Build allocates for n
// distinct keys (see BitsPerKey).
func SizeBytes(arity, fingerprintBits, n int) int64 {
	if n <= 0 || (arity != 3 && arity != 4) || (fingerprintBits != 8 && fingerprintBits != 16) {
		return 0
	}
	g := newGeometry(arity, n)
	return int64(g.cells) * int64(fingerprintBits/8)
}
