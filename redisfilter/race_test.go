//go:build race

package redisfilter_test

// raceDetector shrinks the largest tests under the race detector, which
// slows the client several times over; the full sizes run without -race.
const raceDetector = true
