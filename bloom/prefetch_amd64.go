package bloom

// prefetchLines issues a prefetch of &base[offs[i]] for i < n
// (prefetch_amd64.s). The caller guarantees the offsets are in bounds.
//
//go:noescape
func prefetchLines(base *uint64, offs *uint64, n int)

// prefetch starts loading the cache lines of words[offs[i]], i < len(offs).
func prefetch(words []uint64, offs []uint64, _ bool) {
	if len(offs) > 0 {
		prefetchLines(&words[0], &offs[0], len(offs))
	}
}
