//go:build !purego

package bloom

import "golang.org/x/sys/cpu"

// haveMULX reports whether the probe routines of containsKey and
// containsHash may run: they use MULX (BMI2).
var haveMULX = cpu.X86.HasBMI2

// addHash is (*Filter).AddHash in assembly (filter_add_amd64.s); it does
// exactly what addHashGo does.
//
//go:noescape
func addHash(f *Filter, h uint64) bool

// addKey is (*Filter).Add of the n bytes at p: when f.inlineXXH3 and
// 4 <= n <= 128 it hashes them with XXH3 and sets the probes in one leaf
// function (filter_add_amd64.s), otherwise it tail-jumps to addKeyGo.
//
//go:noescape
func addKey(f *Filter, p *byte, n int) bool

// containsKey is (*Filter).Contains of the n bytes at p, as addKey: the
// hash and the probe loop in one leaf function, or containsKeyGo.
//
//go:noescape
func containsKey(f *Filter, p *byte, n int) bool

// containsHash is (*Filter).ContainsHash in assembly: the probes of
// containsKey without the hash (filter_add_amd64.s), or containsHashGo.
// The unused third argument places the result where containsKey's is.
//
//go:noescape
func containsHash(f *Filter, h uint64, _ uintptr) bool

// keyHash is the assembly XXH3 on its own with f's hasher, for tests: ok
// is false for the lengths the assembly leaves to the Go path.
//
//go:noescape
func keyHash(f *Filter, p *byte, n int) (h uint64, ok bool)
