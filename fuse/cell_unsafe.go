//go:build !purego

package fuse

import "unsafe"

// cell returns fps[i] without a bounds check. Callers pass only the
// positions of a key in a non-empty filter, which the geometry keeps below
// len(fps) == geo.cells (see positions3 and positions4): h0 < span, and
// position j lies in the aligned segment after h0's j-th, below
// span+(arity-1)*segLen. Build and Decode establish len(fps) == geo.cells,
// Decode after checking the payload length against the decoded geometry.
// The three or four compare-and-branch pairs this saves are a tenth of a
// query's instructions.
func cell[T Fingerprint](fps []T, i uint64) T {
	return *(*T)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(fps)), uintptr(i)*unsafe.Sizeof(T(0))))
}
