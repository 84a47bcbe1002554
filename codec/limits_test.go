package codec

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// TestHugeCapacityRefused: every dynamic family's constructor refuses
// math.MaxInt keys with an error wrapping ErrInvalidParams: no panic, no
// allocation. On 64-bit platforms the families' capacity and size limits
// refuse it; where int has 32 bits (make portable runs this as a 386
// binary) bloomery.MaxTableBytes does, as it does for 2^30 keys, whose
// tables pass 1 GiB there. (Planners may describe sizes this process
// could not allocate, so Plan is not checked.)
func TestHugeCapacityRefused(t *testing.T) {
	ns := []int{math.MaxInt}
	if bloomery.MaxTableBytes < 1<<40 {
		ns = append(ns, 1<<30)
	}
	dynamic := 0
	for _, fam := range Families() {
		if fam.New == nil {
			continue
		}
		dynamic++
		for _, n := range ns {
			if f, err := fam.New(n, 0.01, hashing.XXH3(0)); !errors.Is(err, bloomery.ErrInvalidParams) {
				t.Errorf("%v: New(%d keys) = %T, %v; want ErrInvalidParams", fam.Kind, n, f, err)
			}
		}
	}
	if dynamic < 5 {
		t.Fatalf("only %d dynamic families in the catalog", dynamic)
	}
}
