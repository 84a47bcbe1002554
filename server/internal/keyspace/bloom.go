package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/scalable"
)

// A BF.* key is a scalable.Filter with RedisBloom's sizing
// (scalable.SizingRedis, tightening ratio 0.5, XXH3 seed 0): link i of a
// scaling chain with base capacity n, error e and expansion x has
// capacity n·x^i and error e·0.5^(i+1); a NONSCALING chain has one link at
// e. What RedisBloom reports beyond the filter itself lives here: the
// Size accounting, and the SCANDUMP header and chunks.

// BF.* defaults and limits (RedisBloom 8.x).
const (
	BloomDefaultError     = 0.01
	BloomDefaultCapacity  = 100
	BloomDefaultExpansion = scalable.DefaultExpansion
	BloomMaxCapacity      = 1 << 30
	BloomMaxExpansion     = scalable.MaxExpansion
	// BloomMaxErrorRate: larger requested rates are capped to it (8.x).
	BloomMaxErrorRate = 0.25
	// BloomMaxChunk bounds one SCANDUMP data chunk.
	BloomMaxChunk = 16 << 20

	// Size accounting: a fixed chain header plus a fixed header per link
	// plus the bit arrays, so that BF.INFO Size matches RedisBloom's (a
	// one-link chain reports 96 bytes more than its bit array).
	bloomChainOverhead = 32
	bloomLinkOverhead  = 64

	// BloomMaxLinks bounds a chain's growth: a new item that would need
	// link 65 is refused as on a full NONSCALING chain. It is reachable
	// only with EXPANSION 1 (64 links of the base capacity); with x >= 2
	// memory runs out long before.
	BloomMaxLinks = 64
)

// ErrBloomFull is returned by Bloom.Add when the chain cannot take a new
// item: a full NONSCALING chain, or BloomMaxLinks links all full.
var ErrBloomFull = fmt.Errorf("bloom: non scaling filter is full: %w", bloomery.ErrFull)

// Bloom is a BF.* key. The embedded filter answers Contains,
// ContainsBatch, NumLinks and NextLinkBytes; Add below replaces its Add.
// Its AddHashBatch may be used directly (BF.MADD, BF.INSERT): it never
// appends a link, stopping before a new item that needs one, which then
// goes through AddHash here. Its AddBatch and TryAddBatch grow the chain
// without the BloomMaxLinks limit, so BF.* code does not use them.
type Bloom struct {
	*scalable.Filter
	C *Counters
}

// Add inserts item and reports whether it was new (no link claimed it).
// A new item the chain cannot take (full NONSCALING chain, BloomMaxLinks
// full links, a link that cannot be sized) returns ErrBloomFull and
// changes nothing; a known item returns (false, nil) even then. It does
// not allocate unless it appends a link.
func (b Bloom) Add(item []byte) (bool, error) { return b.AddHash(b.Hasher().Sum64(item)) }

// AddHash is Add for an item's hash under b.Hasher() (for batches that
// hash every item first).
func (b Bloom) AddHash(h uint64) (bool, error) {
	if b.NumLinks() >= BloomMaxLinks && b.NextLinkBytes() > 0 && !b.ContainsHash(h) {
		return false, ErrBloomFull
	}
	added, err := b.TryAddHash(h)
	if err != nil {
		return false, ErrBloomFull
	}
	return added, nil
}

// NewBloom wraps f, a filter made by NewBloomFilter or BloomFromHeader.
func NewBloom(f *scalable.Filter) Bloom { return Bloom{f, new(Counters)} }

// bloomParams are the scalable parameters of a BF.* chain; expansion 0
// means NONSCALING.
func bloomParams(capacity uint64, errRate float64, expansion uint32) scalable.Params {
	p := scalable.Params{
		InitialCapacity: int(min(capacity, math.MaxInt32)),
		FPR:             errRate,
		Expansion:       int(expansion),
		Sizing:          scalable.SizingRedis,
	}
	if expansion == 0 {
		p.NonScaling = true
		p.Expansion = BloomDefaultExpansion
	}
	return p
}

