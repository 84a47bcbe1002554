//go:build race

package bloom

// raceEnabled is true under -race (see skipUnderRace).
const raceEnabled = true
