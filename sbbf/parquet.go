package sbbf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
)

// Hashes of Parquet values: XXH64 with seed 0 of the value's PLAIN
// encoding. INT32/FLOAT are 4 little-endian bytes, INT64/DOUBLE 8, INT96
// 12; BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY are the raw bytes, without the
// 4-byte length prefix that PLAIN data pages carry. Floating-point values
// are hashed by their bit pattern, as the writers do, so +0 and -0 (and
// NaNs with different payloads) are different keys. None allocates.

// HashInt32 hashes an INT32 value.
func HashInt32(v int32) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(v))
	return Parquet.Sum64(b[:])
}

// HashInt64 hashes an INT64 value.
func HashInt64(v int64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return Parquet.Sum64(b[:])
}

// HashFloat32 hashes a FLOAT value.
func HashFloat32(v float32) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
	return Parquet.Sum64(b[:])
}

// HashFloat64 hashes a DOUBLE value.
func HashFloat64(v float64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
	return Parquet.Sum64(b[:])
}

// HashInt96 hashes an INT96 value (12 bytes as stored).
func HashInt96(v [12]byte) uint64 { return Parquet.Sum64(v[:]) }

// HashBytes hashes a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY value.
func HashBytes(v []byte) uint64 { return Parquet.Sum64(v) }

// HashString hashes a BYTE_ARRAY value given as a string.
func HashString(v string) uint64 { return Parquet.Sum64String(v) }

// Parquet physical types (the Type enum of parquet.thrift).
const (
	TypeBoolean           = 0
	TypeInt32             = 1
	TypeInt64             = 2
	TypeInt96             = 3
	TypeFloat             = 4
	TypeDouble            = 5
	TypeByteArray         = 6
	TypeFixedLenByteArray = 7
)

// AppendParquet appends the filter as Parquet stores it: a Thrift-compact
// BloomFilterHeader{1: numBytes, 2: algorithm = BLOCK, 3: hash = XXHASH,
// 4: compression = UNCOMPRESSED} followed by the bitset. Only filters
// hashed with [Parquet] (XXH64 seed 0) can be written; others return an
// error wrapping bloomery.ErrIncompatible, as do bitsets of 2^31 bytes or
// more (numBytes is an i32).
func (f *Filter) AppendParquet(b []byte) ([]byte, error) {
	if !f.hasher.Equal(Parquet) {
		return b, fmt.Errorf("sbbf: Parquet requires XXH64 seed 0, filter uses %v: %w", f.hasher, bloomery.ErrIncompatible)
	}
	size := f.SizeBytes()
	if size > math.MaxInt32 {
		return b, fmt.Errorf("sbbf: %d-byte bitset does not fit Parquet's i32 numBytes: %w", size, bloomery.ErrIncompatible)
	}
	b = appendI32Field(b, 1, int32(size))
	// Fields 2, 3, 4: unions whose member 1 (BLOCK, XXHASH, UNCOMPRESSED)
	// is an empty struct.
	for range 3 {
		b = append(b, 1<<4|tStruct, 1<<4|tStruct, tStop, tStop)
	}
	b = append(b, tStop)
	return f.appendBitset(b), nil
}

// ParquetHeaderSize returns the size of the Thrift header AppendParquet
// writes for this filter (16 bytes for 1 KiB, 17 for 128 KiB).
func (f *Filter) ParquetHeaderSize() int {
	return len(appendI32Field(nil, 1, int32(min(f.SizeBytes(), math.MaxInt32)))) + 13
}

// ParseParquet reads a Parquet bloom filter (Thrift-compact
// BloomFilterHeader, then numBytes of bitset) from the start of data and
// returns it with the number of bytes consumed. It requires algorithm
// BLOCK, hash XXHASH and compression UNCOMPRESSED, a numBytes that is a
// positive multiple of 32 present in full in data, and skips unknown
// header fields. The bitset is copied. Errors wrap bloomery.ErrCorrupt
// (malformed) or ErrIncompatible (another algorithm, hash or compression).
func ParseParquet(data []byte) (*Filter, int, error) {
	r := &tReader{b: data}
	var numBytes int32
	var last int16
	seen := 0
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			break
		}
		last = id
		switch {
		case id == 1 && t == tI32:
			numBytes = r.i32()
			seen |= 1 << 1
		case id >= 2 && id <= 4 && t == tStruct:
			member := r.unionField(1)
			if r.err == nil && member != 1 {
				names := [...]string{2: "algorithm", 3: "hash", 4: "compression"}
				return nil, 0, fmt.Errorf("sbbf: Parquet bloom filter %s member %d is not supported (only BLOCK, XXHASH, UNCOMPRESSED): %w", names[id], member, bloomery.ErrIncompatible)
			}
			seen |= 1 << id
		default:
			r.skip(t, 1)
		}
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	if seen != 1<<1|1<<2|1<<3|1<<4 {
		return nil, 0, fmt.Errorf("sbbf: Parquet bloom filter header lacks required fields (mask %b): %w", seen, bloomery.ErrCorrupt)
	}
	if numBytes <= 0 || numBytes%BlockBytes != 0 {
		return nil, 0, fmt.Errorf("sbbf: Parquet numBytes %d is not a positive multiple of 32: %w", numBytes, bloomery.ErrCorrupt)
	}
	if int(numBytes) > len(data)-r.off {
		return nil, 0, fmt.Errorf("sbbf: Parquet bitset of %d bytes, only %d present: %w", numBytes, len(data)-r.off, bloomery.ErrCorrupt)
	}
	f, err := FromBitset(data[r.off:r.off+int(numBytes)], Parquet)
	if err != nil {
		return nil, 0, err
	}
	return f, r.off + int(numBytes), nil
}

