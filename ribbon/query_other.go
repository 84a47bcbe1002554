//go:build !amd64 || purego

package ribbon

// kernel holds nothing without the amd64 assembly query.
type kernel struct{}

// setKernel leaves every filter on the portable query.
func (f *Filter) setKernel() { f.simd = false }

// ContainsHash reports whether a key with hash h (from the filter's
// hasher) may be in the set. It does not allocate.
//
// Cost: one 64-bit remix and five multiplications, then the key's
// equation evaluated against 2 to 5 cache lines of the solution, loaded
// together and without data-dependent branches (containsGeneric).
func (f *Filter) ContainsHash(h uint64) bool { return f.containsGeneric(h) }
