package gcs

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// layoutV1 is the container layout: params P (u8), M (u64), N (u64);
// payload the Golomb-Rice stream.
const layoutV1 = 1

const paramsLen = 1 + 8 + 8

// AppendBinary appends the filter in the Bloomery container format. A
// keyed filter (BIP-158 filters are keyed by their block hash) records
// only the key's fingerprint.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	var params [paramsLen]byte
	params[0] = byte(f.p)
	binary.LittleEndian.PutUint64(params[1:], f.m)
	binary.LittleEndian.PutUint64(params[9:], f.n)
	b, start := container.Begin(b, bloomery.KindGCS, layoutV1, f.hasher, params[:], len(f.data))
	b = append(b, f.data...)
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the Bloomery container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary decodes an unkeyed filter in the container format
// (keyed filters need [Decode] with the key).
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a filter in the container format. want says which hasher
// the caller expects (see hashing.Expect); a BIP-158 filter needs
// hashing.Want(gcs.BIP158Params(blockHash).Hasher). The stream is
// validated in full and copied, so data may be reused afterwards. Errors
// wrap bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, h, params, payload, err := container.Open(data, bloomery.KindGCS, want)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	if hdr.Layout != layoutV1 {
		return nil, fmt.Errorf("gcs: layout %d (this build reads 1): %w", hdr.Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "gcs: params")
	p := r.U8("P")
	m := r.U64("M")
	n := r.U64("N")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	return fromStream(payload, uint(p), m, n, h)
}
