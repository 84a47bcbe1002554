//go:build !amd64 || purego

package ribbon

// containsKey is (*Filter).Contains of the n bytes at p: always the Go
// path.
func containsKey(f *Filter, p *byte, n int) bool { return containsKeyGo(f, p, n) }

// kernel holds nothing without the amd64 assembly query.
type kernel struct{}

// setKernel leaves every filter on the portable query.
func (f *Filter) setKernel() { f.simd = false }

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
//
// Cost: one 64-bit remix (two multiplications) and four more, then the key's
// equation evaluated against about 3.2 cache lines of the solution, loaded
// together and without data-dependent branches (containsGeneric).
func (f *Filter) ContainsHash(h uint64) bool { return f.containsGeneric(h) }

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i; out
// must have len(out) >= len(hashes). It works in groups of keys, locating
// and prefetching the lines of a group before answering it
// (containsBatchGeneric). It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) { f.containsBatchGeneric(hashes, out) }
