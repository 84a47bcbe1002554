package bloom

import (
	"sync/atomic"

	"github.com/bloomery/bloomery/internal/prefetch"
)

// prefetch starts loading the cache lines of words[offs[i]], i <
// len(offs). With the amd64 assembly it issues PREFETCHT0s, which retire
// at once, so all the misses are in flight together without holding up
// the reorder buffer. Elsewhere it loads one word of each line: the loads
// are independent, so their misses still overlap, less well; atomicLoads
// selects atomic loads for the concurrent mode. The caller guarantees the
// offsets are in bounds.
func prefetchLines(words []uint64, offs []uint64, atomicLoads bool) {
	if prefetch.Enabled {
		if len(offs) > 0 {
			prefetch.Index64(&words[0], &offs[0], len(offs))
		}
		return
	}
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
