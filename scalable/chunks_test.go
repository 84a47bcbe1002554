package scalable

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery"
)

// A chain rebuilt from its shapes and its raw bytes, moved in chunks that
// never cross a link, answers every key as the original and keeps growing
// exactly as it would have.
func TestShapesRawRoundTrip(t *testing.T) {
	p := Params{InitialCapacity: 1000, FPR: 0.01, Sizing: SizingRedis}
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100000
	for i := range n {
		f.AddString(fmt.Sprint("k", i))
	}
	if _, err := NewFromShapes(p, f.Shapes(), f.RawLen()-1); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("byte limit not enforced: %v", err)
	}
	g, err := NewFromShapes(p, f.Shapes(), f.RawLen())
	if err != nil {
		t.Fatal(err)
	}
	if g.RawLen() != f.RawLen() || g.Len() != f.Len() || g.Cap() != f.Cap() || g.NumLinks() != f.NumLinks() {
		t.Fatal("rebuilt chain has another shape")
	}
	// Link boundaries: ReadRaw stops at each.
	ends := map[uint64]bool{}
	var acc uint64
	for _, s := range f.Shapes() {
		acc += s.Bits / 8
		ends[acc] = true
	}
	buf := make([]byte, 4099)
	for off := uint64(0); ; {
		c := f.ReadRaw(buf, off)
		if c == 0 {
			break
		}
		if c < len(buf) && !ends[off+uint64(c)] {
			t.Fatalf("short chunk at %d does not end a link", off)
		}
		if err := g.WriteRaw(off, buf[:c]); err != nil {
			t.Fatal(err)
		}
		off += uint64(c)
	}
	for i := range n {
		if !g.ContainsString(fmt.Sprint("k", i)) {
			t.Fatalf("false negative k%d after the raw copy", i)
		}
	}
	keys := make([][]byte, 0, 1000)
	out := make([]bool, 1000)
	fp := 0
	for i := range 1000000 {
		k := fmt.Sprint("absent", i)
		a := f.ContainsString(k)
		if a != g.ContainsString(k) {
			t.Fatalf("%s answered differently", k)
		}
		if a {
			fp++
		}
		keys = append(keys, []byte(k))
		if len(keys) == cap(keys) {
			g.ContainsBatch(keys, out)
			for j, key := range keys {
				if out[j] != f.Contains(key) {
					t.Fatalf("ContainsBatch(%s) differs from Contains", key)
				}
			}
			keys = keys[:0]
		}
	}
	if r, est := float64(fp)/1e6, f.EstimatedFPR(); r < est*0.85 || r > est*1.15 {
		t.Fatalf("chain FPR %v, estimated from the fills %v (±15%%)", r, est)
	}
	if g.EstimatedFPR() != f.EstimatedFPR() {
		t.Fatalf("estimated FPR %v, original %v", g.EstimatedFPR(), f.EstimatedFPR())
	}
	// Growth continues identically.
	for i := n; i < 2*n; i++ {
		k := fmt.Sprint("k", i)
		if f.AddString(k) != g.AddString(k) {
			t.Fatalf("add %s differs after the copy", k)
		}
	}
	if g.NumLinks() != f.NumLinks() || g.Len() != f.Len() {
		t.Fatal("chains diverged while growing")
	}
	if err := g.WriteRaw(g.RawLen()-1, []byte{0, 0}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("write past the end: %v", err)
	}
}

func TestNextLinkBytes(t *testing.T) {
	f, _ := New(Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis})
	want := []uint64{312, 696, 1536}
	next := 0
	for i, w := range want {
		for f.NextLinkBytes() == 0 {
			f.AddString(fmt.Sprint("x", next))
			next++
		}
		if got := f.NextLinkBytes(); got != w || f.NumLinks() != i+1 {
			t.Fatalf("link %d: NextLinkBytes %d, RedisBloom %d", i+1, got, w)
		}
		for f.NumLinks() != i+2 {
			f.AddString(fmt.Sprint("x", next))
			next++
		}
		if s := f.Shapes()[i+1]; s.Bits/8 != w {
			t.Fatalf("link %d has %d bytes, predicted %d", i+1, s.Bits/8, w)
		}
	}
	ns, _ := New(Params{InitialCapacity: 1, FPR: 0.01, NonScaling: true})
	ns.AddString("a")
	if ns.NextLinkBytes() != 0 {
		t.Fatal("non-scaling chain predicts growth")
	}
}

func TestNewFromShapesRejects(t *testing.T) {
	p := Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis}
	f, _ := New(p)
	for i := range 150 {
		f.AddString(fmt.Sprint(i))
	}
	good := f.Shapes()
	mods := []func([]Shape) []Shape{
		func(s []Shape) []Shape { return nil },
		func(s []Shape) []Shape { s[0].Capacity++; return s },
		func(s []Shape) []Shape { s[1].Bits += 64; return s },
		func(s []Shape) []Shape { s[1].HashFuncs++; return s },
		func(s []Shape) []Shape { s[0].Len = 99; return s },
		func(s []Shape) []Shape { s[1].Len = -1; return s },
		func(s []Shape) []Shape { s[0].Layout = 0; return s },
		func(s []Shape) []Shape { s[1].Layout = 3; return s },
	}
	for i, mod := range mods {
		s := mod(append([]Shape(nil), good...))
		if _, err := NewFromShapes(p, s, 1<<20); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("case %d accepted: %v", i, err)
		}
	}
	ns := p
	ns.NonScaling = true
	if _, err := NewFromShapes(ns, good, 1<<20); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("non-scaling chain with two links: %v", err)
	}
	bl := Params{InitialCapacity: 100, FPR: 0.01, Blocked: true}
	if _, err := NewFromShapes(bl, good, 1<<20); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Errorf("blocked chain: %v", err)
	}
}
