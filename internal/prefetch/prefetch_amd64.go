//go:build !purego

// Package prefetch hints array cells into the cache ahead of use. The
// batch queries of the bloom, ribbon, fuse and xor families compute the cells of a group
// of keys, prefetch them, and check them only after the next group's
// prefetches are issued. A prefetch retires at once, unlike a load, so a
// core can have far more of them in flight than the loads its reorder
// buffer can hold: that is what lets batch queries overlap DRAM misses on
// arrays much larger than the cache.
package prefetch

// Index8, Index16 and Index64 (prefetch_amd64.s) issue PREFETCHT0 for
// base[idx[i]], i < n, on arrays of 8-, 16- and 64-bit cells. Every idx[i] must be a valid
// index (a prefetch of a bad address does not fault, but callers never
// pass one).
//
//go:noescape
func Index8(base *uint8, idx *uint64, n int)

//go:noescape
func Index16(base *uint16, idx *uint64, n int)

//go:noescape
func Index64(base *uint64, idx *uint64, n int)

// Index8L2 and Index16L2 are Index8 and Index16 with PREFETCHT1: the
// lines come into L2, not L1. A read-only batch query whose misses
// overlap well gains from it on recent Intel cores: L2 tracks more
// outstanding misses than L1 does, and the check's loads then hit L2.
// fuse's ContainsBatch at 10^8 keys went from 1.50x to 1.70x
// xorfilter's per-key query with it (benchreport -only fuse8, two
// alternated pairs of runs).
//
//go:noescape
func Index8L2(base *uint8, idx *uint64, n int)

//go:noescape
func Index16L2(base *uint16, idx *uint64, n int)

// Enabled reports whether the Index functions issue real prefetches.
const Enabled = true
