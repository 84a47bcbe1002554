//go:build linux && !purego

package ribbon

import (
	"syscall"
	"unsafe"
)

// hugePageMin is the solution size from which the solution is put on
// transparent huge pages.
const hugePageMin = 8 << 20

// madvCollapse is MADV_COLLAPSE (Linux 6.1), missing from package syscall.
const madvCollapse = 25

// adviseHugePages asks Linux to back the 2 MiB-aligned interior of a large
// solution that has just been allocated (and not yet written) with
// transparent huge pages (madvise MADV_HUGEPAGE; effective when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
//
// Why: a query reads three or four cache lines at a random place. With 4 KiB
// pages a solution of 10 MB spans 2 400 pages, more than the second-level
// TLB covers, so most queries also walk the page table; with 2 MiB pages
// it needs five TLB entries. Errors are ignored: the advice is an
// optimisation and the solution works the same without it.
func adviseHugePages(s []uint64) { _ = madviseInterior(s, syscall.MADV_HUGEPAGE) }

// collapseHugePages asks Linux to move the 2 MiB-aligned interior of a
// solution that has just been filled onto huge pages now (MADV_COLLAPSE),
// for memory the allocator handed out already mapped with 4 KiB pages,
// which adviseHugePages cannot change. It costs about one copy, once per
// build or decode; older kernels refuse it and nothing changes.
func collapseHugePages(s []uint64) { _ = madviseInterior(s, madvCollapse) }

// madviseInterior applies advice to the 2 MiB-aligned interior of s when
// s is at least hugePageMin bytes, and returns madvise's error.
func madviseInterior(s []uint64, advice int) error {
	size := uintptr(len(s)) * 8
	if size < hugePageMin {
		return nil
	}
	const huge = 2 << 20
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start+huge-1)&^(huge-1) - start
	hi := (start+size)&^(huge-1) - start
	if hi <= lo {
		return nil
	}
	return syscall.Madvise(b[lo:hi], advice)
}
