package codec

import (
	"fmt"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/rotating"
)

// Catalog defaults for a rotating filter created by size alone: a one-hour
// window in six generations. Each generation is sized for all n keys, at
// FPR p/6: a caller that creates a window by size alone (the CLI's build,
// the server) may add every key within one generation, and a generation
// sized for n/6 would then be six times overfilled. Callers that know
// their arrival rate use rotating.New with Params sized from it.
const (
	rotatingWindow      = time.Hour
	rotatingGenerations = 6
)

func init() {
	Register(Family{
		Kind:        bloomery.KindRotating,
		Mutability:  Insert,
		Description: "time-rotating window: N Bloom generations, the oldest dropped whole (catalog default: 1 h in 6)",
		Plan:        planRotating,
		Decode: func(data []byte, want hashing.Expect) (bloomery.Filter, error) {
			return rotating.Decode(data, want, rotating.Options{})
		},
		New: func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error) {
			if n <= 0 {
				return nil, fmt.Errorf("codec: rotating for %d keys: %w", n, bloomery.ErrInvalidParams)
			}
			return rotating.New(rotatingParams(n, p, h))
		},
	})
}

func rotatingParams(n int, p float64, h hashing.Hasher) rotating.Params {
	return rotating.Params{
		Window: rotatingWindow, Generations: rotatingGenerations,
		Capacity: n, FPR: p, Hasher: h,
	}
}

// planRotating sizes a window whose generations can each hold all n keys,
// at p/6 each. It computes the sizes without allocating the filter.
func planRotating(n int, p float64) (Plan, error) {
	if n <= 0 {
		return Plan{}, fmt.Errorf("codec: rotating for %d keys: %w", n, bloomery.ErrInvalidParams)
	}
	bytes, k, err := rotating.Size(rotatingParams(n, p, hashing.Hasher{}))
	if err != nil {
		return Plan{}, err
	}
	genBits := 8 * float64(bytes/rotatingGenerations)
	return Plan{
		Kind:       bloomery.KindRotating,
		BitsPerKey: 8 * float64(bytes) / float64(n),
		Bytes:      int64(bytes),
		HashFuncs:  k,
		FPR:        1 - pow(1-fpmath.StandardFPR(genBits, float64(n), k), rotatingGenerations),
		CacheLines: 2 * rotatingGenerations,
		Mutability: Insert,
		Note:       "one Bloom query per generation; keys expire after 50-60 min",
	}, nil
}

func pow(x float64, n int) float64 {
	r := 1.0
	for range n {
		r *= x
	}
	return r
}
