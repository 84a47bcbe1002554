package bloom

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery"
)

// The raw form is documented bit by bit: probe bit b of a key (layout 2:
// 64*Reduce(g, m/64) + g%64; layout 1: Reduce(g, m)) is bit b%8 of byte
// b/8.
func TestRawLayout(t *testing.T) {
	for _, layout := range []uint8{Layout1, Layout2} {
		f := newLayout(t, Params{Capacity: 1000, FPR: 0.01}, layout)
		key := []byte("layout")
		f.Add(key)
		raw := make([]byte, f.RawLen())
		if n := f.ReadRaw(raw, 0); n != len(raw) || uint64(n) != f.Bits()/8 {
			t.Fatalf("ReadRaw copied %d of %d bytes", n, len(raw))
		}
		want := make([]byte, len(raw))
		for _, b := range docStandardProbes(f.Hasher().Sum64(key), f.Bits(), f.K(), layout) {
			want[b/8] |= 1 << (b % 8)
		}
		if string(raw) != string(want) {
			t.Fatalf("layout %d: raw bytes differ from the documented probe positions", layout)
		}
	}
}

// Moving a filter through odd-sized raw chunks into an image-built filter
// reproduces every answer, the fill and the count.
func TestRawChunkRoundTrip(t *testing.T) {
	const n = 100000
	f, err := New(Params{Capacity: n, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.AddString(fmt.Sprint("k", i))
	}
	img := f.Image()
	img.Words = make([]uint64, len(img.Words)) // bits arrive by chunks
	g, err := NewFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	if g.FillRatio() != 0 || g.Len() != f.Len() {
		t.Fatalf("empty image: fill %v len %d", g.FillRatio(), g.Len())
	}
	buf := make([]byte, 1237) // not a multiple of 8: chunks straddle words
	for off := uint64(0); ; {
		c := f.ReadRaw(buf, off)
		if c == 0 {
			break
		}
		if err := g.WriteRaw(off, buf[:c]); err != nil {
			t.Fatal(err)
		}
		off += uint64(c)
	}
	if g.FillRatio() != f.FillRatio() || g.DesignFPR() != f.DesignFPR() || g.Bits() != f.Bits() || g.K() != f.K() {
		t.Fatalf("copy differs: fill %v/%v", g.FillRatio(), f.FillRatio())
	}
	for i := range n {
		if !g.ContainsString(fmt.Sprint("k", i)) {
			t.Fatalf("false negative for k%d after the raw copy", i)
		}
	}
	fp := 0
	for i := range 1000000 {
		k := fmt.Sprint("absent", i)
		a, b := f.ContainsString(k), g.ContainsString(k)
		if a != b {
			t.Fatalf("%s: original %v, copy %v", k, a, b)
		}
		if a {
			fp++
		}
	}
	if r := float64(fp) / 1e6; r < 0.01*0.85 || r > 0.01*1.15 {
		t.Fatalf("copy FPR %v, want 0.01±15%%", r)
	}
	// Overwriting with zeros clears the fill exactly.
	if err := g.WriteRaw(0, make([]byte, g.RawLen())); err != nil || g.FillRatio() != 0 {
		t.Fatalf("zeroed: fill %v err %v", g.FillRatio(), err)
	}
}

func TestRawBounds(t *testing.T) {
	f, _ := New(Params{Capacity: 10, BitsPerKey: 10})
	if f.ReadRaw(make([]byte, 4), f.RawLen()) != 0 {
		t.Fatal("read past the end copied bytes")
	}
	if n := f.ReadRaw(make([]byte, 100), f.RawLen()-3); n != 3 {
		t.Fatalf("read at the tail copied %d bytes, want 3", n)
	}
	for _, off := range []uint64{f.RawLen(), f.RawLen() - 1, ^uint64(0)} {
		if err := f.WriteRaw(off, []byte{1, 2}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if f.FillRatio() != 0 {
		t.Fatal("refused write changed the filter")
	}
}

func TestNewFromImageInvalid(t *testing.T) {
	ok := Image{Words: make([]uint64, 2), K: 3, Capacity: 10, Layout: Layout2}
	bad := []func(*Image){
		func(i *Image) { i.Layout = 0 },
		func(i *Image) { i.Layout = 3 },
		func(i *Image) { i.Words = nil },
		func(i *Image) { i.K = 0 },
		func(i *Image) { i.K = MaxHashFuncs + 1 },
		func(i *Image) { i.Capacity = 0 },
		func(i *Image) { i.Count = -1 },
		func(i *Image) { i.DesignFPR = 1.5 },
	}
	for n, mod := range bad {
		img := ok
		img.Words = make([]uint64, 2)
		mod(&img)
		if _, err := NewFromImage(img); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("case %d: %v", n, err)
		}
	}
	if _, err := NewFromImage(ok); err != nil {
		t.Fatal(err)
	}
}
