package fuse

import (
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestBatchPipelineEdges checks ContainsBatch against ContainsHash for
// every batch length up to past one full turn of the ring plus the
// look-ahead, so that each boundary of the pipeline (the first located
// groups, a partial last group, the ring wrapping) is crossed, on half
// present and half absent keys, for every fingerprint width and arity.
func TestBatchPipelineEdges(t *testing.T) {
	hs := filtertest.Hashes(20_000, 3)
	absent := filtertest.Hashes(2_000, 77)
	probes := make([]uint64, 0, 2*len(absent))
	for i, h := range absent {
		probes = append(probes, hs[i*7], h)
	}
	maxLen := batchRing + batchAhead + 2*batchGroup + 1
	out := make([]bool, len(probes)+1)
	for _, v := range variants {
		f, err := v.build(hs, Params{})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]bool, len(probes))
		for i, h := range probes {
			want[i] = f.ContainsHash(h)
		}
		lens := []int{len(probes) - 1, len(probes)}
		for c := 0; c <= maxLen; c++ {
			lens = append(lens, c)
		}
		for _, c := range lens {
			for off := range 3 { // the pipeline must not depend on where the batch starts
				if off+c > len(probes) {
					continue
				}
				out[c] = true
				f.ContainsBatch(probes[off:off+c], out)
				for i := range c {
					if out[i] != want[off+i] {
						t.Fatalf("%s: batch of %d from %d: out[%d] = %v, ContainsHash says %v", v.name, c, off, i, out[i], want[off+i])
					}
				}
				if !out[c] {
					t.Fatalf("%s: batch of %d wrote past len(hashes)", v.name, c)
				}
			}
		}
	}
}
