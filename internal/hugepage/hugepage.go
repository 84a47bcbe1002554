// Package hugepage asks the operating system to back large filter arrays
// with transparent huge pages (2 MiB on x86-64 Linux).
// It also holds Populate, which maps a fresh array's pages in one call
// before construction writes all over it.
//
// Why: a query of a large filter reads a few random cells. With 4 KiB
// pages an array of 100 MiB spans 25 600 pages, far more than the TLB
// holds, so nearly every read also walks the page table, and the core's
// few page walkers, not DRAM, bound how many misses are in flight. With
// 2 MiB pages the same array needs 50 TLB entries.
//
// Only the 2 MiB-aligned interior of an array can be on huge pages, and
// only arrays of at least min bytes are advised (callers pass their own
// threshold). The calls change the kernel's paging policy for memory the
// array owns and nothing else: an error (old kernel, THP off, no free
// huge pages) leaves the array working exactly as before, so callers may
// ignore it. Elsewhere than Linux every function does nothing.
package hugepage

import "unsafe"

// Huge is the huge-page size the interior is aligned to.
const Huge = 2 << 20

// interior returns s as bytes, and the byte range [lo, hi) of its 2 MiB
// aligned interior; ok is false when s is smaller than min or has no whole
// huge page inside.
func interior[E any](s []E, min uintptr) (b []byte, lo, hi uintptr, ok bool) {
	var zero E
	size := uintptr(len(s)) * unsafe.Sizeof(zero)
	if size < min || size == 0 {
		return nil, 0, 0, false
	}
	b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo = (start+Huge-1)&^(Huge-1) - start
	hi = (start+size)&^(Huge-1) - start
	if hi <= lo || lo >= size {
		return nil, 0, 0, false
	}
	return b, lo, hi, true
}