// Column describes one column chunk of a Parquet file, from its footer.
type Column struct {
	RowGroup, Index int
	// Path is the column's path in the schema.
	Path []string
	// Type is the physical type (TypeInt64, TypeByteArray, ...).
	Type int32
	// HasBloom reports whether the chunk has a bloom filter, at
	// BloomOffset; BloomLength (header included) is 0 when the writer did
	// not record it (it was added in format 2.10).
	HasBloom    bool
	BloomOffset int64
	BloomLength int32
}

// ParquetColumns reads the footer of a Parquet file (FileMetaData, Thrift
// compact) and lists every column chunk with its bloom-filter location.
// Only the fields it needs are decoded; the rest are skipped with bounds
// checks. Encrypted footers ("PARE") are not supported.
func ParquetColumns(file []byte) ([]Column, error) {
	if len(file) < 12 || string(file[:4]) != "PAR1" || string(file[len(file)-4:]) != "PAR1" {
		return nil, fmt.Errorf("sbbf: not a plaintext Parquet file (PAR1 magic missing): %w", bloomery.ErrCorrupt)
	}
	mlen := uint64(binary.LittleEndian.Uint32(file[len(file)-8:]))
	if mlen > uint64(len(file)-12) {
		return nil, fmt.Errorf("sbbf: footer length %d exceeds the file: %w", mlen, bloomery.ErrCorrupt)
	}
	meta := file[len(file)-8-int(mlen) : len(file)-8]
	r := &tReader{b: meta}
	var cols []Column
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			break
		}
		last = id
		if id == 4 && t == tList { // row_groups
			n, elem := r.list()
			if r.err == nil && elem != tStruct && n > 0 {
				r.fail("row_groups of type %d", elem)
			}
			for rg := 0; rg < n && r.err == nil; rg++ {
				cols = readRowGroup(r, rg, cols)
			}
			continue
		}
		r.skip(t, 1)
	}
	if r.err != nil {
		return nil, r.err
	}
	return cols, nil
}

func readRowGroup(r *tReader, rg int, cols []Column) []Column {
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			break
		}
		last = id
		if id == 1 && t == tList { // columns
			n, elem := r.list()
			if r.err == nil && elem != tStruct && n > 0 {
				r.fail("columns of type %d", elem)
			}
			for i := 0; i < n && r.err == nil; i++ {
				cols = append(cols, readColumnChunk(r, rg, i))
			}
			continue
		}
		r.skip(t, 2)
	}
	return cols
}

func readColumnChunk(r *tReader, rg, idx int) Column {
	c := Column{RowGroup: rg, Index: idx}
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			break
		}
		last = id
		if id == 3 && t == tStruct { // meta_data
			readColumnMeta(r, &c)
			continue
		}
		r.skip(t, 3)
	}
	return c
}

func readColumnMeta(r *tReader, c *Column) {
	var last int16
	for r.err == nil {
		id, t := r.field(last)
		if t == tStop {
			return
		}
		last = id
		switch {
		case id == 1 && t == tI32:
			c.Type = r.i32()
		case id == 3 && t == tList:
			n, elem := r.list()
			if r.err == nil && elem != tBinary && n > 0 {
				r.fail("path_in_schema of type %d", elem)
			}
			c.Path = make([]string, 0, n)
			for i := 0; i < n && r.err == nil; i++ {
				c.Path = append(c.Path, string(r.binary()))
			}
		case id == 14 && t == tI64:
			c.BloomOffset = r.i64()
			c.HasBloom = true
		case id == 15 && t == tI32:
			c.BloomLength = r.i32()
		default:
			r.skip(t, 4)
		}
	}
}

// ReadParquetFilter reads the bloom filter of column chunk c (from
// [ParquetColumns]) out of the whole file. When the footer recorded the
// filter's length, the header and bitset must fill it exactly.
func ReadParquetFilter(file []byte, c Column) (*Filter, error) {
	if !c.HasBloom {
		return nil, fmt.Errorf("sbbf: column %v of row group %d has no bloom filter: %w", c.Path, c.RowGroup, bloomery.ErrIncompatible)
	}
	if c.BloomOffset < 0 || c.BloomOffset >= int64(len(file)) {
		return nil, fmt.Errorf("sbbf: bloom filter offset %d outside the file: %w", c.BloomOffset, bloomery.ErrCorrupt)
	}
	region := file[c.BloomOffset:]
	if c.BloomLength != 0 {
		if c.BloomLength < 0 || int64(c.BloomLength) > int64(len(region)) {
			return nil, fmt.Errorf("sbbf: bloom filter length %d outside the file: %w", c.BloomLength, bloomery.ErrCorrupt)
		}
		region = region[:c.BloomLength]
	}
	f, n, err := ParseParquet(region)
	if err != nil {
		return nil, err
	}
	if c.BloomLength != 0 && n != int(c.BloomLength) {
		return nil, fmt.Errorf("sbbf: bloom filter is %d bytes, footer says %d: %w", n, c.BloomLength, bloomery.ErrCorrupt)
	}
	return f, nil
}
