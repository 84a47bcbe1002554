//go:build !purego

package ribbon

import (
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// checkKernelUsed fails when the CPU has AVX2 but f, a filter the kernel
// serves, does not use it (the agreement tests would then compare the
// portable query with itself).
func checkKernelUsed(t *testing.T, f *Filter) {
	t.Helper()
	if haveAVX2 && !f.simd {
		t.Fatalf("AVX2 present, %d columns, but the filter does not use the kernel", f.l.lower)
	}
	g := roundTrip(t, f, hashing.Want(f.hasher))
	if g.simd != f.simd {
		t.Fatalf("decoded filter: kernel %v, built filter %v", g.simd, f.simd)
	}
}

// The assembly back-substitution and the portable one write the same
// solution, across column counts (groups of four and of fewer lanes,
// and the lower/upper column boundary).
func TestBacksubAsmMatchesGeneric(t *testing.T) {
	if !haveBacksubAsm {
		t.Skip("no POPCNT: the assembly back-substitution is not used")
	}
	var b Builder
	for _, fpr := range []float64{0.3, 0.1, 0.01, 0.004, 1e-3, 1e-5, 1e-9} {
		keys := filtertest.Hashes(30_000, 93)
		f := mustBuild(t, &b, keys, Params{FPR: fpr})
		// b's rows are those of f's successful attempt.
		generic := make([]uint64, len(f.data))
		b.backSubstituteGeneric(f.l, generic)
		asm := make([]uint64, len(f.data))
		b.backSubstituteAsm(f.l, asm)
		if !slices.Equal(asm, generic) || !slices.Equal(asm, f.data) {
			t.Fatalf("fpr %v (%d columns, upper from block %d of %d): solutions differ", fpr, f.l.lower, f.l.upperStart, f.l.numBlocks)
		}
	}
}
