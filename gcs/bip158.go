package gcs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// BIP-158 basic filter (type 0x00) parameters.
const (
	BIP158P = 19
	BIP158M = 784931
)

// opReturn is the opcode that marks a provably unspendable output script.
const opReturn = 0x6a

// BIP158Key returns the SipHash key of a block's basic filter: the first 16
// bytes of the block hash in internal byte order (the reverse of the usual
// hex display).
func BIP158Key(blockHash [32]byte) [16]byte {
	var k [16]byte
	copy(k[:], blockHash[:16])
	return k
}

// BIP158Params returns the parameters of a BIP-158 basic filter for the
// block with the given hash (internal byte order).
func BIP158Params(blockHash [32]byte) Params {
	return Params{P: BIP158P, M: BIP158M, Hasher: hashing.SipHash(BIP158Key(blockHash))}
}

// BuildBIP158 builds the BIP-158 basic filter of a block from its
// candidate elements: every output script of every transaction and the
// previous output script of every non-coinbase input. As the BIP
// requires, empty scripts and scripts that begin with OP_RETURN (0x6a) are
// left out, and duplicates are removed (as raw bytes) before N is counted.
// blockHash is in internal byte order. items is not modified.
func BuildBIP158(blockHash [32]byte, items [][]byte) (*Filter, error) {
	var b Builder
	return b.BuildBIP158(blockHash, items)
}

// BuildBIP158 is [BuildBIP158] reusing the builder's buffers.
func (b *Builder) BuildBIP158(blockHash [32]byte, items [][]byte) (*Filter, error) {
	b.items = b.items[:0]
	for _, it := range items {
		if len(it) == 0 || it[0] == opReturn {
			continue
		}
		b.items = append(b.items, it)
	}
	slices.SortFunc(b.items, bytes.Compare)
	b.items = slices.CompactFunc(b.items, bytes.Equal)
	if uint64(len(b.items)) >= 1<<32 {
		return nil, fmt.Errorf("gcs: BIP-158 filters hold fewer than 2^32 elements: %w", bloomery.ErrInvalidParams)
	}
	h := hashing.SipHash(BIP158Key(blockHash))
	b.hashes = b.hashes[:0]
	for _, it := range b.items {
		b.hashes = append(b.hashes, h.Sum64(it))
	}
	clear(b.items) // drop references to the caller's bytes
	b.tmp = sortHashes(b.hashes, b.tmp)
	// Not deduplicated by hash: distinct items count even if their
	// hashes collide, as in the BIP.
	return encode(b.hashes, BIP158P, BIP158M, h)
}

// AppendBytes appends the raw BIP-158 serialization of the filter:
// CompactSize(N) followed by the Golomb-Rice stream. For a BIP-158 basic
// filter this is exactly the filter a Bitcoin node serves (an empty filter
// is the single byte 0x00). Filters with other P and M serialize the same
// way, but only P and M known to the reader make the bytes meaningful.
func (f *Filter) AppendBytes(b []byte) []byte {
	b = appendCompactSize(b, f.n)
	return append(b, f.data...)
}

// Bytes returns the raw BIP-158 serialization (see [Filter.AppendBytes]).
func (f *Filter) Bytes() []byte {
	return f.AppendBytes(make([]byte, 0, 9+len(f.data)))
}

// Header returns the BIP-157 filter header of this filter given the
// previous block's filter header.
func (f *Filter) Header(prev [32]byte) [32]byte { return FilterHeader(f.Bytes(), prev) }

// ParseBIP158 reads the raw serialization of the BIP-158 basic filter of
// the block with the given hash (internal byte order). The whole stream is
// validated and copied. Errors wrap bloomery.ErrCorrupt.
func ParseBIP158(blockHash [32]byte, data []byte) (*Filter, error) {
	return ParseRaw(data, BIP158P, BIP158M, hashing.SipHash(BIP158Key(blockHash)))
}

// ParseRaw reads a raw GCS serialization (CompactSize N, then the stream)
// with parameters p and m hashed by h. The CompactSize must be minimally
// encoded and N below 2^32, as in Bitcoin.
func ParseRaw(data []byte, p int, m uint64, h hashing.Hasher) (*Filter, error) {
	n, k, err := readCompactSize(data)
	if err != nil {
		return nil, err
	}
	if n >= 1<<32 {
		return nil, fmt.Errorf("gcs: N = %d is not below 2^32: %w", n, bloomery.ErrCorrupt)
	}
	if p < MinP || p > MaxP {
		return nil, fmt.Errorf("gcs: P = %d outside [%d, %d]: %w", p, MinP, MaxP, bloomery.ErrInvalidParams)
	}
	return fromStream(data[k:], uint(p), m, n, h)
}

// FilterHash returns double-SHA256 of a serialized filter, in internal
// byte order.
func FilterHash(filter []byte) [32]byte {
	h := sha256.Sum256(filter)
	return sha256.Sum256(h[:])
}

// FilterHeader returns the BIP-157 filter header double-SHA256(
// double-SHA256(filter) || prev), where filter is the raw serialization
// and prev is the previous block's filter header (32 zero bytes before the
// genesis block), both in internal byte order.
func FilterHeader(filter []byte, prev [32]byte) [32]byte {
	var buf [64]byte
	fh := FilterHash(filter)
	copy(buf[:32], fh[:])
	copy(buf[32:], prev[:])
	h := sha256.Sum256(buf[:])
	return sha256.Sum256(h[:])
}

// appendCompactSize appends Bitcoin's variable-length integer.
func appendCompactSize(b []byte, n uint64) []byte {
	switch {
	case n < 0xfd:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(b, 0xfd), uint16(n))
	case n <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(n))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xff), n)
}

// readCompactSize decodes a minimally encoded CompactSize and returns the
// value and the number of bytes used.
func readCompactSize(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("gcs: empty input, no CompactSize: %w", bloomery.ErrCorrupt)
	}
	var n uint64
	var k int
	switch b[0] {
	case 0xfd:
		k = 3
	case 0xfe:
		k = 5
	case 0xff:
		k = 9
	default:
		return uint64(b[0]), 1, nil
	}
	if len(b) < k {
		return 0, 0, fmt.Errorf("gcs: truncated CompactSize: %w", bloomery.ErrCorrupt)
	}
	var min uint64
	switch k {
	case 3:
		n, min = uint64(binary.LittleEndian.Uint16(b[1:])), 0xfd
	case 5:
		n, min = uint64(binary.LittleEndian.Uint32(b[1:])), 0x10000
	default:
		n, min = binary.LittleEndian.Uint64(b[1:]), 0x100000000
	}
	if n < min {
		return 0, 0, fmt.Errorf("gcs: non-canonical CompactSize: %w", bloomery.ErrCorrupt)
	}
	return n, k, nil
}
