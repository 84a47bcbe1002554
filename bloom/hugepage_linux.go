package bloom

import (
	"syscall"
	"unsafe"
)

// hugePageThreshold is the bit-array size from which the array is backed
// by transparent huge pages where the kernel allows it.
const hugePageThreshold = 8 << 20

// adviseHugePages asks Linux to back the 2 MiB-aligned interior of words
// with transparent huge pages (madvise MADV_HUGEPAGE, effective when THP is
// in "madvise" or "always" mode). A query of a large filter is a random
// access: with 4 KiB pages nearly every one also misses the TLB and walks
// the page table, which on the development machine cost about a third of
// a batched query at 10^8 keys.
//
// MADV_HUGEPAGE only affects pages faulted in later. When the Go allocator
// hands out memory it had used before (already mapped with 4 KiB pages and
// cleared by the runtime), the advice alone changes nothing, so the range
// is then collapsed onto huge pages at once with MADV_COLLAPSE (Linux 6.1;
// it costs about one pass over the array, once per allocation; older
// kernels refuse it and the array keeps its small pages). The calls only
// change the kernel's paging policy for memory that this array owns;
// failure is harmless and ignored.
func adviseHugePages(words []uint64) { _, _ = hugePages(words) }

// hugePages does the work of adviseHugePages and returns the errors of its
// two calls (tests use them; callers ignore them).
func hugePages(words []uint64) (advise, collapse error) {
	const huge = 2 << 20
	size := uintptr(len(words)) * 8
	if size < hugePageThreshold {
		return nil, nil
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(words)))
	start := (huge - addr%huge) % huge
	if start >= size {
		return nil, nil
	}
	end := start + (size-start)/huge*huge
	if end <= start {
		return nil, nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)
	advise = syscall.Madvise(b[start:end], syscall.MADV_HUGEPAGE)
	collapse = syscall.Madvise(b[start:end], madvCollapse)
	return advise, collapse
}

// madvCollapse is MADV_COLLAPSE (Linux 6.1), missing from package syscall.
const madvCollapse = 25
