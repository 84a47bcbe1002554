package xor

import "github.com/bloomery/bloomery/internal/hugepage"

// hugePageMin is the array size from which arrays are put on transparent
// huge pages (package internal/hugepage explains why).
const hugePageMin = 4 << 20

// adviseHugePages asks for huge pages for a large, freshly allocated (not
// yet written) fingerprint array. Failure is harmless and ignored.
func adviseHugePages(s []uint8) { _ = hugepage.Advise(s, hugePageMin) }

// adviseScratch is adviseHugePages for the Builder's large scratch arrays,
// whose cells construction updates all over.
func adviseScratch[E uint8 | uint64](s []E) { _ = hugepage.Advise(s, hugePageMin) }

// collapseHugePages moves a large array that has just been filled onto
// huge pages now, for memory already mapped with 4 KiB pages, which
// adviseHugePages cannot change.
func collapseHugePages(s []uint8) { _ = hugepage.Collapse(s, hugePageMin) }
