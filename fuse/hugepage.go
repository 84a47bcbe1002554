package fuse

import "github.com/bloomery/bloomery/internal/hugepage"

// hugePageMin is the array size from which arrays are put on transparent
// huge pages (package internal/hugepage explains why). At 4 MiB a filter
// of 10^7 keys already gets most of its array on them.
const hugePageMin = 4 << 20

// adviseHugePages asks for huge pages for a large, freshly allocated (not
// yet written) fingerprint array. Failure is harmless and ignored.
func adviseHugePages[T Fingerprint](s []T) { _ = hugepage.Advise(s, hugePageMin) }

// collapseHugePages moves a large array that has just been filled onto
// huge pages now, for memory the allocator handed out already mapped with
// 4 KiB pages, which adviseHugePages cannot change. It costs about one copy
// of the array, once per build or decode.
func collapseHugePages[T Fingerprint](s []T) { _ = hugepage.Collapse(s, hugePageMin) }
