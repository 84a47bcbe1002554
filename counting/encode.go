package counting

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the container layout byte this package writes: the probe
// derivations documented in the package comment and the payload below.
const Layout = 1

const paramsLen = 1 + 1 + 1 + 8 + 8 + 8

// AppendBinary appends the filter in the container format (kind counting,
// layout 1).
//
// Format: params (little-endian)
//
//	u8   counter bits c (4 or 8)
//	u8   layout: 0 standard, 1 blocked (64-byte lines)
//	u8   probes k (1..32)
//	u64  counters m (a multiple of 64/c; blocked: of 512/c)
//	u64  design capacity
//	u64  adds minus deletes (Len)
//
// payload: m*c/8 bytes, the counters as little-endian 64-bit words;
// counter i is bits [(i mod 64/c)*c, +c) of word i/(64/c).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	var p [paramsLen]byte
	p[0] = byte(f.cbits)
	if f.blocked {
		p[1] = 1
	}
	p[2] = byte(f.k)
	binary.LittleEndian.PutUint64(p[3:], f.m)
	binary.LittleEndian.PutUint64(p[11:], uint64(f.capacity))
	binary.LittleEndian.PutUint64(p[19:], uint64(f.count))
	b, start := container.Begin(b, bloomery.KindCounting, Layout, f.hasher, p[:], 8*len(f.words))
	b = wire.AppendUint64s(b, f.words)
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// use unkeyed hashing (use Decode with the key for keyed filters).
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a counting filter from the container format. want says
// which hasher the caller expects (see hashing.Expect). Every field is
// checked against the input before anything is allocated. Errors wrap
// bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, h, params, payload, err := container.Open(data, bloomery.KindCounting, want)
	if err != nil {
		return nil, fmt.Errorf("counting: decode: %w", err)
	}
	if hdr.Layout != Layout {
		return nil, fmt.Errorf("counting: decode: layout %d (this build reads %d): %w", hdr.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "counting: params")
	cb := int(r.U8("counter bits"))
	bl := r.U8("layout")
	k := int(r.U8("probes"))
	m := r.U64("counters")
	capacity := r.U64("capacity")
	count := r.U64("count")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	switch {
	case cb != 4 && cb != 8:
		return nil, corrupt("counter bits %d", cb)
	case bl > 1:
		return nil, corrupt("layout flag %d", bl)
	case k < 1 || k > MaxK:
		return nil, corrupt("probes %d outside 1..%d", k, MaxK)
	case capacity < 1 || capacity > MaxCapacity:
		return nil, corrupt("capacity %d", capacity)
	case count > 1<<62:
		return nil, corrupt("count %d", count)
	}
	unit := uint64(64 / cb)
	if bl == 1 {
		unit = LineBytes * 8 / uint64(cb)
	}
	if m == 0 || m%unit != 0 {
		return nil, corrupt("%d counters is not a positive multiple of %d", m, unit)
	}
	if m/8*uint64(cb) != uint64(len(payload)) {
		return nil, corrupt("payload is %d bytes, %d %d-bit counters need %d", len(payload), m, cb, m/8*uint64(cb))
	}
	f := newFilter(m, k, cb, bl == 1, int(capacity), h)
	pr := wire.NewReader(payload, "counting: payload")
	f.words = pr.Uint64s(uint64(len(payload))/8, "counters")
	pr.Done()
	if err := pr.Err(); err != nil {
		return nil, err
	}
	f.count = int64(count)
	f.recount()
	return f, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("counting: decode: %s: %w", fmt.Sprintf(format, args...), bloomery.ErrCorrupt)
}
