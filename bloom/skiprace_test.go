package bloom

import (
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// skipUnderRace skips a single-goroutine test that needs arrays of 8 MiB
// and more (the prefetching batch paths) when the race detector is on:
// instrumented, such a test takes tens of seconds and can find no race.
// It runs at full size without -race (make unit).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if filtertest.RaceEnabled {
		t.Skip("single-goroutine test over arrays of 8 MiB and more: run without -race")
	}
}
