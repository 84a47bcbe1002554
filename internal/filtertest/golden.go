package filtertest

import (
	"math"
	"os"
	"runtime"
	"strconv"
)

// AlignDesignFPR is for golden tests that compare a filter built now with
// a golden file byte for byte. A recorded design FPR is computed from the
// filter's size with math.Exp, math.Log, math.Pow or math.Lgamma, whose
// last bit differs between platforms (amd64's assembly against the
// portable Go code, and fused multiply-adds on arm64 and s390x); the
// golden files are written on amd64. So, off amd64 only, when the value
// computed now (*now) is within 1e-12 of the golden one, AlignDesignFPR
// sets *now to it and reports true: the caller re-encodes and compares
// again, so every other byte (sizes, probe counts, hashes, bits) must
// still match exactly. On amd64 it does nothing and reports false.
func AlignDesignFPR(now *float64, golden float64) bool {
	if runtime.GOARCH == "amd64" || *now == golden {
		return false
	}
	if !(math.Abs(*now-golden) <= 1e-12*math.Abs(golden)) {
		return false
	}
	*now = golden
	return true
}

// EmulatorEnv names the environment variable that make's portable target
// sets when it runs the tests of another architecture under a user-mode
// emulator (qemu-s390x-static): see Emulated.
const EmulatorEnv = "BLOOMERY_EMULATOR"

// Emulated reports whether the tests run under a user-mode emulator. Such
// an emulator runs the test binary's code faithfully (byte order, word
// size, the portable code paths) but not what depends on the host kernel
// treating the process as native: it ignores huge-page advice, and a test
// cannot exec a binary built for the emulated architecture. The few tests
// of those skip themselves when Emulated is true; they run natively in
// the amd64 pass of make test.
func Emulated() bool { return os.Getenv(EmulatorEnv) != "" }

// SameAnswers reports whether two filters answer alike for n keys that
// were never added ("absent-0", "absent-1", ...): for golden tests that
// compare a filter built now with a golden one by behaviour.
func SameAnswers(a, b interface{ ContainsString(string) bool }, n int) bool {
	for i := range n {
		k := "absent-" + strconv.Itoa(i)
		if a.ContainsString(k) != b.ContainsString(k) {
			return false
		}
	}
	return true
}
