//go:build !purego

package ribbon

import (
	"testing"

	"github.com/bloomery/bloomery/hashing"
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
