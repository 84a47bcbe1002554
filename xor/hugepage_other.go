//go:build !linux || purego

package xor

// adviseHugePages does nothing where transparent huge pages cannot be
// requested (see hugepage_linux.go).
func adviseHugePages(s []uint8) {}

// collapseHugePages does nothing here (see hugepage_linux.go).
func collapseHugePages(s []uint8) {}
