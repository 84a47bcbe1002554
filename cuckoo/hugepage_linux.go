package cuckoo

import (
	"syscall"
	"unsafe"
)

// hugePageThreshold is the table size from which the table is backed by
// transparent huge pages where the kernel allows it.
const hugePageThreshold = 8 << 20

// newTable returns n zero bytes for a table. From hugePageThreshold on, it
// asks Linux to back the 2 MiB-aligned interior with transparent huge pages
// (madvise MADV_HUGEPAGE, effective when THP is in "madvise" or "always"
// mode) before the memory is first touched. Every insert and query is a
// random access to one or two buckets: with 4 KiB pages a table of tens of
// MiB misses the TLB on nearly every access and walks the page table
// (a two-dimensional walk under virtualisation), with 2 MiB pages the
// whole table is covered by a few TLB entries. The call only changes the
// kernel's paging policy for memory this slice owns; failure is harmless
// and ignored.
func newTable(n uint64) []byte {
	b := make([]byte, n)
	const huge = 2 << 20
	if n < hugePageThreshold {
		return b
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (huge - addr%huge) % huge
	end := start + (uintptr(n)-start)/huge*huge
	if start >= uintptr(n) || end <= start {
		return b
	}
	_ = syscall.Madvise(b[start:end], syscall.MADV_HUGEPAGE)
	return b
}
