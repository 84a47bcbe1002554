package ribbon

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// unremix inverts remixRef: x ^= x>>32 undoes itself, and the odd
// multiplier has an inverse modulo 2^64.
func unremix(x, step uint64) uint64 {
	const m = 0xd6e8feb86659fd93
	inv := uint64(m) // Newton's iteration doubles the correct low bits.
	for range 6 {
		inv *= 2 - m*inv
	}
	x ^= x >> 32
	x *= inv
	x ^= x >> 32
	x *= inv
	x ^= x >> 32
	return x ^ step*0x9e3779b97f4a7c15
}

// hashAtStart returns a key hash whose row starts at slot s of f, with
// other bits of the remixed hash drawn from rng.
func hashAtStart(f *Filter, s uint64, rng *rand.Rand) uint64 {
	n := f.l.numStarts
	q, rem := bits.Div64(s, 0, n) // s·2^64 / n
	if rem != 0 {
		q++
	}
	width := ^uint64(0)/n - 1 // every x in [q, q+width] has start s
	x := q + rng.Uint64N(width)
	h := unremix(x, uint64(f.seed)+1)
	if got := remixRef(h, uint64(f.seed)+1); got != x {
		panic("unremix")
	}
	return h
}

// Every query path (ContainsHash with the assembly kernel where the CPU
// has it, the portable containsGeneric, ContainsBatch) agrees with the
// plain definition for keys starting at every slot of small filters (both
// halves of every block, offset 0 of the last block, whose next block does
// not exist, and both sides of the lower/upper boundary), for every column
// count the kernel serves and two it does not, and on 10^6 random probes
// of a 1% filter.
func TestQueryPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b Builder
	check := func(f *Filter, probes []uint64, what string) {
		t.Helper()
		out := make([]bool, len(probes))
		f.ContainsBatch(probes, out)
		for i, h := range probes {
			want := refContains(f, h)
			if got := f.ContainsHash(h); got != want {
				t.Fatalf("%s: ContainsHash(%#x) = %v, reference %v", what, h, got, want)
			}
			if got := f.containsGeneric(h); got != want {
				t.Fatalf("%s: containsGeneric(%#x) = %v, reference %v", what, h, got, want)
			}
			if out[i] != want {
				t.Fatalf("%s: ContainsBatch[%d] = %v, reference %v", what, i, out[i], want)
			}
		}
	}
	yes := 0
	for _, fpr := range []float64{0.5, 0.3, 0.1, 0.03, 0.01, 0.006, 0.004, 0.002, 1e-4} {
		for _, n := range []int{1, 200, 3000} {
			keys := filtertest.Hashes(n, uint64(n)+7)
			f := mustBuild(t, &b, keys, Params{FPR: fpr})
			var probes []uint64
			for s := uint64(0); s < f.l.numStarts; s++ {
				for range 4 {
					probes = append(probes, hashAtStart(f, s, rng))
				}
			}
			probes = append(probes, keys...)
			check(f, probes, "exhaustive starts")
			for _, h := range probes {
				if f.ContainsHash(h) {
					yes++
				}
			}
		}
	}
	if yes == 0 {
		t.Fatal("no probe was a (false) positive: the comparison tested nothing")
	}
	keys := filtertest.Hashes(200_000, 8)
	f := mustBuild(t, &b, keys, Params{FPR: 0.01})
	probes := append(filtertest.Hashes(1_000_000, 9), keys...)
	check(f, probes, "1% filter")
	checkKernelUsed(t, f)
}