// NewBloomFilter returns a chain with one link for BF.RESERVE's capacity
// (1..BloomMaxCapacity), error rate (in (0, 1), capped by the caller) and
// expansion (0 for NONSCALING).
func NewBloomFilter(capacity uint64, errRate float64, expansion uint32) (*scalable.Filter, error) {
	if capacity < 1 || capacity > BloomMaxCapacity {
		return nil, fmt.Errorf("bloom: capacity %d outside [1, %d]: %w", capacity, BloomMaxCapacity, bloomery.ErrInvalidParams)
	}
	return scalable.New(bloomParams(capacity, errRate, expansion))
}

// NewBloomSize is the Size a new chain of these parameters reports,
// computed without allocating it (for memory-limit checks).
func NewBloomSize(capacity uint64, errRate float64, expansion uint32) uint64 {
	e := bloomParams(capacity, errRate, expansion).LinkFPR(0)
	bits, _ := scalable.RedisSize(int(min(capacity, math.MaxInt32)), e)
	return bloomChainOverhead + bloomLinkOverhead + max(bits, 64)/8
}

// Size is the in-memory size RedisBloom reports (BF.INFO Size).
func (b Bloom) Size() uint64 {
	return bloomChainOverhead + uint64(b.NumLinks())*bloomLinkOverhead + uint64(b.SizeBytes())
}

// Capacity is the sum of the link capacities (BF.INFO Capacity).
func (b Bloom) Capacity() uint64 { return uint64(b.Cap()) }

// Items is the number of adds that reported a new item (BF.CARD).
func (b Bloom) Items() uint64 { return uint64(b.Len()) }

// Expansion is BF.INFO "Expansion rate": 0 for a NONSCALING chain.
func (b Bloom) Expansion() uint32 {
	p := b.Params()
	if p.NonScaling {
		return 0
	}
	return uint32(p.Expansion)
}

func (Bloom) Type() string       { return TypeBloom }
func (b Bloom) MemBytes() uint64 { return b.Size() }

// Counters returns the key's query statistics.
func (b Bloom) Counters() *Counters { return b.C }

// Stats is the filter's, with SizeBytes and BitsPerKey from Size.
func (b Bloom) Stats() bloomery.Stats {
	st := b.Filter.Stats()
	st.SizeBytes = int(b.Size())
	if st.Cap > 0 {
		st.BitsPerKey = float64(st.SizeBytes*8) / float64(st.Cap)
	}
	return st
}

// SCANDUMP format: a header chunk, then the concatenated raw bit arrays
// (scalable.Filter.ReadRaw) in chunks of at most BloomMaxChunk bytes that
// never cross a link. Header, little-endian:
//
//	magic "RBB2", u32 links, u32 expansion (0 NONSCALING), f64 error,
//	per link: u64 capacity, u64 items, u64 bits, u32 hashes, f64 error,
//	u8 layout (bloom.Layout1 or bloom.Layout2: the link's probe
//	derivation)
//
// or, when every link is of layout 1, magic "RBB1" and the same without
// the layout byte: the header of every dump and snapshot written before
// bloom layout 2, which a chain loaded from one writes back as it was
// (and which servers of that time read) until it grows a layout 2 link.
const (
	bloomHeaderFixed = 4 + 4 + 4 + 8
	bloomHeaderLink  = 8 + 8 + 8 + 4 + 8 // RBB1; RBB2 adds the layout byte
)

// AppendHeader appends the SCANDUMP header.
func (b Bloom) AppendHeader(dst []byte) []byte {
	p := b.Params()
	shapes := b.Shapes()
	magic := "RBB1"
	for _, s := range shapes {
		if s.Layout != bloom.Layout1 {
			magic = "RBB2"
		}
	}
	dst = append(dst, magic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(shapes)))
	dst = binary.LittleEndian.AppendUint32(dst, b.Expansion())
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.FPR))
	for i, s := range shapes {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s.Capacity))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s.Len))
		dst = binary.LittleEndian.AppendUint64(dst, s.Bits)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(s.HashFuncs))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.LinkFPR(i)))
		if magic == "RBB2" {
			dst = append(dst, s.Layout)
		}
	}
	return dst
}

