package scalable

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
)

// This file lets an owner persist or move a chain of standard links in
// its own format (the server's BF.SCANDUMP / BF.LOADCHUNK and snapshots):
// a description of the links (Shapes), the raw bit arrays addressed as
// one concatenation (ReadRaw, WriteRaw), and NewFromShapes, which rebuilds
// a chain with zeroed bit arrays from Params and Shapes for the raw bytes
// to be written into. The raw form of a link is bloom's (see
// bloom.Filter.ReadRaw); links are concatenated oldest first.

// Shape describes one standard link without its bits.
type Shape struct {
	// Capacity is the link's design key count, Len the adds it took.
	Capacity, Len int
	// Bits is the bit array's size, a positive multiple of 64.
	Bits uint64
	// HashFuncs is the link's probe count.
	HashFuncs int
	// Layout is a standard link's probe derivation, bloom.Layout1 or
	// bloom.Layout2 (bloom.Filter.Layout): links added since layout 2 are
	// layout 2, those of a chain persisted before keep layout 1. Shapes
	// leaves it 0 for blocked links, which have no raw form here.
	Layout uint8
}

// errBlocked is returned by the raw accessors of blocked chains.
func errBlocked(ctx string) error {
	return fmt.Errorf("scalable: %s: raw access needs standard links, not blocked: %w", ctx, bloomery.ErrInvalidParams)
}

// Shapes describes the links, oldest first (O(links), it reads no bits).
func (f *Filter) Shapes() []Shape {
	out := make([]Shape, len(f.links))
	for i, l := range f.links {
		out[i] = Shape{Capacity: l.Cap(), Len: l.Len(), Bits: l.Bits(), HashFuncs: l.K()}
		if s, ok := l.(*bloom.Filter); ok {
			out[i].Layout = s.Layout()
		}
	}
	return out
}

// NewFromShapes returns a chain with p's parameters and one zeroed link
// per shape, for the raw bytes to be written with WriteRaw. Each shape
// must be the one New's chain rule gives for its link: capacity
// InitialCapacity·Expansion^i, and the bit count and probe count p's
// sizing gives (so the chain keeps growing exactly as a chain built by
// adds); every link but the newest must hold at least its capacity, and a
// non-scaling chain has one link. maxBytes bounds the total of the bit
// arrays, checked before anything is allocated. Blocked chains are not
// supported. Errors wrap bloomery.ErrInvalidParams (bad p) or
// bloomery.ErrCorrupt (shapes that do not fit p, or too large).
func NewFromShapes(p Params, shapes []Shape, maxBytes uint64) (*Filter, error) {
	const ctx = "scalable: from shapes"
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.Blocked {
		return nil, errBlocked("from shapes")
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", ctx, fmt.Sprintf(format, args...), bloomery.ErrCorrupt)
	}
	n := len(shapes)
	if n == 0 || n > MaxLinks || (p.NonScaling && n != 1) {
		return nil, bad("%d links", n)
	}
	f := &Filter{p: p}
	var total uint64
	for i, s := range shapes {
		capacity, ok := p.LinkCapacity(i)
		if !ok || s.Capacity != capacity {
			return nil, bad("link %d has capacity %d, the chain rule gives %d", i, s.Capacity, capacity)
		}
		bits, k, err := f.linkSize(i)
		if err != nil {
			return nil, bad("link %d cannot be sized: %v", i, err)
		}
		if s.Bits != bits || s.HashFuncs != k {
			return nil, bad("link %d has %d bits and %d probes, the sizing gives %d and %d", i, s.Bits, s.HashFuncs, bits, k)
		}
		if s.Len < 0 || (i < n-1 && s.Len < s.Capacity) || f.count > math.MaxInt-s.Len {
			return nil, bad("link %d holds %d of %d keys", i, s.Len, s.Capacity)
		}
		if s.Layout != bloom.Layout1 && s.Layout != bloom.Layout2 {
			return nil, bad("link %d has layout %d, not %d or %d", i, s.Layout, bloom.Layout1, bloom.Layout2)
		}
		f.count += s.Len
		total += bits / 8
		if total > maxBytes {
			return nil, bad("bit arrays exceed %d bytes", maxBytes)
		}
	}
	f.links = make([]link, n)
	for i, s := range shapes {
		l, err := bloom.NewFromImage(bloom.Image{
			Words: make([]uint64, s.Bits/64), K: s.HashFuncs, Capacity: s.Capacity, Count: s.Len, Hasher: p.Hasher, Layout: s.Layout,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: link %d: %w", ctx, i, err)
		}
		f.links[i] = l
	}
	return f, nil
}

// linkSize returns the bit and probe counts of link i as newLink sizes it,
// without allocating the bit array.
func (f *Filter) linkSize(i int) (bits uint64, k int, err error) {
	bp, err := f.linkParams(i)
	if err != nil {
		return 0, 0, err
	}
	if f.p.Blocked {
		blocks, k, err := bloom.BlockedSize(bp)
		return blocks * bloom.BlockBits, k, err
	}
	return bloom.Size(bp)
}

// LinkBytes returns the bit-array bytes of link i (0 = the first) of a
// filter with parameters p, as New and growth would allocate it, without
// allocating. Its errors are New's for an invalid p, or wrap
// bloomery.ErrFull when link i cannot exist (capacity overflow, error
// underflow). Cost: one Bloom sizing.
func LinkBytes(p Params, i int) (uint64, error) {
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return 0, err
	}
	f := &Filter{p: p}
	bits, _, err := f.linkSize(i)
	if err != nil {
		return 0, err
	}
	return bits / 8, nil
}

