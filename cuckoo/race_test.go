//go:build race

package cuckoo

// raceEnabled is true under -race. Nothing in this package is concurrent,
// so race builds shorten only the long statistical and randomized runs
// (they stay at >= 10^6 keys or probes where a target is checked).
const raceEnabled = true
