// Package keyspace holds the server's named filters: a map from key to
// value, the memory accounting that --maxmemory is checked against, and
// the snapshot encoding of every value type.
//
// Concurrency: the Store embeds a sync.RWMutex. The command dispatcher
// holds the write lock for every command that may modify the keyspace and
// the read lock for read-only ones, so values need no locks of their own
// and every command is atomic. Lock order: Store before the persistence
// log's locks.
package keyspace

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/server/internal/rbcuckoo"
)

// TYPE names, RedisBloom's.
const (
	TypeBloom  = "MBbloom--"
	TypeCuckoo = "MBbloomCF"
)

// Value is one stored filter.
type Value interface {
	// Type is the name TYPE reports.
	Type() string
	// MemBytes is the memory the value accounts for against maxmemory.
	MemBytes() uint64
	// Stats describes the filter (INFO, metrics, BLOOMERY.STATS).
	Stats() bloomery.Stats
	// Counters are the key's query statistics.
	Counters() *Counters
}

// Counters measure a filter's real false-positive rate: clients report
// each false positive they confirm (BLOOMERY.FP), and every negative
// answer is counted, so reported / (reported + negatives) estimates the
// FPR over the absent items queried. Reported changes under the write
// lock; Negatives is atomic (it grows under the read lock).
type Counters struct {
	Reported  uint64
	Negatives atomic.Uint64
}

// Answer counts a negative answer and returns it unchanged.
func (c *Counters) Answer(present bool) bool {
	if !present {
		c.Negatives.Add(1)
	}
	return present
}

// MeasuredFPR is reported / (reported + negatives), or -1 before any
// query of an absent item.
func (c *Counters) MeasuredFPR() float64 {
	n := c.Negatives.Load()
	if c.Reported+n == 0 {
		return -1
	}
	return float64(c.Reported) / float64(c.Reported+n)
}

// Cuckoo is a CF.* key.
type Cuckoo struct {
	*rbcuckoo.Filter
	C *Counters
}

// NewCuckoo wraps f.
func NewCuckoo(f *rbcuckoo.Filter) Cuckoo { return Cuckoo{f, new(Counters)} }

func (Cuckoo) Type() string            { return TypeCuckoo }
func (c Cuckoo) MemBytes() uint64      { return c.Size() }
func (c Cuckoo) Counters() *Counters   { return c.C }
func (c Cuckoo) Stats() bloomery.Stats { return c.Filter.Stats() }

// Family is a key holding any Bloomery family (BLOOMERY.* commands),
// persisted in the container format. Key, when set, is the SipHash key of
// a keyed filter (needed to reload it). KeyID, when set, names Key in the
// server's key file: the snapshot then records the id, not the key.
type Family struct {
	F     bloomery.Filter
	Key   *[16]byte
	KeyID string
	C     *Counters
}

// NewFamily wraps f.
func NewFamily(f bloomery.Filter, key *[16]byte) Family {
	return Family{F: f, Key: key, C: new(Counters)}
}

// TypePrefix starts the TYPE name of family keys ("bloomery-blocked").
const TypePrefix = "bloomery-"

func (v Family) Type() string          { return TypePrefix + v.F.Kind().String() }
func (v Family) MemBytes() uint64      { return uint64(v.F.SizeBytes()) }
func (v Family) Counters() *Counters   { return v.C }
func (v Family) Stats() bloomery.Stats { return v.F.Stats() }

// EntryOverhead is what a key costs besides its name and its value's
// MemBytes: the map slot (string and interface headers, at the map's load
// factor), the boxed value and its Counters. It is an estimate of Go's
// layout, charged so that many small keys cannot hold memory maxmemory
// does not see.
const EntryOverhead = 96

// EntryBytes is what storing a new key of this name costs in the
// accounting, besides its value: len(key) + EntryOverhead.
func EntryBytes(key []byte) uint64 { return uint64(len(key)) + EntryOverhead }

// Store is the keyspace. The zero value is not usable; call New.
type Store struct {
	sync.RWMutex
	m map[string]Value
	// used is the accounted memory: every value's MemBytes plus
	// EntryBytes of every key.
	used uint64
	// Dirty counts modifications since the last snapshot.
	Dirty uint64
}

// New returns an empty store.
func New() *Store { return &Store{m: make(map[string]Value)} }

// Get returns the value at key (nil if absent). The caller holds a lock.
func (s *Store) Get(key []byte) Value { return s.m[string(key)] }

// Set stores v at key, replacing and un-accounting any old value. A new
// key's name is accounted too (EntryBytes).
func (s *Store) Set(key []byte, v Value) {
	if old, ok := s.m[string(key)]; ok {
		s.used -= old.MemBytes()
	} else {
		s.used += EntryBytes(key)
	}
	s.m[string(key)] = v
	s.used += v.MemBytes()
}

// Delete removes key and reports whether it existed.
func (s *Store) Delete(key []byte) bool {
	old, ok := s.m[string(key)]
	if ok {
		s.used -= old.MemBytes() + EntryBytes(key)
		delete(s.m, string(key))
	}
	return ok
}

