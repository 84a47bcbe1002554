package bloom

import "github.com/bloomery/bloomery/internal/hugepage"

// hugePageThreshold is the bit-array size from which the array is backed
// by transparent huge pages where the kernel allows it.
const hugePageThreshold = 8 << 20

// adviseHugePages puts a large, just allocated bit array on huge pages
// (package internal/hugepage explains why): MADV_HUGEPAGE for pages
// faulted in later, then MADV_COLLAPSE for memory the Go allocator reused
// and had already mapped with 4 KiB pages, which the advice alone would
// not change. Failure is harmless and ignored.
func adviseHugePages(words []uint64) { _, _ = hugePages(words) }

// hugePages does the work of adviseHugePages and returns the errors of its
// two calls (tests use them).
func hugePages(words []uint64) (advise, collapse error) {
	return hugepage.Advise(words, hugePageThreshold), hugepage.Collapse(words, hugePageThreshold)
}
