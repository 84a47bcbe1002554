//go:build !purego

package ribbon

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveAVX2 says whether the CPU and OS support the AVX2 query kernels
// (containsAVX2 also uses BMI2's BZHI, which every AVX2 processor has).
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI2

// kernel is what the assembly query (query_amd64.s) reads: the solution's
// first word, the layout, the seed's remix constant, and for each column
// count the bits of the batch kernel's parity vector to test.
//
// The kernel serves filters with at most 8 columns (FPR above 2^-8, so
// the 1% filters of the common configurations) and evaluates all 8
// possible columns at once in two 256-bit registers, ignoring the ones
// the block lacks. The three halves a row touches (see seg and
// containsGeneric) hold consecutive runs of cols words: a run is loaded
// as two 256-bit words (columns 0-3 and 4-7), ANDed with the broadcast
// coefficient word of its half, and the three runs XORed. The single
// query then folds each column's word to its parity with shifts, XORs
// and a multiplication and gathers the 8 parities with VMOVMSKPS; the
// batch kernel uses a nibble lookup (VPSHUFB) and a byte sum (VPSADBW).
// The loads read 64 bytes from each run's start, past the last half into
// the zero padding that newSolution leaves. No branch depends on the
// data, so consecutive queries overlap in the out-of-order core.
type kernel struct {
	data      unsafe.Pointer
	numStarts uint64
	upper2    uint64 // first half (2·upperStart) with lower+1 columns
	lower1    uint64 // lower+1
	seedMix   uint64 // (seed+1)·0x9e3779b97f4a7c15, Remix's first step
	// masks[c]: the bits of the batch kernel's parity vector that belong
	// to the columns of a block with c columns.
	masks [9][4]uint64
	// avx2 is set when the fields above are and the kernel serves the
	// filter; otherwise containsAVX2 hands the query to queryGeneric
	// without executing any vector instruction.
	avx2 bool
}

// containsAVX2 is the query of the filter whose kernel is *k (k is always
// &f.k): when k.avx2 is set it evaluates the key in assembly, otherwise
// it tail-jumps to queryGeneric (containsGeneric). Either way it
// answers exactly like containsGeneric. Dispatching in the assembly keeps
// ContainsHash a single call, small enough to inline into its callers and
// into the method value f.ContainsHash.
//
//go:noescape
func containsAVX2(k *kernel, h uint64) bool

// containsBatchAVX2 sets out[i] = containsAVX2(k, hashes[i]) for i < n,
// prefetching the lines of 8 keys before evaluating them.
//
//go:noescape
func containsBatchAVX2(k *kernel, hashes *uint64, out *bool, n int)

// setKernel prepares the assembly query when the CPU and the filter's
// shape allow it.
func (f *Filter) setKernel() {
	f.simd = false
	f.k = kernel{}
	if !haveAVX2 || f.l.numBlocks == 0 || f.l.lower+1 > 8 || uint64(cap(f.data)-len(f.data)) < kernelPad {
		return
	}
	f.k = kernel{
		data:      unsafe.Pointer(unsafe.SliceData(f.data)),
		numStarts: f.l.numStarts,
		upper2:    2 * f.l.upperStart,
		lower1:    uint64(f.l.lower) + 1,
		seedMix:   (uint64(f.seed) + 1) * 0x9e3779b97f4a7c15,
	}
	// Lane i of the parity vector holds column i in bit 0 and column i+4
	// in bit 4.
	for cols := range uint64(len(f.k.masks)) {
		for i := range uint64(4) {
			if i < cols {
				f.k.masks[cols][i] |= 1
			}
			if i+4 < cols {
				f.k.masks[cols][i] |= 1 << 4
			}
		}
	}
	f.k.avx2 = true
	f.simd = true
}

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
//
// Cost: one 64-bit remix (two multiplications) and four more, then the key's
// equation evaluated against 3 or 4 cache lines of the solution, loaded
// together and without data-dependent branches. On amd64 with AVX2 and
// at most 8 columns this is the assembly kernel (83 instructions);
// otherwise containsGeneric (reached through the assembly's dispatch, see
// containsAVX2). It inlines into its callers, so a method value
// f.ContainsHash calls the assembly directly: querying a 1% filter
// through the method value costs 100 instructions per key under
// callgrind, kernel 83 and wrapper 17 (106 with the earlier table-driven
// kernel, 120 when ContainsHash dispatched in Go).
func (f *Filter) ContainsHash(h uint64) bool { return containsAVX2(&f.k, h) }

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i; out
// must have len(out) >= len(hashes). It works in groups of keys: first it
// locates every key of a group and prefetches the cache lines its query
// reads, then it answers the keys, whose lines are in flight or in cache by
// then. With the assembly kernel both passes are in assembly
// (containsBatchAVX2, groups of 8); otherwise containsBatchGeneric. It
// does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	_ = out[:len(hashes)]
	if f.simd && len(hashes) > 0 {
		containsBatchAVX2(&f.k, &hashes[0], &out[0], len(hashes))
		return
	}
	f.containsBatchGeneric(hashes, out)
}
