package keyspace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/bloomery/bloomery"
)

// testdata/bf-dump-rbb1.bin is a BF.SCANDUMP of BF.RESERVE 0.01 100 after
// adding key-0..key-249, written by the server's earlier chain
// implementation (u16 header length, header, concatenated chunks). The
// scalable-based chain must load it, hold every key and dump it back
// byte for byte: old dumps and snapshots stay readable.
func TestBloomReadsEarlierDump(t *testing.T) {
	raw, err := os.ReadFile("testdata/bf-dump-rbb1.bin")
	if err != nil {
		t.Fatal(err)
	}
	hl := int(raw[0]) | int(raw[1])<<8
	hdr, data := raw[2:2+hl], raw[2+hl:]
	f, err := BloomFromHeader(hdr, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBloom(f)
	if err := b.LoadChunk(0, data); err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if !b.Contains(fmt.Appendf(nil, "key-%d", i)) {
			t.Fatalf("key-%d lost", i)
		}
	}
	// RedisBloom's figures: links of 100 and 200, 144+312 bytes of bits.
	if b.NumLinks() != 2 || b.Capacity() != 300 || b.Size() != 32+2*64+144+312 || b.Expansion() != 2 {
		t.Fatalf("links %d capacity %d size %d", b.NumLinks(), b.Capacity(), b.Size())
	}
	if !bytes.Equal(b.AppendHeader(nil), hdr) {
		t.Fatal("header does not round-trip")
	}
	var back []byte
	for off := uint64(0); ; {
		c := b.Chunk(off)
		if c == nil {
			break
		}
		back = append(back, c...)
		off += uint64(len(c))
	}
	if !bytes.Equal(back, data) || !bytes.Equal(b.AppendData([]byte("x")), append([]byte("x"), data...)) {
		t.Fatal("data does not round-trip")
	}
}

func TestBloomSizeAndGrowth(t *testing.T) {
	f, err := NewBloomFilter(100, 0.01, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBloom(f)
	if b.Size() != NewBloomSize(100, 0.01, 2) || b.Size() != 96+144 {
		t.Fatalf("new chain size %d, predicted %d", b.Size(), NewBloomSize(100, 0.01, 2))
	}
	sizes := []uint64{144, 312, 696, 1536}
	total := uint64(32)
	for i := 0; b.NumLinks() < 4; i++ {
		if next := b.NextLinkBytes(); next != 0 {
			if next != sizes[b.NumLinks()] {
				t.Fatalf("next link %d bytes, RedisBloom %d", next, sizes[b.NumLinks()])
			}
		}
		b.Add(fmt.Appendf(nil, "x%d", i))
	}
	for _, s := range sizes {
		total += 64 + s
	}
	if b.Size() != total || b.Capacity() != 1500 || b.MemBytes() != total || b.Stats().SizeBytes != int(total) {
		t.Fatalf("size %d capacity %d, RedisBloom %d and 1500", b.Size(), b.Capacity(), total)
	}
	ns, _ := NewBloomFilter(2, 0.01, 0)
	nb := NewBloom(ns)
	nb.Add([]byte("a"))
	nb.Add([]byte("b"))
	if _, err := nb.Add([]byte("c")); !errors.Is(err, ErrBloomFull) || !errors.Is(err, bloomery.ErrFull) || nb.Expansion() != 0 {
		t.Fatalf("full NONSCALING chain: %v, expansion %d", err, nb.Expansion())
	}
	if added, err := nb.Add([]byte("a")); added || err != nil {
		t.Fatalf("known item on a full chain: %v %v", added, err)
	}
}

func TestBloomFromHeaderRejects(t *testing.T) {
	f, _ := NewBloomFilter(100, 0.01, 2)
	b := NewBloom(f)
	for i := range 150 {
		b.Add(fmt.Appendf(nil, "%d", i))
	}
	good := b.AppendHeader(nil)
	if _, err := BloomFromHeader(good, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := BloomFromHeader(good, 100); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("limit: %v", err)
	}
	if string(good[:4]) != "RBB2" || len(good) != bloomHeaderFixed+2*(bloomHeaderLink+1) {
		t.Fatalf("header %q..., %d bytes", good[:4], len(good))
	}
	// 3: magic; 56 and 93: the two links' layout bytes.
	for _, off := range []int{0, 3, 4, 8, 12, 20, 28, 36, 44, 48, 56, 71, 72, 80, 84, 93} {
		h := append([]byte(nil), good...)
		h[off] ^= 0x41
		if _, err := BloomFromHeader(h, 1<<20); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("byte %d flipped: %v", off, err)
		}
	}
	for n := range len(good) {
		if _, err := BloomFromHeader(good[:n], 1<<20); err == nil {
			t.Fatalf("header truncated to %d accepted", n)
		}
	}
}

// A chain loaded from a layout 1 dump (RBB1) keeps its links' layout and
// writes RBB1 back; once it grows a link (layout 2) its header is RBB2,
// with each link's layout, and a chain rebuilt from that header and the
// data holds every key.
func TestBloomHeaderLayouts(t *testing.T) {
	raw, err := os.ReadFile("testdata/bf-dump-rbb1.bin")
	if err != nil {
		t.Fatal(err)
	}
	hl := int(raw[0]) | int(raw[1])<<8
	f, err := BloomFromHeader(raw[2:2+hl], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBloom(f)
	if err := b.LoadChunk(0, raw[2+hl:]); err != nil {
		t.Fatal(err)
	}
	for i := 250; b.NumLinks() < 3; i++ {
		b.Add(fmt.Appendf(nil, "key-%d", i))
	}
	var layouts []uint8
	for _, s := range b.Shapes() {
		layouts = append(layouts, s.Layout)
	}
	if fmt.Sprint(layouts) != "[1 1 2]" {
		t.Fatalf("link layouts %v", layouts)
	}
	h := b.AppendHeader(nil)
	if string(h[:4]) != "RBB2" {
		t.Fatalf("grown chain's header is %q", h[:4])
	}
	g, err := BloomFromHeader(h, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c := NewBloom(g)
	if err := c.LoadChunk(0, b.AppendData(nil)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		k := fmt.Appendf(nil, "key-%d", i)
		if !b.Contains(k) {
			break // past the keys added
		}
		if !c.Contains(k) {
			t.Fatalf("key-%d lost", i)
		}
	}
	if !bytes.Equal(c.AppendHeader(nil), h) {
		t.Fatal("RBB2 header does not round-trip")
	}
}

// EXPANSION 1 keeps every link at the base capacity, so the link limit is
// reachable: the 65th link is refused, known items still answer.
func TestBloomLinkLimit(t *testing.T) {
	f, _ := NewBloomFilter(10, 0.01, 1)
	b := NewBloom(f)
	var err error
	i := 0
	for ; i < 100000; i++ {
		if _, err = b.Add(fmt.Appendf(nil, "k%d", i)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrBloomFull) || b.NumLinks() != BloomMaxLinks || b.Capacity() != 10*BloomMaxLinks {
		t.Fatalf("after %d adds: %v, %d links", i, err, b.NumLinks())
	}
	if added, err := b.Add([]byte("k0")); added || err != nil {
		t.Fatalf("known item: %v %v", added, err)
	}
	if _, err := BloomFromHeader(b.AppendHeader(nil), 1<<30); err != nil {
		t.Fatalf("full chain's header refused: %v", err)
	}
}
