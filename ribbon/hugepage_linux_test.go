//go:build linux && !purego

package ribbon

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

// hugeKB returns the AnonHugePages figure (KiB) of the mapping of this
// process that contains addr, from /proc/self/smaps.
func hugeKB(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	inside := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			inside = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if inside && fields[0] == "AnonHugePages:" && len(fields) >= 2 {
			kb, _ := strconv.Atoi(fields[1])
			return kb
		}
	}
	t.Fatalf("no mapping contains %#x", addr)
	return 0
}

// A large solution ends up on huge pages the way Build and Decode make it
// (newSolution, fill, collapseHugePages), also when the memory was mapped
// with small pages before (written first, as reused heap memory is), and
// keeps its contents.
func TestHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off on this machine")
	}
	const huge = 2 << 20
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
		if err := madviseInterior(s, madvCollapse); err != nil {
			if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) {
				t.Skipf("MADV_COLLAPSE unavailable or no huge pages free: %v", err)
			}
			t.Fatalf("MADV_COLLAPSE: %v", err)
		}
		// The 2 MiB-aligned interior of 24 MiB is at least 22 MiB.
		if kb := hugeKB(t, addr); kb < 22<<10 {
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
