package rotating_test

import (
	"fmt"
	"time"

	"github.com/bloomery/bloomery/rotating"
)

// Dedup of event ids over the last hour, in 6 generations of 10 minutes,
// sized for 50 events per second. The clock is injected; here it is moved
// by hand.
func Example() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	f, _ := rotating.New(rotating.Params{
		Window: time.Hour, Generations: 6, Rate: 50, FPR: 0.001,
		Clock: func() time.Time { return now },
	})
	fmt.Println("first sighting:", f.AddIfAbsentString("event-42"))
	now = now.Add(30 * time.Minute)
	fmt.Println("30 min later, duplicate:", !f.AddIfAbsentString("event-42"))
	now = now.Add(31 * time.Minute)
	f.Rotate()
	fmt.Println("61 min later, remembered:", f.ContainsString("event-42"))
	fmt.Println("per generation:", f.GenerationCapacity(), "keys,", f.GenerationLength())
	// Output:
	// first sighting: true
	// 30 min later, duplicate: true
	// 61 min later, remembered: false
	// per generation: 30000 keys, 10m0s
}
