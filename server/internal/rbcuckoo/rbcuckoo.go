// Package rbcuckoo is the server's cuckoo filter with RedisBloom's
// observable arithmetic (CF.*): 8-bit fingerprints, buckets of
// BucketSize slots (default 2, 1..255), a chain of up to MaxFilters
// sub-filters that grow by Expansion (rounded up to a power of two),
// bounded kicks with rollback, and CF.INFO's figures. It is written from
// the documented behaviour (docs/commands.md), not from RedisBloom's
// source. Package cuckoo is Bloomery's own cuckoo family (buckets of 4);
// this one exists only for RedisBloom compatibility.
//
// Hashing: h = XXH3(item), fingerprint fp = h%255 + 1 (never 0, which
// marks an empty slot), first index i1 = h, alternate index
// i2 = i1 XOR (fp * 0x5bd1e995); bucket = index & (buckets-1). Bucket
// counts are powers of two, so the XOR is an involution on bucket
// numbers and a fingerprint can always find its other bucket.
//
// Sub-filter j has Buckets*Expansion^j buckets. An insert tries a free
// slot in either bucket of every sub-filter (newest first), then kicks in
// the newest sub-filter up to MaxIterations times (undone on failure),
// then grows the chain when Expansion > 0. Victims are chosen
// deterministically, so replaying the same commands rebuilds the same
// filter.
//
// Costs: every operation touches two buckets per sub-filter; no operation
// allocates except growth. Not safe for concurrent use.
package rbcuckoo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// Defaults and limits.
const (
	DefaultCapacity      = 1024
	DefaultBucketSize    = 2
	DefaultMaxIterations = 20
	DefaultExpansion     = 1
	MaxFilters           = 32
	MaxCapacity          = 1 << 30
	MaxExpansion         = 32768
	altMul               = 0x5bd1e995

	// Size accounting that matches CF.INFO Size: 40 + 16 per sub-filter
	// + slot bytes.
	chainOverhead  = 40
	filterOverhead = 16

	// HeaderLen is the length of the dump header.
	HeaderLen = 38
	// MaxChunk bounds one SCANDUMP data chunk.
	MaxChunk = 16 << 20
)

// Errors with RedisBloom's reply texts.
var (
	ErrFull = errors.New("Filter is full")
	//lint:ignore ST1005 RedisBloom's reply text, sent to clients as is
	ErrMaxExpansions = errors.New("Maximum expansions reached")
)

var hasher = hashing.XXH3(0)

type sub struct {
	slots   []uint8 // buckets*bucketSize fingerprints, 0 = empty
	buckets uint64  // power of two
}

// Filter is a RedisBloom-compatible cuckoo filter chain.
type Filter struct {
	subs          []sub
	buckets       uint64 // first sub-filter's bucket count
	bucketSize    uint16
	maxIterations uint16
	expansion     uint16
	items         uint64
	deleted       uint64
	kick          uint64     // deterministic victim counter
	path          []kickStep // scratch for undoing a failed kick chain
}

type kickStep struct {
	bucket uint64
	slot   uint16
}

// NextPow2 rounds v up to a power of two (min 1).
func NextPow2(v uint64) uint64 {
	if v <= 1 {
		return 1
	}
	return 1 << (64 - bits.LeadingZeros64(v-1))
}

// Params are CF.RESERVE's arguments, already range-checked by the caller.
type Params struct {
	Capacity      uint64
	BucketSize    uint16
	MaxIterations uint16
	Expansion     uint16 // rounded up to a power of two by New; 0 = never grow
}

// SlotBytes is the memory the first sub-filter of p takes.
func SlotBytes(p Params) uint64 {
	return NextPow2(p.Capacity/uint64(p.BucketSize)) * uint64(p.BucketSize)
}

// New returns an empty filter.
func New(p Params) (*Filter, error) {
	if p.BucketSize == 0 || p.MaxIterations == 0 || p.Capacity < 2*uint64(p.BucketSize) || p.Capacity > MaxCapacity {
		return nil, fmt.Errorf("rbcuckoo: %+v: %w", p, bloomery.ErrInvalidParams)
	}
	exp := p.Expansion
	if exp > 0 {
		exp = uint16(NextPow2(uint64(exp)))
	}
	f := &Filter{
		buckets:       NextPow2(p.Capacity / uint64(p.BucketSize)),
		bucketSize:    p.BucketSize,
		maxIterations: p.MaxIterations,
		expansion:     exp,
	}
	f.addSub()
	return f, nil
}

func (f *Filter) subBuckets(j int) uint64 {
	n := f.buckets
	for ; j > 0; j-- {
		n *= uint64(f.expansion)
	}
	return n
}

func (f *Filter) addSub() {
	n := f.subBuckets(len(f.subs))
	f.subs = append(f.subs, sub{slots: make([]uint8, n*uint64(f.bucketSize)), buckets: n})
}

