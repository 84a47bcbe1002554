package scalable

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the container layout byte of this package's encoding.
//
// Params (38 bytes, little-endian):
//
//	off size field
//	0   8    initial capacity (>= 1)
//	8   8    FPR, IEEE-754 float64 in (0, 1)
//	16  4    expansion (1..32768)
//	20  8    tightening ratio, float64 in (0, 1)
//	28  1    flags: bit 0 non-scaling, bit 1 blocked links; others 0
//	29  1    sizing (0 optimal, 1 redis)
//	30  4    number of links L (1..MaxLinks)
//	34  4    reserved, 0
//
// Payload: L records, oldest link first, each an 8-byte little-endian
// length followed by that many bytes: the link as a complete bloom
// container (kind bloom, or blocked when flag bit 1 is set) with the same
// hash algorithm and seed as the outer container. Link i must have the
// capacity InitialCapacity·expansion^i; every link but the newest must
// hold at least its capacity; the chain's count is the sum of the links'.
const Layout = 1

const paramsLen = 38

const (
	flagNonScaling = 1 << 0
	flagBlocked    = 1 << 1
)

func (f *Filter) params() []byte {
	b := make([]byte, 0, paramsLen)
	b = binary.LittleEndian.AppendUint64(b, uint64(f.p.InitialCapacity))
	b = wire.AppendF64(b, f.p.FPR)
	b = binary.LittleEndian.AppendUint32(b, uint32(f.p.Expansion))
	b = wire.AppendF64(b, f.p.TighteningRatio)
	var flags byte
	if f.p.NonScaling {
		flags |= flagNonScaling
	}
	if f.p.Blocked {
		flags |= flagBlocked
	}
	b = append(b, flags, byte(f.p.Sizing))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.links)))
	return binary.LittleEndian.AppendUint32(b, 0)
}

// AppendBinary appends f in the container format (kind scalable, layout 1).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	n := 0
	for _, l := range f.links {
		n += 8 + encodedLen(l)
	}
	b, start := container.Begin(b, bloomery.KindScalable, Layout, f.p.Hasher, f.params(), n)
	for _, l := range f.links {
		want := encodedLen(l)
		b = binary.LittleEndian.AppendUint64(b, uint64(want))
		before := len(b)
		var err error
		if b, err = l.AppendBinary(b); err != nil {
			return nil, fmt.Errorf("scalable: encode link: %w", err)
		}
		if got := len(b) - before; got != want {
			return nil, fmt.Errorf("scalable: link encoded to %d bytes, expected %d (bloom layout changed?): %w", got, want, bloomery.ErrUnsupportedVersion)
		}
	}
	return container.Finish(b, start), nil
}

// encodedLen is the size of a bloom container for l: the envelope's 32
// bytes, bloom's 36 bytes of params (bloom layout 1) and the bit array.
// AppendBinary checks it against what bloom actually writes.
func encodedLen(l link) int { return 32 + 36 + l.SizeBytes() }

// MarshalBinary returns f in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter in data; keyed filters need
// Decode with the key.
func (f *Filter) UnmarshalBinary(data []byte) error {
	want := hashing.Expect{}
	if f.p.Hasher.HasKey() {
		want = hashing.Want(f.p.Hasher)
	}
	g, err := Decode(data, want)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// minLinkLen is the smallest possible link record: length word and a bloom
// container with one 64-bit word.
const minLinkLen = 8 + 32 + 36 + 8

// Decode reads a scalable filter (exactly one container). want says which
// hasher the caller expects; the links must record the same. Errors wrap
// bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired. data is not retained.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	const ctx = "scalable: decode"
	h, hs, params, payload, err := container.Open(data, bloomery.KindScalable, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ctx, err)
	}
	if h.Layout != Layout {
		return nil, fmt.Errorf("%s: layout %d (this build reads %d): %w", ctx, h.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, ctx+": params")
	initial := r.U64("initial capacity")
	fpr := r.F64("fpr")
	exp := r.U32("expansion")
	ratio := r.F64("tightening ratio")
	flags := r.U8("flags")
	sizing := r.U8("sizing")
	nlinks := r.U32("links")
	reserved := r.U32("reserved")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	p := Params{
		InitialCapacity: int(min(initial, math.MaxInt64)),
		FPR:             fpr,
		Expansion:       int(exp),
		TighteningRatio: ratio,
		NonScaling:      flags&flagNonScaling != 0,
		Blocked:         flags&flagBlocked != 0,
		Sizing:          Sizing(sizing),
		Hasher:          hs,
	}
	switch {
	case initial == 0 || initial > math.MaxInt64 || exp == 0:
		return nil, fmt.Errorf("%s: initial capacity %d, expansion %d: %w", ctx, initial, exp, bloomery.ErrCorrupt)
	case flags&^(flagNonScaling|flagBlocked) != 0 || reserved != 0:
		return nil, fmt.Errorf("%s: unknown flags %#x or reserved %#x: %w", ctx, flags, reserved, bloomery.ErrCorrupt)
	case nlinks == 0 || nlinks > MaxLinks || uint64(nlinks) > uint64(len(payload))/minLinkLen:
		return nil, fmt.Errorf("%s: %d links in a %d-byte payload: %w", ctx, nlinks, len(payload), bloomery.ErrCorrupt)
	case p.NonScaling && nlinks != 1:
		return nil, fmt.Errorf("%s: non-scaling filter with %d links: %w", ctx, nlinks, bloomery.ErrCorrupt)
	}
	// validate checks the ranges of FPR, expansion, ratio and sizing; a
	// keyless hasher is allowed here (Expect.Keyless).
	vp := p
	vp.Hasher = hashing.Hasher{}
	if err := vp.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", ctx, bloomery.ErrCorrupt, err)
	}
	f := &Filter{p: p, links: make([]link, 0, nlinks)}
	lr := wire.NewReader(payload, ctx+": payload")
	linkWant := hashing.Want(hs)
	for i := range int(nlinks) {
		n := lr.U64("link length")
		b := lr.Bytes(n, "link")
		if err := lr.Err(); err != nil {
			return nil, err
		}
		var l link
		var e error
		if p.Blocked {
			l, e = bloom.DecodeBlocked(b, linkWant)
		} else {
			l, e = bloom.Decode(b, linkWant)
		}
		if e != nil {
			return nil, fmt.Errorf("%s: link %d: %w", ctx, i, e)
		}
		want, ok := p.LinkCapacity(i)
		if !ok || l.Cap() != want {
			return nil, fmt.Errorf("%s: link %d has capacity %d, the chain rule gives %d: %w", ctx, i, l.Cap(), want, bloomery.ErrCorrupt)
		}
		if i < int(nlinks)-1 && l.Len() < l.Cap() {
			return nil, fmt.Errorf("%s: link %d holds %d of %d keys but is not the newest: %w", ctx, i, l.Len(), l.Cap(), bloomery.ErrCorrupt)
		}
		if l.Len() < 0 || f.count > math.MaxInt-l.Len() {
			return nil, fmt.Errorf("%s: link %d count %d: %w", ctx, i, l.Len(), bloomery.ErrCorrupt)
		}
		f.count += l.Len()
		f.links = append(f.links, l)
	}
	lr.Done()
	if err := lr.Err(); err != nil {
		return nil, err
	}
	return f, nil
}
