//go:build !purego

package bloom

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveProbeAsm reports whether containsBatchAsm may run: it uses BEXTR
// (BMI1) and MULX, RORX and SHRX (BMI2).
var haveProbeAsm = cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// containsBatchAsm (batch_prefetch_amd64.s) sets out[j], j < n, to
// whether all k probe bits of hashes[j] are set in block
// Reduce(hashes[j], blocks) of the array at base, prefetching the line of
// key j+ahead before checking key j. The caller guarantees 1 <= k <= 7,
// n >= 1, ahead >= 1, len(out) >= n, an array of blocks*8 words and
// haveProbeAsm.
//
// It is ContainsBatch's branch-free check and pipeline in about half the
// instructions of the Go code: no offset ring (the block index is one
// MULX away from the hash), one prefetch per check instead of bursts of
// 16, the probes unrolled with RORX/BEXTR/SHRX (SHRX reads the word
// straight from the line) and entered once per key by a predicted branch
// on k. At 10^8 keys the Go pipeline was bound by instructions as much
// as by the misses (in cache it took 14 ns per key, at 10^8 keys 14-16),
// and this loop answered in 12.1-12.8 ns per key against 16.2 for the Go
// pipeline (medians of 7 alternated passes, 2^20 absent keys in chunks
// of 1024, k = 6, 1% FPR); prefetch distances from 24 to 64 keys were
// within noise of each other, 16 was slower.
//
//go:noescape
func containsBatchAsm(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int)
