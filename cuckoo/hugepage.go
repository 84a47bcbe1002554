package cuckoo

import "github.com/bloomery/bloomery/internal/hugepage"

// hugePageThreshold is the table size from which the table is backed by
// transparent huge pages where the kernel allows it.
const hugePageThreshold = 8 << 20

// newTable allocates a zeroed table of n bytes, advised onto huge pages
// when large (package internal/hugepage explains why; failure is
// harmless and ignored).
func newTable(n uint64) []byte {
	b := make([]byte, n)
	_ = hugepage.Advise(b, hugePageThreshold)
	return b
}
