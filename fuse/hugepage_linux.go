//go:build linux && !purego

package fuse

import (
	"syscall"
	"unsafe"
)

// hugePageMin is the array size from which adviseHugePages asks for
// transparent huge pages. At 4 MiB an array spans 1024 small pages, half
// the second-level TLB of current x86 cores, and random reads already
// miss it often (an 11 MiB array, 10^7 keys, answered single queries about
// 12 % faster on huge pages); below, the 2 MiB-aligned interior that can
// be advised is too small a part of the array to matter.
const hugePageMin = 4 << 20

// adviseHugePages asks Linux to back the 2 MiB-aligned interior of a large,
// freshly allocated (not yet written) array with transparent huge pages
// (madvise MADV_HUGEPAGE; it has an effect when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
//
// Why: a query reads 3 or 4 random cells. With 4 KiB pages an array of
// 100 MiB spans 25 600 pages, far more than the TLB holds, so nearly every
// cell read also needs a page-table walk, and the few page walkers of a
// core, not DRAM, bound how many misses can be in flight. With 2 MiB pages
// the same array needs 50 TLB entries. Errors are ignored: the advice is an
// optimisation and the array works the same without it.
func adviseHugePages[T Fingerprint](s []T) { madviseInterior(s, syscall.MADV_HUGEPAGE) }

// adviseScratch is adviseHugePages for the Builder's scratch arrays (about
// 24 bytes per key): on huge pages a fresh array takes 512 times fewer
// page faults, and the cell updates, which stay within a few segments but
// jump between them, miss the TLB less.
func adviseScratch[E uint8 | uint32 | uint64](s []E) {
	if len(s) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(s[0]))
	madviseInterior(b, syscall.MADV_HUGEPAGE)
}

// madvCollapse is MADV_COLLAPSE (Linux 6.1), missing from package syscall.
const madvCollapse = 25

// collapseHugePages asks Linux to move the 2 MiB-aligned interior of a
// large array that has just been filled onto huge pages now (madvise
// MADV_COLLAPSE), for the case where the allocator handed out memory that
// was already mapped with 4 KiB pages, which adviseHugePages cannot
// change. It costs about one copy of the array, once per build or decode;
// older kernels refuse it and the array stays as it is.
func collapseHugePages[T Fingerprint](s []T) { madviseInterior(s, madvCollapse) }

func madviseInterior[T Fingerprint](s []T, advice int) {
	var zero T
	size := uintptr(len(s)) * unsafe.Sizeof(zero)
	if size < hugePageMin {
		return
	}
	const huge = 2 << 20
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start+huge-1)&^(huge-1) - start
	hi := (start+size)&^(huge-1) - start
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(b[lo:hi], advice)
}
