//go:build !purego

package ribbon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestInlineHashEveryConstructor: Build, BuildKeys, Builder.Build,
// Decode and UnmarshalBinary leave f.k.ih = inlineHashOf(hasher) exactly
// when the kernel serves the filter (so the XXH3 filters of at most 8
// columns take containsKey's assembly path), and the zero value otherwise.
func TestInlineHashEveryConstructor(t *testing.T) {
	keys := make([][]byte, 3000)
	hashes := make([]uint64, len(keys))
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("constructor-key-%d", i))
	}
	var b Builder
	for _, h := range keyHashers {
		for i, k := range keys {
			hashes[i] = h.Sum64(k)
		}
		for _, fpr := range []float64{0.01, 1e-3} {
			p := Params{FPR: fpr, Hasher: h}
			var fs []*Filter
			add := func(f *Filter, err error) {
				if err != nil {
					t.Fatalf("%v fpr %g: %v", h, fpr, err)
				}
				fs = append(fs, f)
			}
			add(Build(hashes, p))
			add(BuildKeys(keys, p))
			add(b.Build(hashes, p))
			add(b.BuildKeys(keys, p))
			enc, err := fs[0].MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			add(Decode(enc, hashing.Want(h)))
			if h.Alg() != hashing.AlgSipHash {
				var u Filter
				add(&u, u.UnmarshalBinary(enc))
			}
			for i, f := range fs {
				want := inlineHash{}
				if f.simd {
					want = inlineHashOf(h)
				}
				if f.k.ih != want {
					t.Fatalf("%v fpr %g constructor %d: ih %+v, want %+v", h, fpr, i, f.k.ih, want)
				}
				if fast := haveAVX2 && fpr == 0.01 && h.Alg() == hashing.AlgXXH3; f.k.ih.XXH3 != fast {
					t.Fatalf("%v fpr %g constructor %d: assembly key path %v, want %v", h, fpr, i, f.k.ih.XXH3, fast)
				}
			}
		}
	}
}

// TestContainsKeyRandomLayouts drives containsKey through QUERY's
// fallback: small filters with random solution words whose lower/upper
// boundary is met by a large share of the rows (every column count the
// kernel serves, the boundary at several places), 16-32 and 4-8 byte
// keys, answers equal to ContainsHash(Sum64(key)).
func TestContainsKeyRandomLayouts(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: the assembly key path is not used")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for lower := 1; lower+1 <= 8; lower++ {
		for _, blocks := range []uint64{2, 3, 17} {
			for _, u := range []uint64{0, 1, blocks / 2, blocks} {
				l := layout{numBlocks: blocks, numStarts: blocks*128 - 127, lower: lower, upperStart: u}
				f := &Filter{l: l, data: newSolution(l.words()), seed: rng.Uint32(), hasher: hashing.XXH3(rng.Uint64())}
				for i := range f.data {
					f.data[i] = rng.Uint64()
				}
				f.setKernel()
				if !f.k.ih.XXH3 {
					t.Fatalf("lower %d, %d blocks: assembly key path not used", lower, blocks)
				}
				yes := 0
				for range 20000 {
					n := 16 + rng.IntN(17)
					if rng.IntN(4) == 0 {
						n = 4 + rng.IntN(5)
					}
					off := rng.IntN(len(buf) - n + 1)
					key := buf[off : off+n]
					want := f.ContainsHash(f.hasher.Sum64(key))
					if got := f.Contains(key); got != want {
						t.Fatalf("lower %d, %d blocks, upper %d: Contains(%x) = %v, want %v", lower, blocks, u, key, got, want)
					}
					if want {
						yes++
					}
				}
				if yes == 0 || yes == 20000 {
					t.Fatalf("lower %d, %d blocks: %d of 20000 present: the check decides nothing", lower, blocks, yes)
				}
			}
		}
	}
}
