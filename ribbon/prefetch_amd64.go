//go:build !purego

package ribbon

// prefetchWords hints &base[offs[i]], i < n, into the cache
// (prefetch_amd64.s). Every offset must lie inside the solution's
// capacity (its padding included).
//
//go:noescape
func prefetchWords(base *uint64, offs *uint64, n int)

// prefetch starts loading the cache lines of data[offs[i]] for every i.
func prefetch(data []uint64, offs []uint64) {
	if len(offs) > 0 {
		prefetchWords(&data[:1][0], &offs[0], len(offs))
	}
}