// BloomFromHeader rebuilds a chain with zeroed bit arrays from a SCANDUMP
// header, validating every field against the chain rule before
// allocating; limit bounds the total bit-array bytes. Errors wrap
// bloomery.ErrCorrupt.
func BloomFromHeader(h []byte, limit uint64) (*scalable.Filter, error) {
	bad := func(what string) error {
		return fmt.Errorf("bloom: dump header: %s: %w", what, bloomery.ErrCorrupt)
	}
	if len(h) < bloomHeaderFixed || (string(h[:4]) != "RBB1" && string(h[:4]) != "RBB2") {
		return nil, bad("bad magic or length")
	}
	linkLen := uint64(bloomHeaderLink)
	if string(h[:4]) == "RBB2" {
		linkLen++
	}
	n := uint64(binary.LittleEndian.Uint32(h[4:]))
	if n == 0 || n > BloomMaxLinks || uint64(len(h)) != bloomHeaderFixed+n*linkLen {
		return nil, bad("link count")
	}
	expansion := binary.LittleEndian.Uint32(h[8:])
	errRate := math.Float64frombits(binary.LittleEndian.Uint64(h[12:]))
	if !(errRate > 0 && errRate < 1) || expansion > BloomMaxExpansion {
		return nil, bad("error rate or expansion")
	}
	p := h[bloomHeaderFixed:]
	shapes := make([]scalable.Shape, n)
	var base uint64
	for i := range shapes {
		capacity := binary.LittleEndian.Uint64(p)
		items := binary.LittleEndian.Uint64(p[8:])
		bits := binary.LittleEndian.Uint64(p[16:])
		hashes := binary.LittleEndian.Uint32(p[24:])
		linkErr := math.Float64frombits(binary.LittleEndian.Uint64(p[28:]))
		layout := uint8(bloom.Layout1)
		if linkLen > bloomHeaderLink {
			layout = p[bloomHeaderLink] // checked by NewFromShapes
		}
		p = p[linkLen:]
		if capacity == 0 || capacity > math.MaxInt64 || items > capacity || hashes > 64 {
			return nil, bad("link parameters")
		}
		if i == 0 {
			base = capacity
			if base > BloomMaxCapacity {
				return nil, bad("capacity")
			}
		}
		shapes[i] = scalable.Shape{Capacity: int(capacity), Len: int(items), Bits: bits, HashFuncs: int(hashes), Layout: layout}
		if want := bloomParams(base, errRate, expansion).LinkFPR(i); linkErr != want {
			return nil, bad("link error rate")
		}
	}
	f, err := scalable.NewFromShapes(bloomParams(base, errRate, expansion), shapes, limit)
	if err != nil {
		return nil, bad(err.Error())
	}
	return f, nil
}

// Chunk returns a copy of the data bytes starting at off: at most
// BloomMaxChunk bytes, never crossing a link boundary; nil at the end.
func (b Bloom) Chunk(off uint64) []byte {
	total := b.RawLen()
	if off >= total {
		return nil
	}
	buf := make([]byte, min(total-off, BloomMaxChunk))
	return buf[:b.ReadRaw(buf, off)]
}

// AppendData appends the concatenated bit arrays (RawLen bytes, all the
// chunks in order) to dst, growing it once.
func (b Bloom) AppendData(dst []byte) []byte {
	n := b.RawLen()
	dst = slices.Grow(dst, int(n))
	data := dst[len(dst) : len(dst)+int(n)]
	for off := uint64(0); off < n; {
		off += uint64(b.ReadRaw(data[off:], off))
	}
	return dst[:len(dst)+int(n)]
}

// LoadChunk writes data at byte offset off of the concatenated bit
// arrays. It fails, changing nothing, if the range is outside them.
func (b Bloom) LoadChunk(off uint64, data []byte) error { return b.WriteRaw(off, data) }
