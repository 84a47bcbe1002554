//go:build !purego

package ribbon

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveAVX2 says whether the CPU and OS support the AVX2 query kernel.
var haveAVX2 = cpu.X86.HasAVX2

// kernel is what the assembly query (query_amd64.s) reads: the solution's
// first word, the layout, the seed's remix constant, and for blocks with
// lower and with lower+1 columns the bits of the parity vector to test.
//
// The kernel serves filters with at most 8 columns (FPR above about
// 2^-8, so the 1% filters of the common configurations): it evaluates
// all 8 possible columns at once in two 256-bit registers and masks the
// ones the block lacks. A column's bits of the start block P and of the
// next block Q are 4 words, loaded as part of P[4k..4k+3] and
// Q[4k..4k+3] (columns 2k and 2k+1), ANDed with the row's coefficient
// words placed in the matching lanes, and XOR-folded; the parity of each
// column is computed with a nibble lookup (VPSHUFB) and a byte sum
// (VPSADBW). Loads of up to 128 bytes from P and from Q can read past the
// last block: the solution carries kernelPad words of zeros after its
// end (see newSolution). No branch depends on the data, so consecutive
// queries overlap in the out-of-order core.
type kernel struct {
	data      unsafe.Pointer
	numStarts uint64
	lower     uint64
	upper     uint64
	seedMix   uint64
	masks     [2][4]uint64
}

// containsAVX2 is the query of a filter whose kernel is set (see kernel);
// it answers exactly like containsGeneric.
//
//go:noescape
func containsAVX2(k *kernel, h uint64) bool

// setKernel prepares the assembly query when the CPU and the filter's
// shape allow it.
func (f *Filter) setKernel() {
	f.simd = false
	if !haveAVX2 || f.l.numBlocks == 0 || f.l.lower+1 > 8 || uint64(cap(f.data)-len(f.data)) < kernelPad {
		return
	}
	f.k = kernel{
		data:      unsafe.Pointer(unsafe.SliceData(f.data)),
		numStarts: f.l.numStarts,
		lower:     uint64(f.l.lower),
		upper:     f.l.upperStart,
		seedMix:   (uint64(f.seed) + 1) * 0x9e3779b97f4a7c15,
	}
	// Lane i of the parity vector holds column perm[i] in bit 0 and
	// column perm[i]+4 in bit 4.
	perm := [4]uint64{0, 2, 1, 3}
	for u := range 2 {
		cols := uint64(f.l.lower + u)
		for i, c := range perm {
			if c < cols {
				f.k.masks[u][i] |= 1
			}
			if c+4 < cols {
				f.k.masks[u][i] |= 1 << 4
			}
		}
	}
	f.simd = true
}

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
//
// Cost: one 64-bit remix and five multiplications, then the key's
// equation evaluated against 2 to 5 cache lines of the solution, loaded
// together and without data-dependent branches. On amd64 with AVX2 and
// at most 8 columns this is the assembly kernel (about 90 instructions);
// otherwise containsGeneric.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.simd {
		return containsAVX2(&f.k, h)
	}
	return f.containsGeneric(h)
}