type key struct {
	fp uint8
	h  uint64
}

func keyOf(item []byte) key {
	h := hasher.Sum64(item)
	return key{fp: uint8(h%255 + 1), h: h}
}

func altIndex(i uint64, fp uint8) uint64 { return i ^ (uint64(fp) * altMul) }

func (s *sub) bucket(i uint64, bs uint16) []uint8 {
	b := (i & (s.buckets - 1)) * uint64(bs)
	return s.slots[b : b+uint64(bs)]
}

// tryPlace puts fp in a free slot of bucket i1 or i2 of s.
func (s *sub) tryPlace(k key, bs uint16) bool {
	for _, i := range [2]uint64{k.h, altIndex(k.h, k.fp)} {
		b := s.bucket(i, bs)
		for j := range b {
			if b[j] == 0 {
				b[j] = k.fp
				return true
			}
		}
	}
	return false
}

// Add inserts item (duplicates allowed). It returns ErrMaxExpansions when
// the chain already has MaxFilters sub-filters and ErrFull when there is
// no room and the chain may not grow; the filter is unchanged then.
func (f *Filter) Add(item []byte) error { return f.add(keyOf(item), true) }

// ErrNeedsGrowth is returned by AddNoGrow when only a new sub-filter
// would make room.
var ErrNeedsGrowth = errors.New("rbcuckoo: insert needs a new sub-filter")

// AddNoGrow is Add without growth: where Add would append a sub-filter it
// returns ErrNeedsGrowth (filter unchanged), so the caller can check a
// memory limit first (NextSubBytes) and retry with Add.
func (f *Filter) AddNoGrow(item []byte) error { return f.add(keyOf(item), false) }

// CheckExpansions reports the error every insert command fails with once
// the chain is at its maximum length (checked before any item).
func (f *Filter) CheckExpansions() error {
	if len(f.subs) >= MaxFilters {
		return ErrMaxExpansions
	}
	return nil
}

func (f *Filter) add(k key, grow bool) error {
	if err := f.CheckExpansions(); err != nil {
		return err
	}
	for j := len(f.subs) - 1; j >= 0; j-- {
		if f.subs[j].tryPlace(k, f.bucketSize) {
			f.items++
			return nil
		}
	}
	if f.kickIn(&f.subs[len(f.subs)-1], k) {
		f.items++
		return nil
	}
	if f.expansion == 0 {
		return ErrFull
	}
	if !grow {
		return ErrNeedsGrowth
	}
	f.addSub()
	if !f.subs[len(f.subs)-1].tryPlace(k, f.bucketSize) {
		return ErrFull // unreachable: a new sub-filter is empty
	}
	f.items++
	return nil
}

// Walk returns the eviction-walk counter: which slot the next kick
// evicts, and which bucket it starts from, follow from it. The table and
// the counter together decide every later add, so a snapshot that stores
// the table must store the counter too: reloaded with another counter, the
// same adds take other walks and one that fitted live can find a filter
// that cannot grow full on replay (an acknowledged add lost).
func (f *Filter) Walk() uint64 { return f.kick }

// SetWalk restores a counter Walk returned (after FromHeader and
// LoadChunk).
func (f *Filter) SetWalk(k uint64) { f.kick = k }

// kickIn displaces fingerprints along a cuckoo path of at most
// maxIterations steps; on failure every displacement is undone.
func (f *Filter) kickIn(s *sub, k key) bool {
	bs := f.bucketSize
	if cap(f.path) < int(f.maxIterations) {
		f.path = make([]kickStep, 0, f.maxIterations)
	}
	path := f.path[:0]
	fp := k.fp
	i := altIndex(k.h, k.fp)
	if f.kick&1 == 0 {
		i = k.h
	}
	for n := uint16(0); n < f.maxIterations; n++ {
		f.kick++
		slot := uint16(f.kick % uint64(bs))
		b := s.bucket(i, bs)
		fp, b[slot] = b[slot], fp
		path = append(path, kickStep{i & (s.buckets - 1), slot})
		i = altIndex(i, fp)
		b = s.bucket(i, bs)
		for j := range b {
			if b[j] == 0 {
				b[j] = fp
				f.path = path
				return true
			}
		}
	}
	// Undo: walk back, restoring each evicted fingerprint.
	for n := len(path) - 1; n >= 0; n-- {
		st := path[n]
		b := s.bucket(st.bucket, bs)
		fp, b[st.slot] = b[st.slot], fp
	}
	f.path = path
	return false
}

// AddNX inserts item unless it may be present: 1 added, 0 present.
func (f *Filter) AddNX(item []byte) (bool, error) {
	k := keyOf(item)
	if f.count(k, true) > 0 {
		return false, nil
	}
	return true, f.add(k, true)
}

