//go:build !purego

package bloom

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveProbeAsm reports whether containsBatchAsm may run: it uses BEXTR
// (BMI1) and MULX, RORX and SHRX (BMI2).
var haveProbeAsm = cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// haveAVX512 reports whether containsBatchAVX512 may run: it needs
// haveProbeAsm's MULX and AVX-512 Foundation (with the operating system's
// support for the ZMM state, which package cpu checks). GODEBUG=
// cpu.avx512f=off turns it off, for a program that would rather not run
// 512-bit instructions (older Intel cores lower their clock for them).
var haveAVX512 = haveProbeAsm && cpu.X86.HasAVX512F

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

// containsBatchAVX512 (batch_prefetch_amd64.s) is containsBatchAsm's
// loop, same arguments and answers, testing a key's k probes at once in
// the lanes of a 512-bit register: a permute gathers the probed words of
// the line, a variable rotate brings each probe's bit to bit 0, one test
// checks all of them. The scalar loop spends about 22 micro-operations a
// key on shifts, which recent Intel cores run on two ports only, and it
// was bound by them more than by the cache misses: on the development VM
// (Intel Xeon, 2 vCPUs) it took 7.4-9.5 ns a key on a filter in cache,
// this loop 3.6-4.2 (k = 6, 1 KiB and 4 MiB). At 10^8 keys the medians
// of 5 runs were 16.8 ns a key for the scalar loop and 8.6 for this one
// (25.1 for the Go pipeline):
//
//	BLOOMERY_BENCH_N=100000000 go test -run x -bench ContainsBatchLoops -count 5 ./bloom
//
// The caller guarantees what containsBatchAsm's does, and haveAVX512.
//
//go:noescape
func containsBatchAVX512(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int)
