//go:build race

package fuse

// raceEnabled reports a -race build, whose 5-10x slowdown makes the
// 10^7-key space test use 10^6 keys (the published bounds hold there too).
const raceEnabled = true