// AddNXNoGrow is AddNX with AddNoGrow's growth rule.
func (f *Filter) AddNXNoGrow(item []byte) (bool, error) {
	k := keyOf(item)
	if f.count(k, true) > 0 {
		return false, nil
	}
	err := f.add(k, false)
	return err == nil, err
}

// Contains reports whether item may be present.
func (f *Filter) Contains(item []byte) bool { return f.count(keyOf(item), true) > 0 }

// Count is the number of matching fingerprints in both candidate buckets
// of every sub-filter: an over-estimate of the copies of item, never an
// under-estimate.
func (f *Filter) Count(item []byte) int { return f.count(keyOf(item), false) }

func (f *Filter) count(k key, stopAtOne bool) int {
	n := 0
	bs := f.bucketSize
	for j := len(f.subs) - 1; j >= 0; j-- {
		s := &f.subs[j]
		i1 := k.h & (s.buckets - 1)
		i2 := altIndex(k.h, k.fp) & (s.buckets - 1)
		for _, x := range s.bucket(i1, bs) {
			if x == k.fp {
				n++
			}
		}
		if i2 != i1 {
			for _, x := range s.bucket(i2, bs) {
				if x == k.fp {
					n++
				}
			}
		}
		if stopAtOne && n > 0 {
			return n
		}
	}
	return n
}

// Delete removes one copy of item's fingerprint (newest sub-filter first)
// and reports whether one was found.
func (f *Filter) Delete(item []byte) bool {
	k := keyOf(item)
	bs := f.bucketSize
	for j := len(f.subs) - 1; j >= 0; j-- {
		s := &f.subs[j]
		for _, i := range [2]uint64{k.h, altIndex(k.h, k.fp)} {
			b := s.bucket(i, bs)
			for x := range b {
				if b[x] == k.fp {
					b[x] = 0
					if f.items > 0 { // loaded dumps may carry any count
						f.items--
					}
					f.deleted++
					return true
				}
			}
		}
	}
	return false
}

// Compact moves fingerprints from newer sub-filters into free slots of
// older ones and drops trailing empty sub-filters (CF.COMPACT).
func (f *Filter) Compact() {
	bs := f.bucketSize
	for j := len(f.subs) - 1; j > 0; j-- {
		s := &f.subs[j]
		for b := uint64(0); b < s.buckets; b++ {
			bucket := s.slots[b*uint64(bs) : (b+1)*uint64(bs)]
			for x := range bucket {
				fp := bucket[x]
				if fp == 0 {
					continue
				}
				// b is (index & mask) for one of the fingerprint's two
				// indexes; older sub-filters have fewer buckets (a power
				// of two dividing this one's), so masking b and its
				// alternate gives the fingerprint's buckets there.
				for o := 0; o < j; o++ {
					if f.subs[o].tryPlace(key{fp: fp, h: b}, bs) {
						bucket[x] = 0
						break
					}
				}
			}
		}
	}
	for len(f.subs) > 1 {
		last := f.subs[len(f.subs)-1].slots
		empty := true
		for _, x := range last {
			if x != 0 {
				empty = false
				break
			}
		}
		if !empty {
			break
		}
		f.subs = f.subs[:len(f.subs)-1]
	}
}

// Info figures (CF.INFO).
func (f *Filter) Size() uint64 {
	s := uint64(chainOverhead)
	for i := range f.subs {
		s += filterOverhead + uint64(len(f.subs[i].slots))
	}
	return s
}
func (f *Filter) Buckets() uint64       { return f.buckets }
func (f *Filter) NumFilters() int       { return len(f.subs) }
func (f *Filter) Items() uint64         { return f.items }
func (f *Filter) Deleted() uint64       { return f.deleted }
func (f *Filter) BucketSize() uint16    { return f.bucketSize }
func (f *Filter) Expansion() uint16     { return f.expansion }
func (f *Filter) MaxIterations() uint16 { return f.maxIterations }

// NextSubBytes is the slot bytes a growth would add next.
func (f *Filter) NextSubBytes() uint64 {
	if f.expansion == 0 {
		return 0
	}
	return f.subBuckets(len(f.subs)) * uint64(f.bucketSize)
}

