package sbbf

import (
	"fmt"

	"github.com/bloomery/bloomery"
)

// A minimal reader and writer for Apache Thrift's compact protocol, enough
// for Parquet's BloomFilterHeader and for walking FileMetaData to the
// bloom-filter offsets. Every read is bounds-checked; nesting is limited.

// Compact protocol type ids.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// maxDepth bounds struct and container nesting while skipping.
const maxDepth = 32

type tReader struct {
	b   []byte
	off int
	err error
}

func (r *tReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("sbbf: thrift: %s at offset %d: %w", fmt.Sprintf(format, args...), r.off, bloomery.ErrCorrupt)
	}
}

func (r *tReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("truncated")
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *tReader) uvarint() uint64 {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift == 63 && c > 1 {
			r.fail("varint overflows 64 bits")
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.fail("varint too long")
	return 0
}

func (r *tReader) i64() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *tReader) i32() int32 {
	v := r.i64()
	if v != int64(int32(v)) {
		r.fail("i32 out of range")
		return 0
	}
	return int32(v)
}

// binary returns a length-prefixed byte string (a sub-slice).
func (r *tReader) binary() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail("string of %d bytes past the end", n)
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// field reads a field header; typ is tStop at the end of a struct. last is
// the previous field id of this struct (for delta encoding).
func (r *tReader) field(last int16) (id int16, typ byte) {
	c := r.byte()
	if r.err != nil || c == tStop {
		return 0, tStop
	}
	typ = c & 0x0f
	if d := c >> 4; d != 0 {
		id = last + int16(d)
	} else {
		v := r.i64()
		if v != int64(int16(v)) {
			r.fail("field id out of range")
			return 0, tStop
		}
		id = int16(v)
	}
	if typ == tStop || typ > tStruct {
		r.fail("field type %d", typ)
		return 0, tStop
	}
	return id, typ
}

// list reads a list or set header.
func (r *tReader) list() (n int, elem byte) {
	c := r.byte()
	size := uint64(c >> 4)
	elem = c & 0x0f
	if size == 15 {
		size = r.uvarint()
	}
	// Every element takes at least one byte (booleans and structs
	// included), so a longer list cannot fit in the input.
	if r.err == nil && size > uint64(len(r.b)-r.off) {
		r.fail("list of %d elements past the end", size)
	}
	if r.err != nil {
		return 0, 0
	}
	return int(size), elem
}

// skip consumes one value of type typ.
func (r *tReader) skip(typ byte, depth int) {
	if depth > maxDepth {
		r.fail("nesting deeper than %d", maxDepth)
		return
	}
	switch typ {
	case tTrue, tFalse:
		// Field booleans carry the value in the type; list booleans are a
		// byte, consumed by the caller through skipElem.
	case tByte:
		r.byte()
	case tI16, tI32, tI64:
		r.uvarint()
	case tDouble:
		if len(r.b)-r.off < 8 {
			r.fail("truncated double")
			return
		}
		r.off += 8
	case tBinary:
		r.binary()
	case tList, tSet:
		n, elem := r.list()
		for i := 0; i < n && r.err == nil; i++ {
			r.skipElem(elem, depth+1)
		}
	case tMap:
		n := r.uvarint()
		if n == 0 || r.err != nil {
			return
		}
		if n > uint64(len(r.b)-r.off) {
			r.fail("map of %d entries past the end", n)
			return
		}
		kv := r.byte()
		for i := uint64(0); i < n && r.err == nil; i++ {
			r.skipElem(kv>>4, depth+1)
			r.skipElem(kv&0x0f, depth+1)
		}
	case tStruct:
		var last int16
		for r.err == nil {
			id, t := r.field(last)
			if t == tStop {
				return
			}
			r.skip(t, depth+1)
			last = id
		}
	default:
		r.fail("type %d", typ)
	}
}

// skipElem consumes one list, set or map element of type typ.
func (r *tReader) skipElem(typ byte, depth int) {
	if typ == tTrue || typ == tFalse {
		r.byte()
		return
	}
	r.skip(typ, depth)
}

// unionField reads a single-field union whose members are all empty
// structs and returns the id of the member that is set.
func (r *tReader) unionField(depth int) int16 {
	var last, chosen int16
	set := 0
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			break
		}
		if t == tStruct {
			chosen = id
			set++
		}
		r.skip(t, depth+1)
		last = id
	}
	if r.err == nil && set != 1 {
		r.fail("union with %d members set", set)
	}
	return chosen
}

// appendI32Field appends a compact i32 field header and value.
func appendI32Field(b []byte, delta byte, v int32) []byte {
	b = append(b, delta<<4|tI32)
	u := uint64(uint32((v << 1) ^ (v >> 31)))
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}
