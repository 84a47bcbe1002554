package bloom

import (
	"bufio"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// anonHugeKB returns the AnonHugePages figure, in KiB, of the mapping of
// this process that contains addr.
func anonHugeKB(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "AnonHugePages:" {
			kb, _ := strconv.Atoi(fields[1])
			return kb
		}
	}
	t.Fatalf("no mapping contains %#x", addr)
	return 0
}

// TestHugePagesReusedMemory checks the case MADV_HUGEPAGE alone cannot
// handle: an array whose pages are already mapped small (written before,
// as memory the Go allocator reuses is) ends up on huge pages after
// adviseHugePages, through MADV_COLLAPSE.
func TestHugePagesReusedMemory(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off on this machine")
	}
	w := make([]uint64, 64<<20/8)
	for i := range w {
		w[i] = uint64(i) // fault every page in as a small page
	}
	// madvise splits the mapping at the advised range, so look at the
	// mapping that holds the array's first 2 MiB-aligned address.
	const huge = 2 << 20
	addr := (uintptr(unsafe.Pointer(unsafe.SliceData(w))) + huge - 1) &^ (huge - 1)
	before := anonHugeKB(t, addr)
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
	after := anonHugeKB(t, addr)
	t.Logf("AnonHugePages %d -> %d KiB", before, after)
	// The 2 MiB-aligned interior of 64 MiB is at least 62 MiB.
	if after-before < 62<<10 {
		t.Fatalf("AnonHugePages of the mapping grew by %d KiB, want >= %d", after-before, 62<<10)
	}
	for i := range w {
		if w[i] != uint64(i) {
			t.Fatalf("word %d changed by the collapse: %d", i, w[i])
		}
	}
	runtime.KeepAlive(w)
}
