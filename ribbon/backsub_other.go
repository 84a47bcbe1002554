//go:build !amd64 || purego

package ribbon

// backSubstitute solves the banded system into data (see
// backSubstituteGeneric).
func (b *Builder) backSubstitute(l layout, data []uint64) { b.backSubstituteGeneric(l, data) }
