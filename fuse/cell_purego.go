//go:build purego

package fuse

// cell returns fps[i], bounds checked (see cell_unsafe.go).
func cell[T Fingerprint](fps []T, i uint64) T { return fps[i] }
