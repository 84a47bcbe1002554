// Package container writes and reads Bloomery's versioned envelope, the one
// format every family persists in (docs/format.md documents every byte).
//
// Format (all integers little-endian):
//
//	off  size  field
//	0    4     magic "BLMY"
//	4    1     format version (1)
//	5    1     family kind (bloomery.Kind)
//	6    1     hash algorithm (hashing.Alg)
//	7    1     layout: the family's index-derivation/payload version
//	8    8     seed (XXH3/XXH64), or the key fingerprint (SipHash)
//	16   4     P = params length (<= MaxParams)
//	20   P     family parameters
//	20+P 8     L = payload length
//	28+P L     payload
//	28+P+L 4   CRC-32C (Castagnoli) of bytes [0, 28+P+L)
//
// Decoding validates the magic, version, both lengths against the input
// (before anything is allocated) and the checksum, then hands the family
// its params and payload as sub-slices of the input.
package container

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/wire"
)

// Magic opens every encoded filter.
const Magic = "BLMY"

// Version is the container format version this build writes. Readers
// accept versions 1..Version.
const Version = 1

// MaxParams bounds the parameter block.
const MaxParams = 1 << 16

// fixed sizes
const (
	prefixLen  = 20 // magic .. params length
	overhead   = prefixLen + 8 + 4
	trailerLen = 4
)

// Header is the decoded envelope of one filter.
type Header struct {
	Version uint8
	Kind    bloomery.Kind
	Hash    hashing.Alg
	Layout  uint8
	// Seed is the hash seed, or for keyed hashing the key fingerprint.
	Seed       uint64
	ParamsLen  int
	PayloadLen uint64
	// Checksum is the stored CRC-32C.
	Checksum uint32
	// Size is the total encoded size.
	Size uint64
}

// Begin appends the envelope's header and params for a payload of
// payloadLen bytes and returns the extended slice and the offset at which
// the envelope started (to pass to Finish). The caller appends exactly
// payloadLen payload bytes, then calls Finish.
func Begin(b []byte, kind bloomery.Kind, layout uint8, h hashing.Hasher, params []byte, payloadLen int) ([]byte, int) {
	start := len(b)
	b = wire.Grow(b, overhead+len(params)+payloadLen)
	b = append(b, Magic...)
	b = append(b, Version, byte(kind), byte(h.Alg()), layout)
	b = binary.LittleEndian.AppendUint64(b, h.Seed())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(params)))
	b = append(b, params...)
	b = binary.LittleEndian.AppendUint64(b, uint64(payloadLen))
	return b, start
}

// Finish appends the checksum of b[start:]. It panics if the payload
// written since Begin does not have the announced length (a programming
// error in the family, never a property of input bytes).
func Finish(b []byte, start int) []byte {
	env := b[start:]
	p := int(binary.LittleEndian.Uint32(env[16:]))
	want := binary.LittleEndian.Uint64(env[prefixLen+p:])
	if got := uint64(len(env) - prefixLen - p - 8); got != want {
		panic(fmt.Sprintf("container: payload is %d bytes, header announced %d", got, want))
	}
	return binary.LittleEndian.AppendUint32(b, wire.CRC32C(env))
}

// Append writes a complete envelope around payload.
func Append(b []byte, kind bloomery.Kind, layout uint8, h hashing.Hasher, params, payload []byte) []byte {
	b, start := Begin(b, kind, layout, h, params, len(payload))
	b = append(b, payload...)
	return Finish(b, start)
}

// Parse validates an envelope that must span all of data and returns its
// header, params and payload (sub-slices of data).
func Parse(data []byte) (Header, []byte, []byte, error) {
	h, err := peek(data)
	if err != nil {
		return Header{}, nil, nil, err
	}
	if h.Size != uint64(len(data)) {
		if h.Size > uint64(len(data)) {
			return Header{}, nil, nil, fmt.Errorf("container: truncated: need %d bytes, have %d: %w", h.Size, len(data), bloomery.ErrCorrupt)
		}
		return Header{}, nil, nil, fmt.Errorf("container: %d trailing bytes after the filter: %w", uint64(len(data))-h.Size, bloomery.ErrCorrupt)
	}
	body := data[:len(data)-trailerLen]
	if got := wire.CRC32C(body); got != h.Checksum {
		return Header{}, nil, nil, fmt.Errorf("container: checksum mismatch (stored %08x, computed %08x): %w", h.Checksum, got, bloomery.ErrCorrupt)
	}
	params := data[prefixLen : prefixLen+h.ParamsLen]
	payload := data[prefixLen+h.ParamsLen+8 : len(data)-trailerLen]
	return h, params, payload, nil
}

