package bloom

import (
	"testing"
	"unsafe"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// batchLoopFunc is the signature of the assembly batch loops.
type batchLoopFunc func(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int)

// batchLoop names an assembly batch loop.
type batchLoop struct {
	name string
	fn   batchLoopFunc
}

// batchLoops returns the assembly batch loops this CPU can run.
func batchLoops() []batchLoop {
	var ls []batchLoop
	if haveProbeAsm {
		ls = append(ls, batchLoop{"scalar", containsBatchAsm})
	}
	if haveAVX512 {
		ls = append(ls, batchLoop{"avx512", containsBatchAVX512})
	}
	return ls
}

// TestContainsBatchAsm checks each assembly batch loop directly against
// ContainsHash for every k it takes (1-7), at prefetch distances below,
// at and above the batch length (so the warm-up, the prefetching part and
// the tail without prefetches each run alone and together), on members
// and non-members, and that it writes nothing past out[n-1].
func TestContainsBatchAsm(t *testing.T) {
	if !haveProbeAsm {
		t.Skip("no assembly batch loop on this platform or CPU")
	}
	if !haveAVX512 {
		t.Log("AVX-512 unavailable (CPU, or GODEBUG=cpu.avx512f=off): only the scalar loop is tested")
	}
	for _, loop := range batchLoops() {
		t.Run(loop.name, func(t *testing.T) { testBatchLoop(t, loop.fn) })
	}
}

func testBatchLoop(t *testing.T, loop batchLoopFunc) {
	const n = 3000
	hs := filtertest.Hashes(n, 5)
	probes := append(filtertest.Hashes(2000, 6), hs[:2000]...)
	for k := 1; k <= 7; k++ {
		f, err := NewBlocked(Params{Capacity: n, BitsPerKey: 10, HashFuncs: k})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			f.AddHash(h)
		}
		want := make([]bool, len(probes))
		pos, neg := 0, 0
		for i, h := range probes {
			want[i] = f.ContainsHash(h)
			if want[i] {
				pos++
			} else {
				neg++
			}
		}
		if pos < 2000 || neg == 0 {
			t.Fatalf("k=%d: %d true and %d false answers: the comparison would not test both", k, pos, neg)
		}
		out := make([]bool, len(probes)+1)
		for _, l := range []int{1, 2, 7, 31, 32, 33, 63, 64, 65, 100, 1024, len(probes)} {
			for _, ahead := range []int{1, 5, 31, 32, 33, 63, asmBatchAhead, 65, 2000, 10000} {
				for start := 0; start+l <= len(probes); start += max(l, 997) {
					clear(out)
					out[l] = true
					loop(unsafe.Pointer(&f.words[0]), f.blocks, &probes[start], &out[0], l, k, ahead)
					for i := range l {
						if out[i] != want[start+i] {
							t.Fatalf("k=%d len %d ahead %d at %d: out[%d] = %v, ContainsHash %v", k, l, ahead, start, i, out[i], want[start+i])
						}
					}
					if !out[l] {
						t.Fatalf("k=%d len %d ahead %d: wrote past out[n-1]", k, l, ahead)
					}
				}
			}
		}
	}
}
