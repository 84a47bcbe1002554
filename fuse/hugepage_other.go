//go:build !linux || purego

package fuse

// adviseHugePages does nothing where transparent huge pages cannot be
// requested (see hugepage_linux.go).
func adviseHugePages[T Fingerprint](s []T) {}

// collapseHugePages does nothing here (see hugepage_linux.go).
func collapseHugePages[T Fingerprint](s []T) {}

// adviseScratch does nothing here (see hugepage_linux.go).
func adviseScratch[E uint8 | uint32 | uint64](s []E) {}
