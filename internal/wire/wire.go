// Package wire holds bounds-checked little-endian decoding and the CRC-32C
// used by the container format. Every read checks the remaining input
// before it touches or allocates anything, and reports a short input as an
// error wrapping bloomery.ErrCorrupt, never as a panic.
package wire

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/bloomery/bloomery"
)

// Castagnoli is the CRC-32C table (hardware accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC32C continues a CRC-32C over b.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// Reader decodes little-endian fields from a byte slice. After the first
// failure every read returns zero values and Err reports the failure, so a
// decoder can read a whole record and check once.
type Reader struct {
	b   []byte
	off int
	err error
	ctx string
}

// NewReader returns a Reader over b. ctx prefixes error messages
// ("bloom: params").
func NewReader(b []byte, ctx string) *Reader { return &Reader{b: b, ctx: ctx} }

// Err returns the first error, if any.
func (r *Reader) Err() error { return r.err }

// Offset returns the number of bytes consumed.
func (r *Reader) Offset() int { return r.off }

// Len returns the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) - r.off }

func (r *Reader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = fmt.Errorf("%s: %s: need %d bytes at offset %d, have %d: %w", r.ctx, what, n, r.off, len(r.b)-r.off, bloomery.ErrCorrupt)
		return false
	}
	return true
}

// Fail records err (if no error was recorded yet).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s: %w", r.ctx, fmt.Sprintf(format, args...), bloomery.ErrCorrupt)
	}
}

// U8 reads one byte.
func (r *Reader) U8(what string) uint8 {
	if !r.need(1, what) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

// U16 reads a little-endian uint16.
func (r *Reader) U16(what string) uint16 {
	if !r.need(2, what) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

// U32 reads a little-endian uint32.
func (r *Reader) U32(what string) uint32 {
	if !r.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

// U64 reads a little-endian uint64.
func (r *Reader) U64(what string) uint64 {
	if !r.need(8, what) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// F64 reads a little-endian IEEE-754 float64.
func (r *Reader) F64(what string) float64 {
	return float64frombits(r.U64(what))
}

// Bytes returns the next n bytes without copying. n is checked against the
// remaining input first, so a hostile length cannot cause an allocation.
func (r *Reader) Bytes(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.need(len(r.b)-r.off+1, what) // records the error
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// Uint64s decodes n little-endian uint64 words into a new slice, after
// checking that 8*n bytes remain.
func (r *Reader) Uint64s(n uint64, what string) []uint64 {
	if n > uint64(r.Len())/8 {
		r.need(r.Len()+1, what)
		return nil
	}
	b := r.Bytes(8*n, what)
	if b == nil && n > 0 {
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// Done records an error if unread bytes remain.
func (r *Reader) Done() {
	if r.err == nil && r.off != len(r.b) {
		r.err = fmt.Errorf("%s: %d trailing bytes: %w", r.ctx, len(r.b)-r.off, bloomery.ErrCorrupt)
	}
}

// AppendUint64s appends words little-endian.
func AppendUint64s(b []byte, words []uint64) []byte {
	b = grow(b, 8*len(words))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// AppendF64 appends an IEEE-754 float64 little-endian.
func AppendF64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, float64bits(v))
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b
}

// Grow makes room for n more bytes.
func Grow(b []byte, n int) []byte { return grow(b, n) }
