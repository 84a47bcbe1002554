//go:build !purego

package fuse

// prefetch8 and prefetch16 (prefetch_amd64.s) hint the cells base[idx[i]],
// i < n, into the cache with PREFETCHT0. A prefetch retires at once, unlike
// a load, so a core can have far more of them in flight than the loads its
// reorder buffer can hold: that is what makes ContainsBatch faster than a
// loop of queries on arrays much larger than the cache. Every idx[i] must
// be a valid index (a prefetch of a bad address does not fault, but the
// callers never pass one).
//
//go:noescape
func prefetch8(base *uint8, idx *uint64, n int)

//go:noescape
func prefetch16(base *uint16, idx *uint64, n int)

// hasPrefetch reports whether prefetch8/16 issue real prefetches.
const hasPrefetch = true
