//go:build race

package counting

// raceEnabled shortens the concurrency stress test under -race, where
// every memory access is instrumented; the statistical tests keep their
// full sizes.
const raceEnabled = true
