//go:build !purego

package ribbon

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// checkKernelUsed fails when the CPU has AVX2 but f, a filter the kernel
// serves, does not use it (the agreement tests would then compare the
// portable query with itself).
func checkKernelUsed(t *testing.T, f *Filter) {
	t.Helper()
	if haveAVX2 && !f.simd {
		t.Fatalf("AVX2 present, %d columns, but the filter does not use the kernel", f.l.lower)
	}
	g := roundTrip(t, f, hashing.Want(f.hasher))
	if g.simd != f.simd {
		t.Fatalf("decoded filter: kernel %v, built filter %v", g.simd, f.simd)
	}
}

// The assembly back-substitution and the portable one write the same
// solution, and the filter stores it converted to quarter-major, across
// column counts (groups of four and of fewer lanes,
// and the lower/upper column boundary).
func TestBacksubAsmMatchesGeneric(t *testing.T) {
	if !haveBacksubAsm {
		t.Skip("no POPCNT: the assembly back-substitution is not used")
	}
	var b Builder
	for _, fpr := range []float64{0.3, 0.1, 0.01, 0.004, 1e-3, 1e-5, 1e-9} {
		keys := filtertest.Hashes(30_000, 93)
		f := mustBuild(t, &b, keys, Params{FPR: fpr})
		// b's rows are those of f's successful attempt.
		generic := make([]uint64, len(f.data))
		b.backSubstituteGeneric(f.l, generic)
		asm := make([]uint64, len(f.data))
		b.backSubstituteAsm(f.l, asm)
		// Both write half-major; the filter stores quarter-major.
		stored := slices.Clone(asm)
		toQuarterMajor(&f.l, stored)
		if !slices.Equal(asm, generic) || !slices.Equal(stored, f.data) {
			t.Fatalf("fpr %v (%d columns, upper from block %d of %d): solutions differ", fpr, f.l.lower, f.l.upperStart, f.l.numBlocks)
		}
	}
}

// The two-lane banding kernel and the portable loop agree on every seed
// of tight layouts, where equations vanish (consistently or not) and
// seeds fail: same verdict and, when consistent, the same solution. With
// duplicates both stop at a copy (which one they meet first may differ).
func TestBandLanesMatchesGeneric(t *testing.T) {
	defer func() { useBandLanes = true }()
	var b Builder
	copied, failed, solved := 0, 0, 0
	for _, withDups := range []bool{false, true} {
		for _, c := range []struct {
			n     int
			slots uint64
			fpr   float64
		}{{3000, 3072, 0.01}, {3000, 3200, 0.01}, {20000, 20480, 0.01}, {5000, 5120, 1e-6}, {2, 256, 0.3}, {3, 256, 0.3}} {
			keys := filtertest.Hashes(c.n, 96)
			if withDups {
				keys = append(keys, keys[:c.n/10+1]...)
			}
			l := newLayout(c.slots, c.fpr)
			for seed := range uint32(20) {
				var sol [2][]uint64
				var ok, copies [2]bool
				for j, lanes := range []bool{true, false} {
					useBandLanes = lanes
					b.bucketKeys(keys, seed)
					poison(&b)
					ok[j], copies[j] = b.band(l, true)
					if ok[j] {
						sol[j] = make([]uint64, l.words())
						b.backSubstituteGeneric(l, sol[j])
					}
				}
				if withDups {
					if ok[0] || ok[1] {
						t.Fatalf("n=%d slots=%d seed %d: banding with duplicates did not stop (ok %v)", c.n, c.slots, seed, ok)
					}
					if copies[0] && copies[1] {
						copied++
					}
					continue
				}
				if ok[0] != ok[1] || copies[0] || copies[1] || (ok[0] && !slices.Equal(sol[0], sol[1])) {
					t.Fatalf("n=%d slots=%d seed %d: lanes ok=%v copies=%v, generic ok=%v copies=%v, solutions equal %v",
						c.n, c.slots, seed, ok[0], copies[0], ok[1], copies[1], slices.Equal(sol[0], sol[1]))
				}
				if ok[0] {
					solved++
				} else {
					failed++
				}
			}
		}
	}
	if failed == 0 || copied == 0 || solved == 0 {
		t.Errorf("%d failed, %d stopped at copies, %d solved: a path was not compared", failed, copied, solved)
	}
}

