//go:build linux

package hugepage

import (
	"syscall"
	"unsafe"
)

// madvCollapse is MADV_COLLAPSE (Linux 6.1), missing from package syscall.
const madvCollapse = 25

// Advise asks for huge pages for the pages of s's interior that are
// faulted in from now on (madvise MADV_HUGEPAGE; effective when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
// Call it on a freshly allocated array before writing it.
func Advise[E any](s []E, min uintptr) error {
	b, lo, hi, ok := interior(s, min)
	if !ok {
		return nil
	}
	return syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
}

// Collapse moves s's interior onto huge pages now (madvise MADV_COLLAPSE,
// Linux 6.1), keeping its contents. It is for memory already mapped with
// 4 KiB pages, which Advise cannot change: memory the Go allocator reuses
// (cleared by the runtime), or an array filled before it was advised. It
// costs about one copy of the interior; on memory not yet faulted in it
// fails at once (EINVAL) and Advise is what applies.
func Collapse[E any](s []E, min uintptr) error {
	b, lo, hi, ok := interior(s, min)
	if !ok {
		return nil
	}
	return syscall.Madvise(b[lo:hi], madvCollapse)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), missing from
// package syscall.
const madvPopulateWrite = 23

// Populate maps now, in one system call (madvise MADV_POPULATE_WRITE), the
// pages of s from its first page boundary on, when s is at least min
// bytes: for a freshly allocated array that is about to be written all
// over, instead of one page fault per 4 KiB page at the first writes. The
// contents do not change (mapped pages are left as they are, new ones are
// zero, as the allocator promised). An error (a kernel before 5.14) leaves
// the pages to be faulted in as before, so callers may ignore it.
func Populate[E any](s []E, min uintptr) error {
	var zero E
	size := uintptr(len(s)) * unsafe.Sizeof(zero)
	if size < min || size == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	page := uintptr(syscall.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start+page-1)&^(page-1) - start
	if lo >= size {
		return nil
	}
	return syscall.Madvise(b[lo:], madvPopulateWrite)
}
