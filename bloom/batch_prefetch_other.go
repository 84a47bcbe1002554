//go:build !amd64 || purego

package bloom

import "unsafe"

// haveProbeAsm is false without the amd64 assembly: ContainsBatch runs
// its Go pipeline.
const haveProbeAsm = false

// haveAVX512 is false without the amd64 assembly.
const haveAVX512 = false

// containsBatchAsm is never called when haveProbeAsm is false.
func containsBatchAsm(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int) {
	panic("bloom: containsBatchAsm without the amd64 assembly")
}

// containsBatchAVX512 is never called when haveAVX512 is false.
func containsBatchAVX512(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int) {
	panic("bloom: containsBatchAVX512 without the amd64 assembly")
}