// ContainsHash dispatches in the assembly: filters the kernel serves are
// evaluated there, the others (and any filter whose kernel is switched
// off, as on a CPU without AVX2) tail-jump to queryGeneric. Both
// routes answer like the reference query on 10^5 members and 10^5
// non-members at every column count a filter can have.
func TestContainsHashDispatchMatchesReference(t *testing.T) {
	var b Builder
	keys := filtertest.Hashes(100_000, 41)
	absent := filtertest.Hashes(100_000, 42)
	kernelServed := 0
	for c := 1; c < maxCols; c++ {
		// Between 2^-(c+1) and 2^-c: lower columns c, some blocks c+1.
		f := mustBuild(t, &b, keys, Params{FPR: 0.75 * math.Ldexp(1, -c)})
		if f.l.lower != c {
			t.Fatalf("FPR %v: %d lower columns, want %d", f.target, f.l.lower, c)
		}
		if f.l.lower+1 <= 8 {
			checkKernelUsed(t, f)
		}
		if f.k.avx2 != f.simd {
			t.Fatalf("%d columns: kernel.avx2 %v, simd %v", c, f.k.avx2, f.simd)
		}
		if f.simd {
			kernelServed++
		}
		off := *f
		off.k.avx2 = false
		for _, probes := range [][]uint64{keys, absent} {
			for _, h := range probes {
				want := refContains(f, h)
				if got := f.ContainsHash(h); got != want {
					t.Fatalf("%d columns (kernel %v): ContainsHash(%#x) = %v, reference %v", c, f.simd, h, got, want)
				}
				if got := off.ContainsHash(h); got != want {
					t.Fatalf("%d columns, kernel off: ContainsHash(%#x) = %v, reference %v", c, h, got, want)
				}
			}
		}
	}
	if haveAVX2 && kernelServed == 0 {
		t.Fatal("no filter used the kernel")
	}
	var empty Filter
	empty.setKernel()
	if empty.ContainsHash(1) {
		t.Fatal("the empty filter contains a key")
	}
}

// The kernel agrees with queryGeneric on filters whose layout is chosen
// directly and whose solution words are random (so every column, the
// block's extra one included, decides answers): every column count the
// kernel serves, the upper start at 0, 1, in the middle, next to the end
// and at the end (the halves g = 2U-1 and 2U, where one query meets
// blocks with different column counts), and small and large filters.
// 2·10^5 probes per layout, half of them with starts near the boundary;
// ContainsBatch over the same probes gives the same answers.
func TestKernelMatchesGenericRandomLayouts(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: the kernel is not used")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for lower := 1; lower+1 <= 8; lower++ {
		for _, blocks := range []uint64{2, 3, 17, 1000} {
			for _, u := range []uint64{0, 1, blocks / 2, blocks - 1, blocks} {
				l := layout{numBlocks: blocks, numStarts: blocks*128 - 127, lower: lower, upperStart: u}
				f := &Filter{l: l, data: newSolution(l.words()), seed: rng.Uint32()}
				for i := range f.data {
					f.data[i] = rng.Uint64()
				}
				f.setKernel()
				if !f.simd {
					t.Fatalf("lower %d, %d blocks: kernel not used", lower, blocks)
				}
				off := *f
				off.k.avx2 = false
				agree, yes := 0, 0
				probes, answers := make([]uint64, 0, 200_000), make([]bool, 0, 200_000)
				for i := range 200_000 {
					h := rng.Uint64()
					if i&1 == 1 && u > 0 {
						// A hash whose start falls within a block of the boundary:
						// invert Reduce and the remix by search would be slow, so
						// draw until the start is near (cheap for few blocks, and
						// for 1000 blocks accept a wider band).
						for range 64 {
							s := hashing.Reduce(remix(h, f.seed), l.numStarts)
							if d := int64(s>>7) - int64(u); d >= -2 && d <= 1 {
								break
							}
							h = rng.Uint64()
						}
					}
					got, want := f.ContainsHash(h), off.ContainsHash(h)
					if got != want {
						t.Fatalf("lower %d, %d blocks, upper start %d: hash %#x: kernel %v, generic %v", lower, blocks, u, h, got, want)
					}
					agree++
					if got {
						yes++
					}
					probes, answers = append(probes, h), append(answers, got)
				}
				// The batch kernel stops at rows that meet both column
				// counts and resumes after them: same answers.
				out := make([]bool, len(probes))
				f.ContainsBatch(probes, out)
				for i := range out {
					if out[i] != answers[i] {
						t.Fatalf("lower %d, %d blocks, upper start %d: ContainsBatch[%d] (hash %#x) = %v, ContainsHash %v", lower, blocks, u, i, probes[i], out[i], answers[i])
					}
				}
				// Random words: each column matches with probability 1/2.
				if yes == 0 || yes == agree {
					t.Fatalf("lower %d, %d blocks, upper %d: %d of %d probes true: the comparison did not test both answers", lower, blocks, u, yes, agree)
				}
			}
		}
	}
}
