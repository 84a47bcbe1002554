//go:build !race

package filtertest

// RaceEnabled is true in -race builds (see race.go).
const RaceEnabled = false
