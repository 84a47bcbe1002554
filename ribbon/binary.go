package ribbon

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the container layout byte of this package's encoding: the row
// derivation of ribbon.go (remix, start, coefficients, result) and the
// interleaved payload below. A new derivation gets a new number.
const Layout = 1

// paramsLen is the size of the params block:
//
//	off size field
//	0   8    keys (distinct)
//	8   8    blocks (slots / 128)
//	16  8    upper start block
//	24  1    lower columns L (1..31)
//	25  4    seed (banding attempt)
//	29  8    design FPR (float64)
const paramsLen = 37

// AppendBinary appends the filter in the container format
// (docs/format/ribbon.md) to b. A zero Filter (not made by Build or
// Decode) has no parameters to record and is refused.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	if f.l.lower == 0 {
		return b, fmt.Errorf("ribbon: encode: zero Filter (make filters with Build or Decode): %w", bloomery.ErrInvalidParams)
	}
	var p [paramsLen]byte
	binary.LittleEndian.PutUint64(p[0:], uint64(f.n))
	binary.LittleEndian.PutUint64(p[8:], f.l.numBlocks)
	binary.LittleEndian.PutUint64(p[16:], f.l.upperStart)
	p[24] = byte(f.l.lower)
	binary.LittleEndian.PutUint32(p[25:], f.seed)
	binary.LittleEndian.PutUint64(p[29:], math.Float64bits(f.target))
	b, start := container.Begin(b, bloomery.KindRibbon, Layout, f.hasher, p[:], 8*len(f.data))
	b = f.appendPersisted(b)
	return container.Finish(b, start), nil
}

// MarshalBinary encodes the filter in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary decodes an unkeyed filter (any seed) into f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a filter written by AppendBinary. want says which hasher
// the caller expects (hashing.Expect). Every field is checked against the
// others and the payload length before anything is allocated; errors wrap
// bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	const ctx = "ribbon: decode"
	h, hs, params, payload, err := container.Open(data, bloomery.KindRibbon, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ctx, err)
	}
	if h.Layout != Layout {
		return nil, fmt.Errorf("%s: layout %d (this build reads %d): %w", ctx, h.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, ctx+": params")
	n := r.U64("keys")
	blocks := r.U64("blocks")
	upper := r.U64("upper start block")
	lower := int(r.U8("lower columns"))
	seed := r.U32("seed")
	target := r.F64("design fpr")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", ctx, fmt.Sprintf(format, args...), bloomery.ErrCorrupt)
	}
	if !(target > MinFPR && target <= MaxFPR) {
		return nil, corrupt("design FPR %v outside (2^-32, 0.5]", target)
	}
	if lower < 1 || lower >= maxCols {
		return nil, corrupt("%d lower columns, want 1..%d", lower, maxCols-1)
	}
	if n > MaxKeys {
		return nil, corrupt("%d keys, more than %d", n, uint64(MaxKeys))
	}
	// Each block holds at least 2*lower >= 2 words, so blocks is bounded
	// by the payload before any multiplication.
	if blocks > uint64(len(payload))/16 {
		return nil, corrupt("%d blocks do not fit a %d-byte payload", blocks, len(payload))
	}
	if (n == 0) != (blocks == 0) || (blocks == 1) {
		return nil, corrupt("%d keys in %d blocks", n, blocks)
	}
	if n > blocks*128 || upper > blocks {
		return nil, corrupt("%d keys, %d blocks, upper start %d", n, blocks, upper)
	}
	l := layout{numBlocks: blocks, lower: lower, upperStart: upper}
	if blocks > 0 {
		l.numStarts = blocks*128 - 127
	}
	if want := 8 * l.words(); uint64(len(payload)) != want {
		return nil, corrupt("payload is %d bytes, layout needs %d", len(payload), want)
	}
	f := &Filter{l: l, n: int(n), seed: seed, target: target, hasher: hs}
	pr := wire.NewReader(payload, ctx+": payload")
	raw := pr.Bytes(8*l.words(), "solution")
	pr.Done()
	if err := pr.Err(); err != nil {
		return nil, err
	}
	f.data = newSolution(l.words())
	loadPersisted(&l, f.data, raw)
	collapseHugePages(f.data)
	f.setKernel()
	return f, nil
}
