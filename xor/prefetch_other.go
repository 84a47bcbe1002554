//go:build !amd64 || purego

package xor

// prefetch8 is a no-op without the assembly: ContainsBatch then relies on
// out-of-order execution alone to overlap the misses of consecutive keys.
func prefetch8(base *uint8, idx *uint64, n int) {}

// hasPrefetch reports whether prefetch8 issues real prefetches.
const hasPrefetch = false
