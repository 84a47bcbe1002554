package bloom

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// refContains is the blocked query written from the layout's definition
// (probeSeq over the raw little-endian bytes), independent of the
// optimised ContainsHash, ContainsBatch and BlockedMayContain.
func refContains(raw []byte, blocks uint64, k int, h uint64) bool {
	off := (h2block(h, blocks)) * 64
	ps := newProbeSeq(h)
	for range k {
		p := ps.next()
		w := binary.LittleEndian.Uint64(raw[off+(p>>6)*8:])
		if w>>(p&63)&1 == 0 {
			return false
		}
	}
	return true
}

// h2block is Reduce(h, blocks) spelled out: the high word of h*blocks.
func h2block(h, blocks uint64) uint64 {
	const mask = 1<<32 - 1
	hh, hl, bh, bl := h>>32, h&mask, blocks>>32, blocks&mask
	t := hh*bl + (hl*bl)>>32
	u := hl*bh + t&mask
	return hh*bh + t>>32 + u>>32
}

// TestBlockedQueryPaths: for every k from 1 to MaxHashFuncs, at loads from
// half to twice the capacity, ContainsHash (plain and concurrent),
// ContainsBatch (plain and concurrent, at batch lengths around the group
// and look-ahead boundaries) and BlockedMayContain answer exactly as the
// reference query on members and non-members, with no false negative.
func TestBlockedQueryPaths(t *testing.T) {
	const n = 4000
	lens := []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 1000, 5000}
	for k := 1; k <= MaxHashFuncs; k++ {
		fpK, negK := 0, 0
		for _, load := range []int{n / 2, n, 2 * n} {
			f, err := NewBlocked(Params{Capacity: n, BitsPerKey: 10, HashFuncs: k})
			if err != nil {
				t.Fatal(err)
			}
			members := filtertest.Hashes(load, uint64(100+k))
			f.AddBatch(members)
			img := f.Image()
			raw := make([]byte, 8*len(img.Words))
			for i, w := range img.Words {
				binary.LittleEndian.PutUint64(raw[8*i:], w)
			}
			probes := append(append([]uint64(nil), members...), filtertest.Hashes(20000, uint64(900+k))...)
			want := make([]bool, len(probes))
			fp := 0
			for i, h := range probes {
				want[i] = refContains(raw, f.Blocks(), k, h)
				if i < len(members) && !want[i] {
					t.Fatalf("k=%d: reference says member %d is absent", k, i)
				}
				if i >= len(members) && want[i] {
					fp++
				}
			}
			fpK += fp
			negK += len(probes) - len(members) - fp
			out := make([]bool, len(probes))
			for _, conc := range []bool{false, true} {
				f.SetConcurrent(conc)
				for i, h := range probes {
					if got := f.ContainsHash(h); got != want[i] {
						t.Fatalf("k=%d load %d concurrent=%v: ContainsHash(probe %d) = %v, reference %v", k, load, conc, i, got, want[i])
					}
					if got := BlockedMayContain(raw, f.Blocks(), k, h); got != want[i] {
						t.Fatalf("k=%d load %d: BlockedMayContain(probe %d) = %v, reference %v", k, load, i, got, want[i])
					}
				}
				for _, l := range lens {
					for start := 0; start+l <= len(probes); start += max(3*l, 1001) {
						clear(out)
						f.ContainsBatch(probes[start:start+l], out)
						for i := range l {
							if out[i] != want[start+i] {
								t.Fatalf("k=%d load %d concurrent=%v: ContainsBatch(len %d at %d)[%d] = %v, reference %v", k, load, conc, l, start, i, out[i], want[start+i])
							}
						}
					}
				}
			}
		}
		if fpK == 0 || negK == 0 {
			t.Fatalf("k=%d: %d false positives, %d true negatives: the comparison tests only one answer", k, fpK, negK)
		}
	}
}

// TestBlockedLineInBounds: ContainsHash and ContainsBatch index the array
// without bounds checks, relying on len(words) >= 8*blocks for every way
// a Blocked is made.
func TestBlockedLineInBounds(t *testing.T) {
	check := func(what string, f *Blocked) {
		t.Helper()
		if f.blocks == 0 || uint64(len(f.words)) < 8*f.blocks {
			t.Fatalf("%s: %d words for %d blocks", what, len(f.words), f.blocks)
		}
		// The last block is reachable: Reduce(^0, blocks) = blocks-1.
		if got := (uintptr(unsafe.Pointer(f.line(^uint64(0)))) - uintptr(unsafe.Pointer(&f.words[0]))) / 64; uint64(got) != f.blocks-1 {
			t.Fatalf("%s: line(^0) is block %d of %d", what, got, f.blocks)
		}
	}
	for _, n := range []int{1, 7, 1000, 123457} {
		f, err := NewBlocked(Params{Capacity: n, FPR: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		f.AddBatch(filtertest.Hashes(n, 3))
		check("NewBlocked", f)
		check("Clone", f.Clone())
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var g Blocked
		if err := g.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		check("UnmarshalBinary", &g)
		h, err := NewBlockedFromImage(f.Image())
		if err != nil {
			t.Fatal(err)
		}
		check("NewBlockedFromImage", h)
	}
}
