//go:build !amd64 || purego

package ribbon

// prefetch starts loading the cache lines of data[offs[i]] by loading one
// word of each (every offset must lie inside data's capacity): the loads
// are independent, so their misses overlap, less well than true
// prefetches, which retire at once.
func prefetch(data []uint64, offs []uint64) {
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
