package sbbf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// layoutV1: params capacity (u64), design FPR (f64), len (u64); payload the
// bitset, blocks in order, each as eight little-endian uint32 words (the
// Parquet bitset bytes).
const layoutV1 = 1

const paramsLen = 8 + 8 + 8

// maxCount bounds the capacity and count fields on decode.
const maxCount = 1 << 62

// AppendBinary appends the filter in the Bloomery container format.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	var params [paramsLen]byte
	binary.LittleEndian.PutUint64(params[0:], uint64(f.cap))
	binary.LittleEndian.PutUint64(params[8:], math.Float64bits(f.design))
	binary.LittleEndian.PutUint64(params[16:], uint64(f.n))
	b, start := container.Begin(b, bloomery.KindSBBF, layoutV1, f.hasher, params[:], f.SizeBytes())
	b = f.appendBitset(b)
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the Bloomery container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary decodes an unkeyed filter in the container format.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a filter in the container format; want says which hasher
// the caller expects. Errors wrap bloomery.ErrCorrupt,
// ErrUnsupportedVersion, ErrKindMismatch, ErrIncompatible or
// ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, h, params, payload, err := container.Open(data, bloomery.KindSBBF, want)
	if err != nil {
		return nil, fmt.Errorf("sbbf: %w", err)
	}
	if hdr.Layout != layoutV1 {
		return nil, fmt.Errorf("sbbf: layout %d (this build reads 1): %w", hdr.Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "sbbf: params")
	capacity := r.U64("capacity")
	design := r.F64("design FPR")
	n := r.U64("len")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if capacity > maxCount || n > maxCount || !(design >= 0 && design <= 1) {
		return nil, fmt.Errorf("sbbf: params out of range (capacity %d, len %d, design FPR %v): %w", capacity, n, design, bloomery.ErrCorrupt)
	}
	f, err := fromBitset(payload, h)
	if err != nil {
		return nil, err
	}
	f.cap, f.design, f.n = int(capacity), design, int(n)
	return f, nil
}

// appendBitset appends the blocks as little-endian words.
func (f *Filter) appendBitset(b []byte) []byte {
	b = wire.Grow(b, 4*len(f.words))
	for _, w := range f.words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// Bitset returns the bitset bytes exactly as Parquet stores them after the
// header.
func (f *Filter) Bitset() []byte { return f.appendBitset(make([]byte, 0, f.SizeBytes())) }

// FromBitset returns a filter over a copy of a Parquet bitset (any
// positive multiple of 32 bytes) hashed with h (zero value: [Parquet]).
// Its Len is estimated from the fill.
func FromBitset(bitset []byte, h hashing.Hasher) (*Filter, error) {
	if h == (hashing.Hasher{}) {
		h = Parquet
	}
	f, err := fromBitset(bitset, h)
	if err != nil {
		return nil, err
	}
	f.n = f.estimatedCount()
	return f, nil
}

func fromBitset(b []byte, h hashing.Hasher) (*Filter, error) {
	if len(b) == 0 || len(b)%BlockBytes != 0 || uint64(len(b))/BlockBytes > MaxBlocks {
		return nil, fmt.Errorf("sbbf: bitset of %d bytes is not a positive multiple of 32 below 2^36: %w", len(b), bloomery.ErrCorrupt)
	}
	f := newBlocks(uint64(len(b)/BlockBytes), h)
	for i := range f.words {
		f.words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	f.countBits()
	return f, nil
}

// estimatedCount is z·lambda from the fill, rounded.
func (f *Filter) estimatedCount() int {
	fill := f.FillRatio()
	if fill >= 1 {
		return int(f.z) * 256
	}
	return int(math.Round(-32 * math.Log1p(-fill) * float64(f.z)))
}
