//go:build !amd64 || purego

// Package prefetch hints array cells into the cache ahead of use; without
// the amd64 assembly its functions do nothing, and batch queries rely on
// out-of-order execution alone to overlap the misses of consecutive keys.
package prefetch

func Index8(base *uint8, idx *uint64, n int)   {}
func Index16(base *uint16, idx *uint64, n int) {}
func Index64(base *uint64, idx *uint64, n int) {}

func Index8L2(base *uint8, idx *uint64, n int)   {}
func Index16L2(base *uint16, idx *uint64, n int) {}

// Enabled reports whether the Index functions issue real prefetches.
const Enabled = false
