//go:build race

package filtertest

// RaceEnabled is true in -race builds. Tests use it to shorten or skip
// long single-goroutine runs, which the race detector slows 5-10x and in
// which it can find nothing; they run at full size without -race.
const RaceEnabled = true
