package fuse

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the layout byte this package writes in the container header:
// the index derivation (murmur3 finalizer of hash+seed, multiply-shift h0,
// in-segment XOR offsets, fingerprint = low bits of x^(x>>32)) and the
// payload below. A new derivation gets a new number; readers keep reading
// the old ones.
const Layout = 1

const paramsLen = 1 + 1 + 1 + 8 + 8 + 8

// maxSegCount bounds the segment count a decoder accepts, so that no
// product below can overflow (2^33 segments of 2^18 cells is far beyond
// MaxKeys).
const maxSegCount = 1 << 33

// AppendBinary appends the filter in the container format (kind fuse8,
// fuse16, fuse8-4 or fuse16-4; layout 1) and returns the extended slice.
//
// Format of the params block (little-endian):
//
//	off size field
//	0   1    arity (3 or 4)
//	1   1    fingerprint bits (8 or 16)
//	2   1    log2 of the segment length (2..18; 0 for the empty filter)
//	3   8    construction seed
//	11  8    number of distinct keys n
//	19  8    segment count (segments a first position can fall in; 0 when empty)
//
// The payload is the fingerprint array, (segment count + arity - 1) *
// segment length cells, each 1 or 2 bytes little-endian; it is empty for
// the empty filter.
func (f *Filter[T]) AppendBinary(b []byte) ([]byte, error) {
	var params [paramsLen]byte
	params[0] = byte(f.arity())
	params[1] = byte(fingerprintBits[T]())
	if f.n > 0 {
		params[2] = byte(f.geo.segLog)
	}
	binary.LittleEndian.PutUint64(params[3:], f.seed)
	binary.LittleEndian.PutUint64(params[11:], uint64(f.n))
	if f.n > 0 {
		binary.LittleEndian.PutUint64(params[19:], f.geo.segCount)
	}
	b, start := container.Begin(b, f.Kind(), Layout, f.hasher, params[:], f.SizeBytes())
	switch fps := any(f.fps).(type) {
	case []uint8:
		b = append(b, fps...)
	case []uint16:
		for _, v := range fps {
			b = binary.LittleEndian.AppendUint16(b, v)
		}
	}
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the container format.
func (f *Filter[T]) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// use unkeyed hashing (see Decode for keyed filters). On error f is
// unchanged.
func (f *Filter[T]) UnmarshalBinary(data []byte) error {
	g, err := Decode[T](data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a filter with fingerprints of type T (either arity) from
// the container format. want says which hasher the caller expects (see
// hashing.Expect). Every length is checked against data before anything
// is allocated; errors wrap bloomery.ErrCorrupt, ErrKindMismatch,
// ErrUnsupportedVersion, ErrIncompatible or ErrKeyRequired. The filter
// copies what it needs from data.
func Decode[T Fingerprint](data []byte, want hashing.Expect) (*Filter[T], error) {
	h, err := container.Peek(data)
	if err != nil {
		return nil, fmt.Errorf("fuse: decode: %w", err)
	}
	bits := fingerprintBits[T]()
	kind := kindOf(bits, 3)
	if h.Kind == kindOf(bits, 4) {
		kind = h.Kind
	}
	hdr, hasher, params, payload, err := container.Open(data, kind, want)
	if err != nil {
		return nil, fmt.Errorf("fuse: decode: %w", err)
	}
	if hdr.Layout != Layout {
		return nil, fmt.Errorf("fuse: decode: layout %d (this build reads %d): %w", hdr.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "fuse: params")
	arity := int(r.U8("arity"))
	fbits := int(r.U8("fingerprint bits"))
	segLog := uint(r.U8("segment log"))
	seed := r.U64("seed")
	n := r.U64("keys")
	segCount := r.U64("segment count")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if kindOf(fbits, arity) != kind {
		return nil, fmt.Errorf("fuse: params: arity %d, %d-bit fingerprints in a %s filter: %w", arity, fbits, kind, bloomery.ErrCorrupt)
	}
	f := &Filter[T]{hasher: hasher, seed: seed, geo: geometry{arity: arity}}
	if n == 0 {
		if segLog != 0 || segCount != 0 || len(payload) != 0 {
			return nil, fmt.Errorf("fuse: params: empty filter with segments or payload: %w", bloomery.ErrCorrupt)
		}
		return f, nil
	}
	if segLog < minSegmentLog || segLog > maxSegmentLog {
		return nil, fmt.Errorf("fuse: params: segment log %d outside [%d, %d]: %w", segLog, minSegmentLog, maxSegmentLog, bloomery.ErrCorrupt)
	}
	if segCount == 0 || segCount > maxSegCount || n > MaxKeys {
		return nil, fmt.Errorf("fuse: params: %d segments, %d keys: %w", segCount, n, bloomery.ErrCorrupt)
	}
	geo := makeGeometry(arity, segLog, segCount)
	if n > geo.cells {
		return nil, fmt.Errorf("fuse: params: %d keys in %d cells: %w", n, geo.cells, bloomery.ErrCorrupt)
	}
	width := uint64(bits / 8)
	if uint64(len(payload)) != geo.cells*width {
		return nil, fmt.Errorf("fuse: payload is %d bytes, %d cells of %d bytes need %d: %w", len(payload), geo.cells, width, geo.cells*width, bloomery.ErrCorrupt)
	}
	fps := make([]T, geo.cells)
	adviseHugePages(fps)
	switch dst := any(fps).(type) {
	case []uint8:
		copy(dst, payload)
	case []uint16:
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint16(payload[2*i:])
		}
	}
	collapseHugePages(fps)
	f.n = int(n)
	f.geo = geo
	f.fps = fps
	f.probe = arity
	return f, nil
}
