//go:build !amd64

package bloom

import "sync/atomic"

// prefetch starts loading the cache lines of words[offs[i]] by loading one
// word of each: the loads are independent, so their misses overlap (less
// well than true prefetches, which retire at once). atomicLoads selects
// atomic loads for the concurrent mode.
func prefetch(words []uint64, offs []uint64, atomicLoads bool) {
	var sink uint64
	if atomicLoads {
		for _, off := range offs {
			sink |= atomic.LoadUint64(&words[off])
		}
	} else {
		for _, off := range offs {
			sink |= words[off]
		}
	}
	consume(sink)
}

// consume keeps the compiler from discarding the loads.
//
//go:noinline
func consume(uint64) {}
