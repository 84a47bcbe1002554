//go:build linux

package hugepage

import "syscall"

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
