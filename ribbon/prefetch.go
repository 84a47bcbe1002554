package ribbon

import "github.com/bloomery/bloomery/internal/prefetch"

// prefetchLines starts loading the cache lines of data[offs[i]] for every
// i (every offset must lie inside data's capacity, its padding included).
// With the amd64 assembly it issues PREFETCHT0s, which retire at once;
// elsewhere it loads one word of each line, independent loads whose misses
// still overlap, less well.
func prefetchLines(data []uint64, offs []uint64) {
	if len(offs) == 0 {
		return
	}
	if prefetch.Enabled {
		prefetch.Index64(&data[:1][0], &offs[0], len(offs))
		return
	}
	d := data[:cap(data)]
	var sink uint64
	for _, off := range offs {
		sink |= d[off]
	}
	consume(sink)
}

// consume keeps the compiler from discarding the loads.
//
//go:noinline
func consume(uint64) {}
