package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// AnonHugeKB returns the AnonHugePages figure, in KiB, of the mapping of
// this process that contains addr, read from /proc/self/smaps (Linux).
// Tests use it to check that an array really is on huge pages. madvise
// splits a mapping at the advised range, so pass an address inside the
// array's aligned interior.
func AnonHugeKB(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
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
			return strconv.Atoi(fields[1])
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("hugepage: no mapping contains %#x", addr)
}

// Enabled reports whether transparent huge pages can be used on this
// machine ("always" or "madvise" in /sys/kernel/mm/transparent_hugepage/enabled).
func Enabled() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !strings.Contains(string(mode), "[never]")
}
