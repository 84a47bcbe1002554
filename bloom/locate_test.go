package bloom

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// TestBlockedLocateMatchesBlocked replays AddHash with BlockedLocate on a
// separate word array and requires the two arrays to be identical after
// every add, and ContainsHash to agree with a test of the located bits for
// present and absent hashes.
func TestBlockedLocateMatchesBlocked(t *testing.T) {
	for _, k := range []int{1, 6, 7, 8, 15, 32} {
		f, err := NewBlocked(Params{Capacity: 20000, BitsPerKey: 10, HashFuncs: k, Hasher: hashing.XXH3(7)})
		if err != nil {
			t.Fatal(err)
		}
		mirror := make([]uint64, f.Blocks()*8)
		h := hashing.XXH3(11)
		for i := range 20000 {
			x := h.Sum64([]byte{byte(i), byte(i >> 8), byte(i >> 16), 1})
			block, masks := BlockedLocate(x, f.Blocks(), k)
			wasNew := false
			for j, m := range masks {
				w := &mirror[block*8+uint64(j)]
				if m&^*w != 0 {
					wasNew = true
				}
				*w |= m
			}
			if got := f.AddHash(x); got != wasNew {
				t.Fatalf("k=%d add %d: AddHash new=%v, located bits new=%v", k, i, got, wasNew)
			}
			off := block * 8
			for j := range 8 {
				if f.words[off+uint64(j)] != mirror[off+uint64(j)] {
					t.Fatalf("k=%d add %d: word %d of block %d differs", k, i, j, block)
				}
			}
		}
		for i := range 200000 {
			x := h.Sum64([]byte{byte(i), byte(i >> 8), byte(i >> 16), 2})
			block, masks := BlockedLocate(x, f.Blocks(), k)
			want := true
			for j, m := range masks {
				if mirror[block*8+uint64(j)]&m != m {
					want = false
				}
			}
			if got := f.ContainsHash(x); got != want {
				t.Fatalf("k=%d probe %d: ContainsHash=%v, located bits=%v", k, i, got, want)
			}
		}
		for i := range mirror {
			if f.words[i] != mirror[i] {
				t.Fatalf("k=%d: word %d differs", k, i)
			}
		}
	}
}

func TestBlockedImageRoundTrip(t *testing.T) {
	f, err := NewBlocked(Params{Capacity: 5000, FPR: 0.01, Hasher: hashing.XXH3(3)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		f.AddString(string(rune(i)) + "key")
	}
	want, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	img := f.Image()
	g, err := NewBlockedFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("image round trip changed the encoding")
	}
	if g.FillRatio() != f.FillRatio() {
		t.Fatalf("fill %v, want %v", g.FillRatio(), f.FillRatio())
	}
	img.Words[0] ^= 1 // the image is a copy
	if f.words[0] == img.Words[0] {
		t.Fatal("Image shares the filter's words")
	}
	img.DesignFPR = 0 // recomputed from capacity: the same formula as NewBlocked
	if g, err = NewBlockedFromImage(img); err != nil || g.DesignFPR() != f.DesignFPR() {
		t.Fatalf("recomputed design FPR %v (err %v), want %v", g.DesignFPR(), err, f.DesignFPR())
	}
	for _, bad := range []BlockedImage{
		{Words: nil, K: 3, Capacity: 1},
		{Words: make([]uint64, 9), K: 3, Capacity: 1},
		{Words: make([]uint64, 8), K: 0, Capacity: 1},
		{Words: make([]uint64, 8), K: 33, Capacity: 1},
		{Words: make([]uint64, 8), K: 3, Capacity: 0},
		{Words: make([]uint64, 8), K: 3, Capacity: 1, Count: -1},
		{Words: make([]uint64, 8), K: 3, Capacity: 1, DesignFPR: 2},
	} {
		if _, err := NewBlockedFromImage(bad); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("image %+v: err %v, want ErrInvalidParams", bad, err)
		}
	}
}

func TestBlockedSizeMatchesNewBlocked(t *testing.T) {
	for _, p := range []Params{
		{Capacity: 1000, FPR: 0.01},
		{Capacity: 123457, FPR: 0.001},
		{Capacity: 5000, BitsPerKey: 12, HashFuncs: 5},
	} {
		blocks, k, err := BlockedSize(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewBlocked(p)
		if err != nil {
			t.Fatal(err)
		}
		if blocks != f.Blocks() || k != f.K() {
			t.Fatalf("%+v: BlockedSize %d blocks k=%d, NewBlocked %d blocks k=%d", p, blocks, k, f.Blocks(), f.K())
		}
	}
	if _, _, err := BlockedSize(Params{}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatalf("zero params: %v", err)
	}
}
