package bloom

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/hugepage"
)

// TestHugePagesReusedMemory checks the case MADV_HUGEPAGE alone cannot
// handle: an array whose pages are already mapped small (written before,
// as memory the Go allocator reuses is) ends up on huge pages after
// adviseHugePages, through MADV_COLLAPSE.
func TestHugePagesReusedMemory(t *testing.T) {
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator, which ignores huge-page advice")
	}
	if !hugepage.Enabled() {
		t.Skip("transparent huge pages are off on this machine")
	}
	w := make([]uint64, 64<<20/8)
	for i := range w {
		w[i] = uint64(i) // fault every page in as a small page
	}
	// madvise splits the mapping at the advised range, so look at the
	// mapping that holds the array's first 2 MiB-aligned address.
	const huge = hugepage.Huge
	addr := (uintptr(unsafe.Pointer(unsafe.SliceData(w))) + huge - 1) &^ (huge - 1)
	before, err := hugepage.AnonHugeKB(addr)
	if err != nil {
		t.Fatal(err)
	}
	advise, collapse := hugePages(w)
	if advise != nil {
		t.Fatalf("MADV_HUGEPAGE: %v", advise)
	}
	if collapse != nil {
		if errors.Is(collapse, syscall.EINVAL) || errors.Is(collapse, syscall.EAGAIN) || errors.Is(collapse, syscall.ENOMEM) {
			t.Skipf("MADV_COLLAPSE not available or no huge pages free now: %v", collapse)
		}
		t.Fatalf("MADV_COLLAPSE: %v", collapse)
	}
	after, err := hugepage.AnonHugeKB(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AnonHugePages %d -> %d KiB", before, after)
	// The 2 MiB-aligned interior of 64 MiB is at least 62 MiB. Only the
	// count after is compared: madvise split the mapping at the advised
	// range, so "after" counts the array's pages alone, while "before"
	// may count other huge pages of a larger heap mapping (6 MiB of them
	// in one 386 run), or the array's own when its memory was collapsed
	// by an earlier run (-count=3).
	if after < 62<<10 {
		t.Fatalf("AnonHugePages of the array's mapping is %d KiB after the collapse, want >= %d", after, 62<<10)
	}
	for i := range w {
		if w[i] != uint64(i) {
			t.Fatalf("word %d changed by the collapse: %d", i, w[i])
		}
	}
	runtime.KeepAlive(w)
}
