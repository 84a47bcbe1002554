package xor

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the layout byte this package writes: the index derivation
// (murmur3 finalizer of hash+seed, multiply-shift of rotations by 0, 21
// and 42 bits onto three blocks, fingerprint = low 8 bits of x^(x>>32))
// and the payload below.
const Layout = 1

const paramsLen = 8 + 8 + 8

// AppendBinary appends the filter in the container format (kind xor8,
// layout 1) and returns the extended slice.
//
// Format of the params block (little-endian):
//
//	off size field
//	0   8    construction seed
//	8   8    number of distinct keys n
//	16  8    block length L (0 for the empty filter)
//
// The payload is the 3*L fingerprint bytes (empty for the empty filter).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	var params [paramsLen]byte
	binary.LittleEndian.PutUint64(params[0:], f.seed)
	binary.LittleEndian.PutUint64(params[8:], uint64(f.n))
	binary.LittleEndian.PutUint64(params[16:], f.blockLen)
	b, start := container.Begin(b, bloomery.KindXor8, Layout, f.hasher, params[:], len(f.fps))
	b = append(b, f.fps...)
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// use unkeyed hashing (see Decode for keyed filters). On error f is
// unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads an xor8 filter from the container format. want says which
// hasher the caller expects (see hashing.Expect). Every length is checked
// against data before anything is allocated; errors wrap
// bloomery.ErrCorrupt, ErrKindMismatch, ErrUnsupportedVersion,
// ErrIncompatible or ErrKeyRequired. The filter copies what it needs.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, hasher, params, payload, err := container.Open(data, bloomery.KindXor8, want)
	if err != nil {
		return nil, fmt.Errorf("xor: decode: %w", err)
	}
	if hdr.Layout != Layout {
		return nil, fmt.Errorf("xor: decode: layout %d (this build reads %d): %w", hdr.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "xor: params")
	seed := r.U64("seed")
	n := r.U64("keys")
	blockLen := r.U64("block length")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	f := &Filter{hasher: hasher, seed: seed}
	if n == 0 {
		if blockLen != 0 || len(payload) != 0 {
			return nil, fmt.Errorf("xor: params: empty filter with cells: %w", bloomery.ErrCorrupt)
		}
		return f, nil
	}
	// The block length is whatever Build chose for n keys; a decoder
	// accepts any length that holds n keys and matches the payload.
	if n > MaxKeys || blockLen == 0 || blockLen > 1<<40 || n > 3*blockLen {
		return nil, fmt.Errorf("xor: params: %d keys in blocks of %d cells: %w", n, blockLen, bloomery.ErrCorrupt)
	}
	if uint64(len(payload)) != 3*blockLen {
		return nil, fmt.Errorf("xor: payload is %d bytes, 3 blocks of %d need %d: %w", len(payload), blockLen, 3*blockLen, bloomery.ErrCorrupt)
	}
	fps := make([]uint8, len(payload))
	adviseHugePages(fps)
	copy(fps, payload)
	collapseHugePages(fps)
	f.n = int(n)
	f.blockLen = blockLen
	f.fps = fps
	return f, nil
}
