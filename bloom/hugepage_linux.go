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
// a batched query at 10^8 keys. The call only changes the kernel's paging
// policy for memory that this array owns; failure is harmless and
// ignored.
func adviseHugePages(words []uint64) {
	const huge = 2 << 20
	size := uintptr(len(words)) * 8
	if size < hugePageThreshold {
		return
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(words)))
	start := (huge - addr%huge) % huge
	if start >= size {
		return
	}
	end := start + (size-start)/huge*huge
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)
	_ = syscall.Madvise(b[start:end], syscall.MADV_HUGEPAGE)
}