// Peek decodes the header fields from the start of data without checking
// the checksum or requiring the whole envelope; it needs the first
// 28+P bytes. Size tells how long the envelope is, so a stream reader
// can read exactly one filter.
func Peek(data []byte) (Header, error) { return peek(data) }

func peek(data []byte) (Header, error) {
	if len(data) < prefixLen {
		if len(data) >= len(Magic) && string(data[:len(Magic)]) != Magic {
			return Header{}, fmt.Errorf("container: bad magic %q (not a Bloomery filter): %w", data[:len(Magic)], bloomery.ErrCorrupt)
		}
		return Header{}, fmt.Errorf("container: truncated header (%d bytes): %w", len(data), bloomery.ErrCorrupt)
	}
	if string(data[:4]) != Magic {
		return Header{}, fmt.Errorf("container: bad magic %q (not a Bloomery filter): %w", data[:4], bloomery.ErrCorrupt)
	}
	h := Header{
		Version: data[4],
		Kind:    bloomery.Kind(data[5]),
		Hash:    hashing.Alg(data[6]),
		Layout:  data[7],
		Seed:    binary.LittleEndian.Uint64(data[8:]),
	}
	if h.Version == 0 || h.Version > Version {
		return Header{}, fmt.Errorf("container: format version %d (this build reads 1..%d): %w", h.Version, Version, bloomery.ErrUnsupportedVersion)
	}
	p := binary.LittleEndian.Uint32(data[16:])
	if p > MaxParams {
		return Header{}, fmt.Errorf("container: params length %d exceeds %d: %w", p, MaxParams, bloomery.ErrCorrupt)
	}
	h.ParamsLen = int(p)
	if uint64(len(data)) < uint64(prefixLen)+uint64(p)+8 {
		return Header{}, fmt.Errorf("container: truncated params: %w", bloomery.ErrCorrupt)
	}
	h.PayloadLen = binary.LittleEndian.Uint64(data[prefixLen+h.ParamsLen:])
	const maxSize = 1 << 50
	if h.PayloadLen > maxSize {
		return Header{}, fmt.Errorf("container: payload length %d is absurd: %w", h.PayloadLen, bloomery.ErrCorrupt)
	}
	h.Size = uint64(overhead) + uint64(h.ParamsLen) + h.PayloadLen
	if uint64(len(data)) >= h.Size {
		h.Checksum = binary.LittleEndian.Uint32(data[h.Size-trailerLen:])
	}
	return h, nil
}

// Open parses data as an envelope of the given kind and restores its
// hasher against the caller's expectation. It refuses another kind
// (ErrKindMismatch), an unknown kind or hash algorithm, and a hash that
// does not match want (ErrIncompatible, ErrKeyRequired).
func Open(data []byte, kind bloomery.Kind, want hashing.Expect) (Header, hashing.Hasher, []byte, []byte, error) {
	h, params, payload, err := Parse(data)
	if err != nil {
		return Header{}, hashing.Hasher{}, nil, nil, err
	}
	if h.Kind != kind {
		if !h.Kind.Valid() {
			return Header{}, hashing.Hasher{}, nil, nil, fmt.Errorf("container: kind byte %d: %w", h.Kind, bloomery.ErrUnknownKind)
		}
		return Header{}, hashing.Hasher{}, nil, nil, fmt.Errorf("container: holds a %s filter, not %s: %w", h.Kind, kind, bloomery.ErrKindMismatch)
	}
	hs, err := hashing.Restore(h.Hash, h.Seed, want)
	if err != nil {
		return Header{}, hashing.Hasher{}, nil, nil, fmt.Errorf("container: %w", err)
	}
	return h, hs, params, payload, nil
}
