//go:build !purego

package bloom

import "testing"

// TestBlockedKeyPathsEveryKNoBMI runs TestBlockedKeyPathsEveryK's checks
// with haveProbeAsm off, as on a CPU without BMI1: the adds of k <= 7
// then take blockedSet's loop of BSETs instead of the straight BSETX run.
func TestBlockedKeyPathsEveryKNoBMI(t *testing.T) {
	if !haveProbeAsm {
		t.Skip("this CPU has no BMI1/BMI2: TestBlockedKeyPathsEveryK already runs the loop")
	}
	haveProbeAsm = false
	defer func() { haveProbeAsm = true }()
	checkBlockedKeyPathsEveryK(t)
}
