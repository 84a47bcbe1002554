package gcs

import (
	"encoding/binary"
	"math/bits"
)

// This file holds the Golomb-Rice bit stream: MSB-first packing, as BIP-158
// specifies. A delta d is written as q = d >> P one-bits, a zero-bit, then
// the low P bits of d, most significant first. The last byte is padded
// with zero bits.

// window returns the 64 bits of data that start at bit position pos,
// MSB-aligned. At least 57 of them are stream bits; positions past the end
// of data read as zero bits. It never panics.
func window(data []byte, pos uint64) uint64 {
	i := pos >> 3
	var w uint64
	if i+8 <= uint64(len(data)) {
		w = binary.BigEndian.Uint64(data[i:])
	} else {
		for j := uint64(0); j < 8; j++ {
			w <<= 8
			if i+j < uint64(len(data)) {
				w |= uint64(data[i+j])
			}
		}
	}
	return w << (pos & 7)
}

// windowBits is the number of bits of a window that are always valid.
const windowBits = 57

// readDelta decodes one Golomb-Rice code with parameter p (1..32) starting
// at bit pos and returns the delta and the position after it. maxQ bounds
// the unary quotient: a longer run returns ok = false, as does a code that
// does not end within totalBits. On validated streams ok is always true.
func readDelta(data []byte, pos uint64, p uint, maxQ uint64, totalBits uint64) (delta, next uint64, ok bool) {
	w := window(data, pos)
	q := uint(bits.LeadingZeros64(^w))
	if q+1+p <= windowBits {
		delta = uint64(q)<<p | (w<<(q+1))>>(64-p)
		next = pos + uint64(q) + 1 + uint64(p)
		return delta, next, uint64(q) <= maxQ && next <= totalBits
	}
	// Slow path: a long unary run, or one that ends near the window's end.
	var qq uint64
	for {
		if pos >= totalBits {
			return 0, pos, false
		}
		w = window(data, pos)
		ones := uint64(bits.LeadingZeros64(^w))
		if ones >= windowBits-1 {
			qq += windowBits - 1
			pos += windowBits - 1
			if qq > maxQ {
				return 0, pos, false
			}
			continue
		}
		qq += ones
		pos += ones + 1
		break
	}
	if qq > maxQ {
		return 0, pos, false
	}
	rem := window(data, pos) >> (64 - p)
	next = pos + uint64(p)
	return qq<<p | rem, next, next <= totalBits
}

// codeBits is the length in bits of the code of delta d.
func codeBits(d uint64, p uint) uint64 { return d>>p + 1 + uint64(p) }

// bitWriter packs bits MSB-first into a preallocated buffer.
type bitWriter struct {
	buf []byte
	acc uint64 // pending bits, right-aligned
	n   uint   // number of pending bits (< 8 between calls)
}

// put appends the low k bits of v (k <= 32).
func (w *bitWriter) put(v uint64, k uint) {
	w.acc = w.acc<<k | (v & (1<<k - 1))
	w.n += k
	for w.n >= 8 {
		w.n -= 8
		w.buf = append(w.buf, byte(w.acc>>w.n))
	}
}

// putCode appends the Golomb-Rice code of d with parameter p.
func (w *bitWriter) putCode(d uint64, p uint) {
	q := d >> p
	for q >= 32 {
		w.put(0xffffffff, 32)
		q -= 32
	}
	// q ones and the terminating zero.
	w.put((uint64(1)<<q-1)<<1, uint(q)+1)
	w.put(d, p)
}

// flush pads the last byte with zero bits.
func (w *bitWriter) flush() {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc<<(8-w.n)))
		w.n = 0
	}
	w.acc = 0
}
