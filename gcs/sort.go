package gcs

import "slices"

// radixThreshold is the input size from which sortHashes uses the radix
// sort; below it the comparison sort is faster.
const radixThreshold = 1 << 12

// sortHashes sorts a ascending, using tmp (grown as needed and returned)
// as scratch space for large inputs.
func sortHashes(a, tmp []uint64) []uint64 {
	if len(a) < radixThreshold {
		slices.Sort(a)
		return tmp
	}
	if cap(tmp) < len(a) {
		tmp = make([]uint64, len(a))
	}
	radixSort(a, tmp[:len(a)])
	return tmp
}

// radixSort is a least-significant-digit radix sort of a on 8-bit digits:
// one counting pass for all eight digit histograms, then one stable
// scatter pass per digit (skipped when every key has the same digit).
// Cost: 9 sequential passes over the data, against about log2(n)
// comparison rounds for a comparison sort.
func radixSort(a, tmp []uint64) {
	var counts [8][256]int
	for _, x := range a {
		for d := range 8 {
			counts[d][byte(x>>(8*d))]++
		}
	}
	src, dst := a, tmp
	for d := range 8 {
		c := &counts[d]
		shift := uint(8 * d)
		if c[byte(src[0]>>shift)] == len(src) {
			continue
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, x := range src {
			b := byte(x >> shift)
			dst[c[b]] = x
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}
