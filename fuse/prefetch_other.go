//go:build !amd64 || purego

package fuse

// prefetch8 and prefetch16 are no-ops without the assembly: ContainsBatch
// then relies on out-of-order execution alone to overlap the misses of
// consecutive keys.
func prefetch8(base *uint8, idx *uint64, n int)   {}
func prefetch16(base *uint16, idx *uint64, n int) {}

// hasPrefetch reports whether prefetch8/16 issue real prefetches.
const hasPrefetch = false
