//go:build !purego

package xor

// prefetch8 (prefetch_amd64.s) hints the cells base[idx[i]], i < n, into
// the cache with PREFETCHT0. A prefetch retires at once, unlike a load, so
// a core can have far more of them in flight than the loads its reorder
// buffer can hold: that is what makes ContainsBatch faster than a loop of
// queries on arrays much larger than the cache. Every idx[i] must be a
// valid index.
//
//go:noescape
func prefetch8(base *uint8, idx *uint64, n int)

// hasPrefetch reports whether prefetch8 issues real prefetches.
const hasPrefetch = true