// NextLinkBytes returns the bit-array bytes of the link the next new key
// would append (its newest link is full and the chain scales), 0 when the
// next add does not grow the chain or the chain cannot grow. It lets an
// owner check a memory budget before TryAdd. It does not allocate.
func (f *Filter) NextLinkBytes() uint64 {
	last := f.links[len(f.links)-1]
	if f.p.NonScaling || last.Len() < last.Cap() || len(f.links) >= MaxLinks {
		return 0
	}
	bits, _, err := f.linkSize(len(f.links))
	if err != nil {
		return 0
	}
	return bits / 8
}

// RawLen returns the total bytes of the links' raw bit arrays (0 for a
// blocked chain, which has no raw form here).
func (f *Filter) RawLen() uint64 {
	var n uint64
	for _, l := range f.links {
		s, ok := l.(*bloom.Filter)
		if !ok {
			return 0
		}
		n += s.RawLen()
	}
	return n
}

// ReadRaw copies raw bytes from offset off of the concatenated bit arrays
// into dst, never crossing the end of a link, and returns how many it
// copied: 0 at or past RawLen (and for blocked chains). Reading
// successive offsets with a fixed dst walks the whole array. It does not
// allocate; safe for concurrent use with other readers.
func (f *Filter) ReadRaw(dst []byte, off uint64) int {
	for _, l := range f.links {
		s, ok := l.(*bloom.Filter)
		if !ok {
			return 0
		}
		if n := s.RawLen(); off >= n {
			off -= n
			continue
		}
		return s.ReadRaw(dst, off)
	}
	return 0
}

// WriteRaw overwrites the concatenated bit arrays from offset off with
// src, possibly across links. A range outside the arrays (or a blocked
// chain) returns an error wrapping bloomery.ErrCorrupt (ErrInvalidParams)
// and changes nothing. Counts are unchanged; fills stay exact. It needs
// exclusive access.
func (f *Filter) WriteRaw(off uint64, src []byte) error {
	if f.p.Blocked {
		return errBlocked("write raw")
	}
	total := f.RawLen()
	if end := off + uint64(len(src)); end < off || end > total {
		return fmt.Errorf("scalable: raw write [%d, +%d) outside the %d-byte arrays: %w", off, len(src), total, bloomery.ErrCorrupt)
	}
	for _, l := range f.links {
		if len(src) == 0 {
			break
		}
		s := l.(*bloom.Filter)
		n := s.RawLen()
		if off >= n {
			off -= n
			continue
		}
		c := min(uint64(len(src)), n-off)
		if err := s.WriteRaw(off, src[:c]); err != nil {
			return err // unreachable: the range was checked
		}
		src = src[c:]
		off = 0
	}
	return nil
}
