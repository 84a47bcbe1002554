package ribbon

import "github.com/bloomery/bloomery/internal/hugepage"

// hugePageMin is the solution size from which it is put on transparent
// huge pages (package internal/hugepage explains why).
const hugePageMin = 8 << 20

// adviseHugePages asks for huge pages for a large, freshly allocated (not
// yet written) solution. Failure is harmless and ignored.
func adviseHugePages(s []uint64) { _ = hugepage.Advise(s, hugePageMin) }

// collapseHugePages moves a large solution that has just been filled onto
// huge pages now, for memory already mapped with 4 KiB pages, which
// adviseHugePages cannot change.
func collapseHugePages(s []uint64) { _ = hugepage.Collapse(s, hugePageMin) }
