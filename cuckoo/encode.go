package cuckoo

import (
	"encoding/binary"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// Layout is the container layout byte this package writes: the index
// derivation (i1 = Reduce(h, m), tag = 1 + Reduce(h<<32, 2^f-1), the
// reflection alternate bucket) and the packed payload described below.
const Layout = 1

// paramsLen is the size of the layout-1 parameter block.
const paramsLen = 1 + 1 + 8 + 8 + 8 + 1 + 2 + 8

// AppendBinary appends the filter in the container format (kind cuckoo,
// layout 1).
//
// Format: params (little-endian)
//
//	u8   fingerprint bits f (8..16)
//	u8   bucket size (4)
//	u64  bucket count m (>= 1)
//	u64  design capacity (1..4m)
//	u64  fingerprints held, victim included
//	u8   victim slot used (0 or 1)
//	u16  victim fingerprint (0 if unused)
//	u64  victim bucket index (0 if unused)
//
// payload: the packed table, ceil(4*f*m/8) bytes: bucket i is bits
// [4f*i, 4f*(i+1)) of the little-endian bit string, slot j of it bits
// [f*j, f*(j+1)) of the bucket; 0 is an empty slot; unused bits of the last
// byte are zero.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	var p [paramsLen]byte
	p[0] = byte(f.fpBits)
	p[1] = BucketSize
	binary.LittleEndian.PutUint64(p[2:], f.buckets)
	binary.LittleEndian.PutUint64(p[10:], uint64(f.capacity))
	binary.LittleEndian.PutUint64(p[18:], uint64(f.count))
	if f.victim.used {
		p[26] = 1
		binary.LittleEndian.PutUint16(p[27:], uint16(f.victim.tag))
		binary.LittleEndian.PutUint64(p[29:], f.victim.index)
	}
	table := f.data[:len(f.data)-padding]
	b, start := container.Begin(b, bloomery.KindCuckoo, Layout, f.hasher, p[:], len(table))
	b = append(b, table...)
	return container.Finish(b, start), nil
}

// MarshalBinary returns the filter in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// use unkeyed hashing (use Decode with the key for keyed filters).
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a cuckoo filter from the container format. want says which
// hasher the caller expects (see hashing.Expect). Every field is checked
// against the input before anything is allocated; the fingerprint count is
// checked against the table. Errors wrap bloomery.ErrCorrupt,
// ErrUnsupportedVersion, ErrKindMismatch, ErrIncompatible or
// ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, h, params, payload, err := container.Open(data, bloomery.KindCuckoo, want)
	if err != nil {
		return nil, fmt.Errorf("cuckoo: decode: %w", err)
	}
	if hdr.Layout != Layout {
		return nil, fmt.Errorf("cuckoo: decode: layout %d (this build reads %d): %w", hdr.Layout, Layout, bloomery.ErrUnsupportedVersion)
	}
	r := wire.NewReader(params, "cuckoo: params")
	fb := int(r.U8("fingerprint bits"))
	bs := r.U8("bucket size")
	m := r.U64("buckets")
	capacity := r.U64("capacity")
	count := r.U64("count")
	vUsed := r.U8("victim used")
	vTag := uint64(r.U16("victim tag"))
	vIndex := r.U64("victim index")
	r.Done()
	if err := r.Err(); err != nil {
		return nil, err
	}
	switch {
	case fb < MinFingerprintBits || fb > MaxFingerprintBits:
		return nil, corrupt("fingerprint bits %d outside %d..%d", fb, MinFingerprintBits, MaxFingerprintBits)
	case bs != BucketSize:
		return nil, corrupt("bucket size %d, want %d", bs, BucketSize)
	case m == 0 || m > uint64(len(payload)):
		// Every bucket takes at least 4 bytes, so m <= len(payload).
		return nil, corrupt("bucket count %d for a %d-byte table", m, len(payload))
	case TableBytes(m, fb) != uint64(len(payload)):
		return nil, corrupt("table is %d bytes, %d buckets of %d-bit fingerprints need %d", len(payload), m, fb, TableBytes(m, fb))
	case capacity == 0 || capacity > m*BucketSize || capacity > MaxCapacity:
		return nil, corrupt("capacity %d for %d buckets", capacity, m)
	case vUsed > 1:
		return nil, corrupt("victim flag %d", vUsed)
	case vUsed == 0 && (vTag != 0 || vIndex != 0):
		return nil, corrupt("unused victim slot holds data")
	case vUsed == 1 && (vTag == 0 || vTag >= 1<<fb || vIndex >= m):
		return nil, corrupt("victim fingerprint %d in bucket %d", vTag, vIndex)
	}
	f := newFilter(m, fb, int(capacity), h)
	f.data = newTable(uint64(len(payload)) + padding)
	copy(f.data, payload)
	if rem := m * BucketSize * uint64(fb) % 8; rem != 0 && payload[len(payload)-1]>>rem != 0 {
		return nil, corrupt("non-zero bits after the last bucket")
	}
	held := uint64(0)
	for i := uint64(0); i < m; i++ {
		b := f.bucket(i)
		for j := uint(0); j < BucketSize; j++ {
			if b>>(j*f.fpBits)&f.fpMask != 0 {
				held++
			}
		}
	}
	if vUsed == 1 {
		f.victim = victim{used: true, tag: vTag, index: vIndex}
		held++
	}
	if held != count {
		return nil, corrupt("count %d, table holds %d fingerprints", count, held)
	}
	f.count = int(count)
	return f, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("cuckoo: decode: %s: %w", fmt.Sprintf(format, args...), bloomery.ErrCorrupt)
}
