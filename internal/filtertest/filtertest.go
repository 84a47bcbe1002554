// Package filtertest is the conformance kit shared by every family's tests:
// deterministic key sets, the no-false-negative check, measured FPR against
// a formula with an honest statistical bound, and the zero-allocation
// check. Import it only from _test.go files.
package filtertest

import (
	"fmt"
	"math"
	"testing"
)

// SplitMix64 is a tiny deterministic generator (Steele, Lea and Flood) for
// reproducible key sets.
type SplitMix64 uint64

// Next returns the next pseudo-random word.
func (s *SplitMix64) Next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hashes returns n pseudo-random 64-bit hashes from seed. Different seeds
// give sets that overlap with probability about n^2/2^64 (negligible), so
// Hashes(n, 1) and Hashes(m, 2) serve as present and absent keys.
func Hashes(n int, seed uint64) []uint64 {
	s := SplitMix64(seed * 0x2545f4914f6cdd1d)
	out := make([]uint64, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

// Keys returns n distinct byte keys of 16-32 bytes ("k<seed>-<i>-" padded
// with pseudo-random hex), deterministic in seed.
func Keys(n int, seed uint64) [][]byte {
	s := SplitMix64(seed)
	out := make([][]byte, n)
	for i := range out {
		r := s.Next()
		k := fmt.Appendf(nil, "k%d-%d-%016x", seed, i, r)
		out[i] = k[:min(len(k), 16+int(r%17))]
	}
	return out
}

// NoFalseNegatives fails t if contains rejects any of hashes.
func NoFalseNegatives(t testing.TB, what string, contains func(uint64) bool, hashes []uint64) {
	t.Helper()
	misses := 0
	first := -1
	for i, h := range hashes {
		if !contains(h) {
			if first < 0 {
				first = i
			}
			misses++
		}
	}
	if misses > 0 {
		t.Fatalf("%s: %d false negatives of %d keys (first at index %d, hash %#x)", what, misses, len(hashes), first, hashes[first])
	}
}

// MeasureFPR probes contains with `probes` fresh hashes from seed (which
// must differ from the seeds of the inserted keys) and returns the
// fraction answered "maybe".
func MeasureFPR(contains func(uint64) bool, probes int, seed uint64) float64 {
	s := SplitMix64(seed*0x2545f4914f6cdd1d ^ 0xfeedface)
	fp := 0
	for i := 0; i < probes; i++ {
		if contains(s.Next()) {
			fp++
		}
	}
	return float64(fp) / float64(probes)
}

// CheckFPR fails t unless measured is within rel (e.g. 0.15) of expected.
// When the probe count is too small for that to be meaningful, the bound
// widens to 5 binomial standard deviations, and the test logs that it did.
func CheckFPR(t testing.TB, what string, measured, expected, rel float64, probes int) {
	t.Helper()
	tol := rel * expected
	sigma := math.Sqrt(expected * (1 - expected) / float64(probes))
	if 5*sigma > tol {
		t.Logf("%s: %d probes too few for ±%.0f%%; using 5 sigma = %.3g", what, probes, rel*100, 5*sigma)
		tol = 5 * sigma
	}
	if math.Abs(measured-expected) > tol {
		t.Errorf("%s: measured FPR %.5f%%, expected %.5f%% ± %.5f%%", what, 100*measured, 100*expected, 100*tol)
	} else {
		t.Logf("%s: measured FPR %.5f%%, expected %.5f%% (%+.1f%%)", what, 100*measured, 100*expected, 100*(measured-expected)/expected)
	}
}

// ZeroAllocs fails t if fn allocates.
func ZeroAllocs(t testing.TB, what string, fn func()) {
	t.Helper()
	if a := testing.AllocsPerRun(200, fn); a != 0 {
		t.Errorf("%s: %.1f allocations per call, want 0", what, a)
	}
}

// Short reports whether tests should use reduced sizes (go test -short).
func Short() bool { return testing.Short() }
