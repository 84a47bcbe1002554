//go:build !purego

package hashing

import "unsafe"

// stringBytes views s as a byte slice without copying. The hash functions
// only read their input, so the view is never written.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
