//go:build !linux || purego

package ribbon

// adviseHugePages does nothing where transparent huge pages cannot be
// requested (see hugepage_linux.go).
func adviseHugePages([]uint64) {}

// collapseHugePages does nothing here (see hugepage_linux.go).
func collapseHugePages([]uint64) {}