// Stats: fill is the fraction of slots used; the estimated FPR is the
// union over sub-filters of 1-(1-1/255)^(2*bucketSize*load_j) (each probe
// compares against up to 2*bucketSize stored fingerprints, each matching
// with probability 1/255).
func (f *Filter) Stats() bloomery.Stats {
	var used, total uint64
	pass := 1.0
	for i := range f.subs {
		var u uint64
		for _, x := range f.subs[i].slots {
			if x != 0 {
				u++
			}
		}
		used += u
		total += uint64(len(f.subs[i].slots))
		load := float64(u) / float64(len(f.subs[i].slots))
		pass *= pow(1-1.0/255, 2*float64(f.bucketSize)*load)
	}
	design := 1 - pow(1-1.0/255, 2*float64(f.bucketSize)*0.95)
	st := bloomery.Stats{
		Kind: bloomery.KindCuckoo, Len: int(f.items), Cap: int(total),
		SizeBytes: int(f.Size()), FingerprintBits: 8, FillRatio: float64(used) / float64(total),
		DesignFPR: design, EstimatedFPR: 1 - pass,
	}
	st.BitsPerKey = float64(st.SizeBytes*8) / float64(max(st.Cap, 1))
	st.Overfilled = bloomery.IsOverfilled(st.EstimatedFPR, design)
	st.Extra = []bloomery.Stat{{Name: "filters", Value: float64(len(f.subs))}, {Name: "deleted", Value: float64(f.deleted)}}
	return st
}

func pow(b, e float64) float64 { return math.Pow(b, e) }

// AppendHeader appends the 38-byte dump header: items, buckets, deleted,
// filters (u64); bucket size, max iterations, expansion (u16).
func (f *Filter) AppendHeader(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.items)
	b = binary.LittleEndian.AppendUint64(b, f.buckets)
	b = binary.LittleEndian.AppendUint64(b, f.deleted)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(f.subs)))
	b = binary.LittleEndian.AppendUint16(b, f.bucketSize)
	b = binary.LittleEndian.AppendUint16(b, f.maxIterations)
	return binary.LittleEndian.AppendUint16(b, f.expansion)
}

// FromHeader rebuilds an empty filter from a dump header. limit bounds
// the total slot bytes it may allocate.
func FromHeader(h []byte, limit uint64) (*Filter, error) {
	if len(h) != HeaderLen {
		return nil, fmt.Errorf("rbcuckoo: header of %d bytes: %w", len(h), bloomery.ErrCorrupt)
	}
	f := &Filter{
		items:         binary.LittleEndian.Uint64(h),
		buckets:       binary.LittleEndian.Uint64(h[8:]),
		deleted:       binary.LittleEndian.Uint64(h[16:]),
		bucketSize:    binary.LittleEndian.Uint16(h[32:]),
		maxIterations: binary.LittleEndian.Uint16(h[34:]),
		expansion:     binary.LittleEndian.Uint16(h[36:]),
	}
	n := binary.LittleEndian.Uint64(h[24:])
	if n == 0 || n > MaxFilters || f.bucketSize == 0 || f.maxIterations == 0 ||
		f.buckets == 0 || f.buckets&(f.buckets-1) != 0 || f.buckets > MaxCapacity ||
		(f.expansion&(f.expansion-1)) != 0 || (n > 1 && f.expansion == 0) {
		return nil, fmt.Errorf("rbcuckoo: invalid header: %w", bloomery.ErrCorrupt)
	}
	var total uint64
	for j := 0; j < int(n); j++ {
		nb := f.buckets
		for x := 0; x < j; x++ {
			hi, lo := bits.Mul64(nb, uint64(f.expansion))
			if hi != 0 {
				return nil, fmt.Errorf("rbcuckoo: invalid header: %w", bloomery.ErrCorrupt)
			}
			nb = lo
		}
		total += nb * uint64(f.bucketSize)
		if nb > 1<<40 || total > limit {
			return nil, fmt.Errorf("rbcuckoo: header describes %d+ bytes, over the limit: %w", total, bloomery.ErrCorrupt)
		}
	}
	for j := 0; j < int(n); j++ {
		f.addSub()
	}
	return f, nil
}

// Chunk returns up to MaxChunk bytes of slots starting at byte offset off
// of the concatenated sub-filters, never crossing a sub-filter; nil at
// the end.
func (f *Filter) Chunk(off uint64) []byte {
	for i := range f.subs {
		b := f.subs[i].slots
		if off < uint64(len(b)) {
			return b[off:min(uint64(len(b)), off+MaxChunk)]
		}
		off -= uint64(len(b))
	}
	return nil
}

// DataLen is the total slot bytes (the dump's data length).
func (f *Filter) DataLen() uint64 {
	var total uint64
	for i := range f.subs {
		total += uint64(len(f.subs[i].slots))
	}
	return total
}

// LoadChunk writes data at byte offset off of the concatenated slots.
func (f *Filter) LoadChunk(off uint64, data []byte) error {
	total := f.DataLen()
	if off+uint64(len(data)) > total || off+uint64(len(data)) < off {
		return fmt.Errorf("rbcuckoo: chunk outside the filter: %w", bloomery.ErrCorrupt)
	}
	for i := range f.subs {
		b := f.subs[i].slots
		if off < uint64(len(b)) {
			n := copy(b[off:], data)
			data = data[n:]
			off = 0
			if len(data) == 0 {
				return nil
			}
			continue
		}
		off -= uint64(len(b))
	}
	return nil
}
