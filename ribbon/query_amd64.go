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
// first word, the layout in quarters and the seed's remix constant.
//
// The kernel serves filters with at most 8 columns (FPR above 2^-8, so
// the 1% filters of the common configurations) and evaluates all 8
// possible columns at once in a 256-bit register of 32-bit lanes,
// ignoring the ones the block lacks. The five quarters a row touches
// (see quarter-major storage in ribbon.go) hold consecutive runs of cols
// 32-bit words: a run is loaded as one 256-bit word (columns 0-7), ANDed
// with the broadcast coefficient word of its quarter, and the five runs
// XORed; shifts, XORs and a multiplication fold each lane to its parity
// and VMOVMSKPS gathers the 8 parities. The loads read 32 bytes from each
// run's start, past the last quarter into the zero padding that
// newSolution leaves. No branch depends on the data except the rare
// hand-over to queryGeneric next to the boundary between lower and upper
// blocks, so consecutive queries overlap in the out-of-order core.
type kernel struct {
	data      unsafe.Pointer
	numStarts uint64
	upper4    uint64 // first quarter (4·upperStart) with lower+1 columns
	lower     uint64 // columns of the lower blocks
	// edge is upper4-4 (mod 2^64): a row whose first quarter is one of
	// edge..edge+3 meets blocks with different column counts.
	edge    uint64
	seedMix uint64 // (seed+1)·0x9e3779b97f4a7c15, Remix's first step
	// avx2 is set when the fields above are and the kernel serves the
	// filter; otherwise containsAVX2 hands the query to queryGeneric
	// without executing any vector instruction.
	avx2 bool
	// ih is inlineHashOf(hasher) when avx2 is set, else the zero value:
	// ih.XXH3 is containsKey's one test for its assembly path.
	ih inlineHash
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
		upper4:    4 * f.l.upperStart,
		lower:     uint64(f.l.lower),
		edge:      4*f.l.upperStart - 4,
		seedMix:   (uint64(f.seed) + 1) * 0x9e3779b97f4a7c15,
		avx2:      true,
		ih:        inlineHashOf(f.hasher),
	}
	f.simd = true
}

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
//
// Cost: one 64-bit remix (two multiplications) and four more, then the key's
// equation evaluated against about 3.2 cache lines of the solution, loaded
// together and without data-dependent branches. On amd64 with AVX2 and
// at most 8 columns this is the assembly kernel (82 instructions);
// otherwise containsGeneric (reached through the assembly's dispatch, see
// containsAVX2). It inlines into its callers, so a method value
// f.ContainsHash calls the assembly directly: querying a 1% filter
// through the method value costs 99 instructions per key under
// callgrind, kernel 82 and wrapper 17 (106 with the earlier half-major
// table-driven kernel, 120 when ContainsHash dispatched in Go).
func (f *Filter) ContainsHash(h uint64) bool { return containsAVX2(&f.k, h) }

// containsBatchAVX2 sets out[i] = containsAVX2(k, hashes[i]) for
// i < done, prefetching the lines of 8 keys before evaluating them. It
// stops before a key whose row meets blocks with different column counts
// (rare: the rows that start in the four quarters below the upper
// blocks), so done < n means hashes[done] is still to be answered.
//
//go:noescape
func containsBatchAVX2(k *kernel, hashes *uint64, out *bool, n int) (done int)

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i; out
// must have len(out) >= len(hashes). It works in groups of keys: first it
// locates every key of a group and prefetches the cache lines its query
// reads, then it answers the keys, whose lines are in flight or in cache
// by then. With the assembly kernel both passes are in assembly
// (containsBatchAVX2, groups of 8, handing the rare keys next to the
// lower/upper boundary to ContainsHash); otherwise containsBatchGeneric.
// It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	_ = out[:len(hashes)]
	if !f.simd {
		f.containsBatchGeneric(hashes, out)
		return
	}
	for len(hashes) > 0 {
		done := containsBatchAVX2(&f.k, &hashes[0], &out[0], len(hashes))
		hashes, out = hashes[done:], out[done:]
		if len(hashes) > 0 {
			out[0] = f.ContainsHash(hashes[0])
			hashes, out = hashes[1:], out[1:]
		}
	}
}
