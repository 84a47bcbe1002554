//go:build !race

package counting

const raceEnabled = false
