package hugepage

import (
	"testing"
	"unsafe"
)

// The interior is the largest 2 MiB-aligned byte range inside the array,
// and arrays below the threshold or without a whole huge page get none.
func TestInterior(t *testing.T) {
	if _, _, _, ok := interior(make([]uint64, 1<<10), 0); ok {
		t.Fatal("8 KiB array has a huge-page interior")
	}
	if _, _, _, ok := interior(make([]uint64, 1<<20), 16<<20); ok {
		t.Fatal("array below min advised")
	}
	s := make([]uint32, 5<<20/4+123)
	b, lo, hi, ok := interior(s, 1<<20)
	if !ok {
		t.Fatal("5 MiB array has no interior")
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	size := uintptr(len(s)) * 4
	if uintptr(len(b)) != size {
		t.Fatalf("byte view of %d bytes, want %d", len(b), size)
	}
	if (start+lo)%Huge != 0 || (start+hi)%Huge != 0 || lo >= Huge || size-hi >= Huge || hi > size {
		t.Fatalf("interior [%d, %d) of %d bytes at %#x is not the aligned interior", lo, hi, size, start)
	}
	if err := Advise(s, 1<<20); err != nil && Enabled() {
		t.Logf("MADV_HUGEPAGE: %v", err)
	}
}
