//go:build !linux || purego

package fuse

// populate does nothing here: the pages of scratch arrays are faulted in
// as they are first written.
func populate[E uint8 | uint32 | uint64](s []E) {}
