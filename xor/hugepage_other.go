//go:build !linux || purego

package xor

// adviseHugePages does nothing where transparent huge pages cannot be
// requested (see hugepage_linux.go).
func adviseHugePages(s []uint8) {}

// collapseHugePages does nothing here (see hugepage_linux.go).
func collapseHugePages(s []uint8) {}

// adviseScratch does nothing here (see hugepage_linux.go).
func adviseScratch[E uint8 | uint64](s []E) {}