// Rename moves src to dst (replacing dst); false if src is absent.
func (s *Store) Rename(src, dst []byte) bool {
	v, ok := s.m[string(src)]
	if !ok {
		return false
	}
	if string(src) == string(dst) {
		return true
	}
	s.Delete(dst)
	delete(s.m, string(src))
	s.m[string(dst)] = v
	s.used += EntryBytes(dst) - EntryBytes(src)
	return true
}

// Grew accounts for a value whose size changed in place from old to now.
func (s *Store) Grew(old, now uint64) { s.used += now - old }

// Flush removes every key.
func (s *Store) Flush() {
	s.m = make(map[string]Value)
	s.used = 0
}

// Len is the number of keys.
func (s *Store) Len() int { return len(s.m) }

// Used is the accounted memory in bytes: the values' MemBytes and the
// keys' EntryBytes.
func (s *Store) Used() uint64 { return s.used }

// Keys returns all keys, sorted (SCAN's stable order).
func (s *Store) Keys() []string {
	ks := make([]string, 0, len(s.m))
	for k := range s.m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Each calls fn for every key in unspecified order.
func (s *Store) Each(fn func(key string, v Value)) {
	for k, v := range s.m {
		fn(k, v)
	}
}

// Snapshot value encoding: type byte, then
//
//	bloom:  u64 reported, u64 negatives, u32 header length, header, u64 data length, bit arrays
//	cuckoo: u64 reported, u64 negatives, u32 header length, header, u64 data length, slots
//
// (header and data are the SCANDUMP header and concatenated chunks).
//
//	family: u64 reported, u64 negatives, u8 keyed, key, container bytes
//
// where keyed is 0 (no key follows), 1 ([16]byte SipHash key) or 2 (u8
// length and the id of a key in the key file).
const (
	typeBloom  = 1
	typeCuckoo = 2
	typeFamily = 3
	// typeCuckooWalk is typeCuckoo followed by the filter's eviction-walk
	// counter (u64), which replay of the log after a snapshot needs to
	// take the same kicks as the live adds did (see rbcuckoo.Filter.Walk);
	// typeCuckoo values, written before it, load with the counter at 0.
	typeCuckooWalk = 4
	// typeFamilyWalk is typeFamily followed by the filter's walk state
	// (u64), for families whose inserts depend on one (cuckoo's eviction
	// walk; see walker).
	typeFamilyWalk = 5
)

// walker is a filter whose inserts depend on state outside its table (the
// cuckoo family's eviction walk): the snapshot stores it so that replay of
// the log after a snapshot makes the same inserts as the live server did.
type walker interface {
	Walk() uint64
	SetWalk(uint64)
}

// AppendValue appends v's snapshot encoding.
func AppendValue(b []byte, v Value) []byte {
	var hdr []byte
	var chunk func(off uint64) []byte
	switch x := v.(type) {
	case Family:
		w, hasWalk := x.F.(walker)
		if hasWalk {
			b = append(b, typeFamilyWalk)
		} else {
			b = append(b, typeFamily)
		}
		b = binary.LittleEndian.AppendUint64(b, x.C.Reported)
		b = binary.LittleEndian.AppendUint64(b, x.C.Negatives.Load())
		if x.KeyID != "" {
			b = append(b, 2, byte(len(x.KeyID)))
			b = append(b, x.KeyID...)
		} else if x.Key != nil {
			b = append(b, 1)
			b = append(b, x.Key[:]...)
		} else {
			b = append(b, 0)
		}
		out, err := x.F.AppendBinary(b)
		if err != nil {
			panic(fmt.Sprintf("keyspace: encode %v: %v", x.F.Kind(), err))
		}
		if hasWalk {
			out = binary.LittleEndian.AppendUint64(out, w.Walk())
		}
		return out
	case Bloom:
		b = append(b, typeBloom)
		b = binary.LittleEndian.AppendUint64(b, x.C.Reported)
		b = binary.LittleEndian.AppendUint64(b, x.C.Negatives.Load())
		hdr = x.AppendHeader(nil)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
		b = append(b, hdr...)
		b = binary.LittleEndian.AppendUint64(b, x.RawLen())
		return x.AppendData(b)
	case Cuckoo:
		b = append(b, typeCuckooWalk)
		hdr = x.AppendHeader(nil)
		chunk = x.Chunk
	default:
		panic(fmt.Sprintf("keyspace: unknown value type %T", v))
	}
	b = binary.LittleEndian.AppendUint64(b, v.Counters().Reported)
	b = binary.LittleEndian.AppendUint64(b, v.Counters().Negatives.Load())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	b = append(b, hdr...)
	lenAt := len(b)
	b = binary.LittleEndian.AppendUint64(b, 0)
	var off uint64
	for {
		c := chunk(off)
		if c == nil {
			break
		}
		b = append(b, c...)
		off += uint64(len(c))
	}
	binary.LittleEndian.PutUint64(b[lenAt:], off)
	if c, ok := v.(Cuckoo); ok {
		b = binary.LittleEndian.AppendUint64(b, c.Walk())
	}
	return b
}

// DecodeValue parses one snapshot value. limit bounds the memory the
// value may allocate.
func DecodeValue(p []byte, limit uint64) (Value, error) { return DecodeValueKeys(p, limit, nil) }

// DecodeValueKeys is DecodeValue for a snapshot whose keyed filters may
// name their key by id: keys maps ids to keys, and an id it lacks is an
// error naming the id.
func DecodeValueKeys(p []byte, limit uint64, keys map[string][16]byte) (Value, error) {
	bad := fmt.Errorf("keyspace: value encoding: %w", bloomery.ErrCorrupt)
	if len(p) < 1+16+4 {
		return nil, bad
	}
	typ := p[0]
	reported := binary.LittleEndian.Uint64(p[1:])
	negatives := binary.LittleEndian.Uint64(p[9:])
	setCounters := func(c *Counters) {
		c.Reported = reported
		c.Negatives.Store(negatives)
	}
	if typ == typeFamily || typ == typeFamilyWalk {
		body := p[17:]
		var walk uint64
		if typ == typeFamilyWalk {
			if len(body) < 8 {
				return nil, bad
			}
			walk = binary.LittleEndian.Uint64(body[len(body)-8:])
			body = body[:len(body)-8]
		}
		v, err := decodeFamily(body, limit, keys)
		if err != nil {
			return nil, err
		}
		if w, ok := v.F.(walker); ok && typ == typeFamilyWalk {
			w.SetWalk(walk)
		}
		setCounters(v.C)
		return v, nil
	}
	hl := uint64(binary.LittleEndian.Uint32(p[17:]))
	p = p[21:]
	if uint64(len(p)) < hl+8 {
		return nil, bad
	}
	hdr := p[:hl]
	dl := binary.LittleEndian.Uint64(p[hl:])
	data := p[hl+8:]
	var walk uint64
	if typ == typeCuckooWalk {
		if len(data) < 8 {
			return nil, bad
		}
		walk = binary.LittleEndian.Uint64(data[len(data)-8:])
		data = data[:len(data)-8]
	}
	if uint64(len(data)) != dl {
		return nil, bad
	}
	switch typ {
	case typeBloom:
		c, err := BloomFromHeader(hdr, limit)
		if err != nil {
			return nil, err
		}
		v := NewBloom(c)
		if c.RawLen() != dl {
			return nil, bad
		}
		if err := v.LoadChunk(0, data); err != nil {
			return nil, err
		}
		setCounters(v.C)
		return v, nil
	case typeCuckoo, typeCuckooWalk:
		f, err := rbcuckoo.FromHeader(hdr, limit)
		if err != nil {
			return nil, err
		}
		if f.DataLen() != dl {
			return nil, bad
		}
		if err := f.LoadChunk(0, data); err != nil {
			return nil, err
		}
		f.SetWalk(walk)
		v := NewCuckoo(f)
		setCounters(v.C)
		return v, nil
	}
	return nil, fmt.Errorf("keyspace: unknown value type %d: %w", typ, bloomery.ErrCorrupt)
}

func decodeFamily(p []byte, limit uint64, keys map[string][16]byte) (Family, error) {
	if len(p) < 1 {
		return Family{}, fmt.Errorf("keyspace: family value: %w", bloomery.ErrCorrupt)
	}
	var key *[16]byte
	var id string
	switch p[0] {
	case 2:
		if len(p) < 2 || len(p) < 2+int(p[1]) {
			return Family{}, fmt.Errorf("keyspace: family value: %w", bloomery.ErrCorrupt)
		}
		id = string(p[2 : 2+int(p[1])])
		p = p[2+int(p[1]):]
		k, ok := keys[id]
		if !ok {
			return Family{}, fmt.Errorf("keyspace: the filter's SipHash key %q is not in the key file", id)
		}
		key = &k
	case 1:
		if len(p) < 17 {
			return Family{}, fmt.Errorf("keyspace: family value: %w", bloomery.ErrCorrupt)
		}
		key = new([16]byte)
		copy(key[:], p[1:17])
		p = p[17:]
	default:
		p = p[1:]
	}
	if uint64(len(p)) > limit {
		return Family{}, fmt.Errorf("keyspace: family value of %d bytes over the limit: %w", len(p), bloomery.ErrCorrupt)
	}
	f, err := DecodeFilter(p, key)
	if err != nil {
		return Family{}, err
	}
	v := NewFamily(f, key)
	v.KeyID = id
	return v, nil
}

// DecodeFilter decodes a container-format filter; key is required for a
// keyed (SipHash) filter and must be nil otherwise.
func DecodeFilter(data []byte, key *[16]byte) (bloomery.Filter, error) {
	want := hashing.Expect{}
	if key != nil {
		want = hashing.Want(hashing.SipHash(*key))
	}
	return codec.Decode(data, want)
}
