//go:build linux && !purego

package ribbon

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/hugepage"
)

// A large solution ends up on huge pages the way Build and Decode make it
// (newSolution, fill, collapseHugePages), also when the memory was mapped
// with small pages before (written first, as reused heap memory is), and
// keeps its contents.
func TestHugePages(t *testing.T) {
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator, which ignores huge-page advice")
	}
	if !hugepage.Enabled() {
		t.Skip("transparent huge pages are off on this machine")
	}
	const huge = hugepage.Huge
	for _, prefault := range []bool{false, true} {
		s := newSolution(24 << 20 / 8)
		if prefault {
			for i := range s {
				s[i] = 1 // every page mapped small, then refilled below
			}
		}
		for i := range s {
			s[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		addr := (uintptr(unsafe.Pointer(unsafe.SliceData(s))) + huge - 1) &^ (huge - 1)
		if err := hugepage.Collapse(s, hugePageMin); err != nil {
			if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) {
				t.Skipf("MADV_COLLAPSE unavailable or no huge pages free: %v", err)
			}
			t.Fatalf("MADV_COLLAPSE: %v", err)
		}
		// The 2 MiB-aligned interior of 24 MiB is at least 22 MiB.
		kb, err := hugepage.AnonHugeKB(addr)
		if err != nil {
			t.Fatal(err)
		}
		if kb < 22<<10 {
			t.Fatalf("prefault %v: %d KiB on huge pages, want >= %d", prefault, kb, 22<<10)
		}
		for i := range s {
			if s[i] != uint64(i)*0x9e3779b97f4a7c15 {
				t.Fatalf("word %d changed", i)
			}
		}
		runtime.KeepAlive(s)
	}
}
