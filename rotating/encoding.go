package rotating

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the container layout byte of this package's encoding.
//
// Params (41 bytes, little-endian):
//
//	off size field
//	0   4    N, generations (2..1024)
//	4   8    W, the window in nanoseconds (>= N)
//	12  8    capacity per generation (>= 1)
//	20  8    FPR of the window, float64 in (0, 1)
//	28  1    flags: bit 0 blocked generations; others 0
//	29  4    head, the index of the newest generation (< N)
//	33  8    overfill events so far
//
// Payload: N records in ring order (index 0 first), each
//
//	8    start, unix nanoseconds at which the generation opened (int64)
//	1    1 if the generation's overfill was already reported, else 0
//	8    L, the length of the nested container
//	L    the generation: a bloom container (kind bloom, or blocked when
//	     flag bit 0 is set) with the same hasher as the outer one, whose
//	     capacity is the per-generation capacity
//
// The newest generation's start is the largest; the others are at most
// one generation length apart in ring order (a reader does not rely on
// it: liveness is decided from the start times alone).
const Layout = 1

const paramsLen = 41

const flagBlocked = 1

func (f *Filter) params() []byte {
	b := make([]byte, 0, paramsLen)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.gens)))
	b = binary.LittleEndian.AppendUint64(b, uint64(f.p.Window))
	b = binary.LittleEndian.AppendUint64(b, uint64(f.capacity))
	b = wire.AppendF64(b, f.p.FPR)
	var flags byte
	if f.p.Blocked {
		flags |= flagBlocked
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint32(b, uint32(f.head))
	return binary.LittleEndian.AppendUint64(b, f.overfill)
}

// genLen is a bloom container's size: 32 bytes of envelope, 36 of params
// (bloom layout 1) and the bit array; AppendBinary checks it.
func genLen(g generation) int { return 32 + 36 + g.SizeBytes() }

// AppendBinary appends f in the container format (kind rotating, layout 1).
// The clock and OnOverfill are not persisted.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	n := 0
	for _, g := range f.gens {
		n += 17 + genLen(g)
	}
	b, start := container.Begin(b, bloomery.KindRotating, Layout, f.p.Hasher, f.params(), n)
	for i, g := range f.gens {
		b = binary.LittleEndian.AppendUint64(b, uint64(f.starts[i]))
		fl := byte(0)
		if f.flagged[i] {
			fl = 1
		}
		b = append(b, fl)
		want := genLen(g)
		b = binary.LittleEndian.AppendUint64(b, uint64(want))
		before := len(b)
		var err error
		if b, err = g.AppendBinary(b); err != nil {
			return nil, fmt.Errorf("rotating: encode generation: %w", err)
		}
		if got := len(b) - before; got != want {
			return nil, fmt.Errorf("rotating: generation encoded to %d bytes, expected %d (bloom layout changed?): %w", got, want, bloomery.ErrUnsupportedVersion)
		}
	}
	return container.Finish(b, start), nil
}

// MarshalBinary returns f in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// minRecord is the smallest generation record.
const minRecord = 17 + 32 + 36 + 8

// Options for Decode.
type Options struct {
	// Clock for the decoded filter; nil means time.Now.
	Clock func() time.Time
	// OnOverfill as in Params.
	OnOverfill func(GenerationInfo)
}

// Decode reads a rotating filter (exactly one container). Errors wrap
// bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired. data is not retained. Generations
// that expired while the filter was stored stop answering at once and are
// cleared by the next Add or Rotate.
func Decode(data []byte, want hashing.Expect, o Options) (*Filter, error) {
	const ctx = "rotating: decode"
	h, hs, params, payload, err := container.Open(data, bloomery.KindRotating, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ctx, err)
	}
	if h.Layout != Layout {
		return nil, fmt.Errorf("%s: layout %d (this build reads %d): %w", ctx, h.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, ctx+": params")
	n := r.U32("generations")
	window := r.U64("window")
	capacity := r.U64("capacity")
	fpr := r.F64("fpr")
	flags := r.U8("flags")
	head := r.U32("head")
	overfill := r.U64("overfill events")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	switch {
	case n < 2 || n > MaxGenerations || uint64(n) > uint64(len(payload))/minRecord:
		return nil, fmt.Errorf("%s: %d generations in a %d-byte payload: %w", ctx, n, len(payload), bloomery.ErrCorrupt)
	case window < uint64(n) || window > math.MaxInt64:
		return nil, fmt.Errorf("%s: window %d ns for %d generations: %w", ctx, window, n, bloomery.ErrCorrupt)
	case capacity == 0 || capacity > math.MaxInt64:
		return nil, fmt.Errorf("%s: capacity %d: %w", ctx, capacity, bloomery.ErrCorrupt)
	case !(fpr > 0 && fpr < 1):
		return nil, fmt.Errorf("%s: FPR %v: %w", ctx, fpr, bloomery.ErrCorrupt)
	case flags&^flagBlocked != 0 || head >= n:
		return nil, fmt.Errorf("%s: flags %#x, head %d: %w", ctx, flags, head, bloomery.ErrCorrupt)
	}
	f := &Filter{
		p: Params{
			Window: time.Duration(window), Generations: int(n), Capacity: int(capacity), FPR: fpr,
			Blocked: flags&flagBlocked != 0, Hasher: hs, OnOverfill: o.OnOverfill,
		},
		genLen:   time.Duration(window) / time.Duration(n),
		capacity: int(capacity),
		gens:     make([]generation, n),
		starts:   make([]int64, n),
		flagged:  make([]bool, n),
		head:     int(head),
		overfill: overfill,
	}
	f.SetClock(o.Clock)
	pr := wire.NewReader(payload, ctx+": payload")
	linkWant := hashing.Want(hs)
	for i := range int(n) {
		f.starts[i] = int64(pr.U64("start"))
		fl := pr.U8("reported")
		l := pr.U64("length")
		b := pr.Bytes(l, "generation")
		if err := pr.Err(); err != nil {
			return nil, err
		}
		if fl > 1 {
			return nil, fmt.Errorf("%s: generation %d: reported flag %d: %w", ctx, i, fl, bloomery.ErrCorrupt)
		}
		f.flagged[i] = fl == 1
		var g generation
		var e error
		if f.p.Blocked {
			g, e = bloom.DecodeBlocked(b, linkWant)
		} else {
			g, e = bloom.Decode(b, linkWant)
		}
		if e != nil {
			return nil, fmt.Errorf("%s: generation %d: %w", ctx, i, e)
		}
		if g.Cap() != f.capacity {
			return nil, fmt.Errorf("%s: generation %d has capacity %d, the ring %d: %w", ctx, i, g.Cap(), f.capacity, bloomery.ErrCorrupt)
		}
		f.gens[i] = g
	}
	pr.Done()
	if err := pr.Err(); err != nil {
		return nil, err
	}
	for i, s := range f.starts {
		if s > f.starts[f.head] {
			return nil, fmt.Errorf("%s: generation %d opened after the newest: %w", ctx, i, bloomery.ErrCorrupt)
		}
	}
	return f, nil
}
