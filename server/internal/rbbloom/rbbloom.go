// Package rbbloom is the server's scalable Bloom filter with RedisBloom's
// observable arithmetic: the same sub-filter sizing, error tightening,
// growth points and BF.INFO figures, so that replies match RedisBloom's
// for the same commands. It is written from the behaviour documented in
// docs/commands.md, not from RedisBloom's source.
//
// A Chain is a list of links (sub-filters). Link i of a scaling chain
// with base capacity n, error e and expansion x has capacity n*x^i and
// error e*0.5^(i+1) (the first link is already tightened by 0.5, so the
// chain's compound error stays below e: sum e*0.5^(i+1) < e). A
// NONSCALING chain has one link with error e.
//
// Link sizing: bits per element bpe = -ln(err)/ln(2)^2, bits =
// floor(capacity*bpe) rounded up to a multiple of 64, hashes =
// ceil(ln(2)*bpe). Probes are Kirsch-Mitzenmacher double hashing of one
// 64-bit XXH3 hash per item (a, b = remix(a) | 1), position_i =
// reduce(a + i*b, bits), computed once per item and shared by all links.
//
// Costs: Add and Contains hash once and touch up to hashes cache lines in
// every link (newest first, stopping at the first link that holds the
// item). Neither allocates. A Chain is not safe for concurrent use; the
// server serialises access per key.
package rbbloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Defaults and limits (RedisBloom 8.x).
const (
	DefaultError     = 0.01
	DefaultCapacity  = 100
	DefaultExpansion = 2
	MaxCapacity      = 1 << 30
	MaxExpansion     = 32768
	// MaxErrorRate: larger requested rates are capped to it (8.x).
	MaxErrorRate = 0.25
	// TighteningRatio is the error ratio between consecutive links.
	TighteningRatio = 0.5

	// Size accounting: a fixed chain header plus a fixed header per link
	// plus the bit arrays, so that INFO Size matches RedisBloom's
	// (a one-link chain reports 96 bytes more than its bit array).
	chainOverhead = 32
	linkOverhead  = 64

	// maxLinks bounds growth (a chain this long would exceed memory long
	// before; it protects the loader from absurd headers).
	maxLinks = 64
)

// ErrFull is returned by Add on a full NONSCALING chain.
var ErrFull = errors.New("non scaling filter is full")

var hasher = hashing.XXH3(0)

// Link is one fixed-size Bloom filter of the chain.
type Link struct {
	bits     []byte // little-endian bit array, len = nbits/8
	nbits    uint64
	hashes   uint32
	capacity uint64
	items    uint64
	err      float64
}

// Chain is a scalable Bloom filter.
type Chain struct {
	links     []Link
	expansion uint32 // 0 for NONSCALING
	err       float64
}

func newLink(capacity uint64, err float64) (Link, error) {
	bpe := -math.Log(err) / fpmath.Ln2Sq
	nb := uint64(math.Floor(float64(capacity) * bpe))
	nb = (nb + 63) &^ 63
	if nb == 0 {
		nb = 64
	}
	if nb > 1<<40 {
		return Link{}, fmt.Errorf("rbbloom: link of %d bits is too large: %w", nb, bloomery.ErrInvalidParams)
	}
	k := uint32(math.Ceil(fpmath.Ln2 * bpe))
	if k < 1 {
		k = 1
	}
	return Link{bits: make([]byte, nb/8), nbits: nb, hashes: k, capacity: capacity, err: err}, nil
}

// LinkBytes returns the bit-array bytes a link of this capacity and error
// occupies, without allocating it (for memory-limit checks).
func LinkBytes(capacity uint64, err float64) uint64 {
	bpe := -math.Log(err) / fpmath.Ln2Sq
	nb := uint64(math.Floor(float64(capacity) * bpe))
	return ((nb + 63) &^ 63) / 8
}

// New returns a chain with one link. expansion 0 means NONSCALING.
// err must be in (0,1) (callers cap it at MaxErrorRate) and capacity >= 1.
func New(capacity uint64, err float64, expansion uint32) (*Chain, error) {
	if !(err > 0 && err < 1) || capacity < 1 || capacity > MaxCapacity {
		return nil, fmt.Errorf("rbbloom: capacity %d, error %g: %w", capacity, err, bloomery.ErrInvalidParams)
	}
	e := err
	if expansion > 0 {
		e *= TighteningRatio
	}
	l, lerr := newLink(capacity, e)
	if lerr != nil {
		return nil, lerr
	}
	return &Chain{links: []Link{l}, expansion: expansion, err: err}, nil
}

type probe struct{ a, b uint64 }

func probeOf(item []byte) probe {
	a := hasher.Sum64(item)
	return probe{a, hashing.Mix64(a) | 1}
}

func (l *Link) has(p probe) bool {
	x := p.a
	for i := uint32(0); i < l.hashes; i++ {
		pos := hashing.Reduce(x, l.nbits)
		if l.bits[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
		x += p.b
	}
	return true
}

func (l *Link) set(p probe) {
	x := p.a
	for i := uint32(0); i < l.hashes; i++ {
		pos := hashing.Reduce(x, l.nbits)
		l.bits[pos>>3] |= 1 << (pos & 7)
		x += p.b
	}
}

func (c *Chain) has(p probe) bool {
	for i := len(c.links) - 1; i >= 0; i-- {
		if c.links[i].has(p) {
			return true
		}
	}
	return false
}

// Contains reports whether item may have been added.
func (c *Chain) Contains(item []byte) bool { return c.has(probeOf(item)) }

// batchLen is how many items a batch call hashes before probing.
const batchLen = 64

// ContainsBatch sets out[i] to Contains(items[i]); len(out) >= len(items).
// It hashes a block of items first, then probes the block link by link
// (newest first, skipping items already found), so the loads of
// independent items overlap in the CPU instead of waiting one item at a
// time. It does not allocate and is safe for concurrent use with other
// readers.
func (c *Chain) ContainsBatch(items [][]byte, out []bool) {
	var ps [batchLen]probe
	for len(items) > 0 {
		n := min(len(items), batchLen)
		for i := 0; i < n; i++ {
			ps[i] = probeOf(items[i])
			out[i] = false
		}
		for l := len(c.links) - 1; l >= 0; l-- {
			link := &c.links[l]
			for i := 0; i < n; i++ {
				if !out[i] {
					out[i] = link.has(ps[i])
				}
			}
		}
		items, out = items[n:], out[n:]
	}
}

// Add inserts item and reports whether it was new. An item that any link
// already claims is not inserted and not counted. On a full NONSCALING
// chain Add returns ErrFull (after the presence check, so re-adding a
// known item still reports false without an error).
func (c *Chain) Add(item []byte) (bool, error) { return c.addProbe(probeOf(item)) }

func (c *Chain) addProbe(p probe) (bool, error) {
	if c.has(p) {
		return false, nil
	}
	cur := &c.links[len(c.links)-1]
	if cur.items >= cur.capacity {
		if c.expansion == 0 {
			return false, ErrFull
		}
		if err := c.grow(); err != nil {
			return false, err
		}
		cur = &c.links[len(c.links)-1]
	}
	cur.set(p)
	cur.items++
	return true, nil
}

// NextLinkBytes is the bit-array size of the link the next growth would
// add (0 when the chain does not grow on the next add).
func (c *Chain) NextLinkBytes() uint64 {
	cur := &c.links[len(c.links)-1]
	if c.expansion == 0 || cur.items < cur.capacity {
		return 0
	}
	return LinkBytes(cur.capacity*uint64(c.expansion), cur.err*TighteningRatio)
}

func (c *Chain) grow() error {
	if len(c.links) >= maxLinks {
		return ErrFull
	}
	cur := &c.links[len(c.links)-1]
	hi, capn := bits.Mul64(cur.capacity, uint64(c.expansion))
	if hi != 0 {
		return ErrFull
	}
	l, err := newLink(capn, cur.err*TighteningRatio)
	if err != nil {
		return ErrFull
	}
	c.links = append(c.links, l)
	return nil
}

// Capacity is the sum of the link capacities (BF.INFO Capacity).
func (c *Chain) Capacity() uint64 {
	var s uint64
	for i := range c.links {
		s += c.links[i].capacity
	}
	return s
}

// Items is the number of adds that returned true (BF.CARD).
func (c *Chain) Items() uint64 {
	var s uint64
	for i := range c.links {
		s += c.links[i].items
	}
	return s
}

// Size is the in-memory size RedisBloom reports (BF.INFO Size).
func (c *Chain) Size() uint64 {
	s := uint64(chainOverhead)
	for i := range c.links {
		s += linkOverhead + uint64(len(c.links[i].bits))
	}
	return s
}

// NumLinks is BF.INFO "Number of filters".
func (c *Chain) NumLinks() int { return len(c.links) }

// Expansion is 0 for a NONSCALING chain.
func (c *Chain) Expansion() uint32 { return c.expansion }

// ErrorRate is the requested error rate.
func (c *Chain) ErrorRate() float64 { return c.err }

// Fill returns the fraction of bits set over all links and the chain's
// FPR estimated from each link's fill: 1 - prod(1 - fill_i^k_i). It reads
// every bit array (O(size)).
func (c *Chain) Fill() (fill, estFPR float64) {
	var set, total uint64
	pass := 1.0
	for i := range c.links {
		l := &c.links[i]
		var n uint64
		b := l.bits
		for len(b) >= 8 {
			n += uint64(bits.OnesCount64(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		}
		for _, x := range b {
			n += uint64(bits.OnesCount8(x))
		}
		set += n
		total += l.nbits
		pass *= 1 - fpmath.FillFPR(float64(n)/float64(l.nbits), int(l.hashes))
	}
	return float64(set) / float64(total), 1 - pass
}

// Stats describes the chain in Bloomery's common form.
func (c *Chain) Stats() bloomery.Stats {
	fill, est := c.Fill()
	st := bloomery.Stats{
		Kind: bloomery.KindScalable, Len: int(c.Items()), Cap: int(c.Capacity()),
		SizeBytes: int(c.Size()), FillRatio: fill, DesignFPR: c.err, EstimatedFPR: est,
		HashFuncs: int(c.links[len(c.links)-1].hashes),
	}
	if st.Cap > 0 {
		st.BitsPerKey = float64(st.SizeBytes*8) / float64(st.Cap)
	}
	st.Overfilled = bloomery.IsOverfilled(est, c.err)
	st.Extra = []bloomery.Stat{{Name: "links", Value: float64(len(c.links))}}
	return st
}

// Dump format: a header chunk, then the concatenated bit arrays in chunks.
//
//	header: magic "RBB1", u32 links, u32 expansion, f64 error,
//	        per link: u64 capacity, u64 items, u64 bits, u32 hashes, f64 error
const (
	headerFixed = 4 + 4 + 4 + 8
	headerLink  = 8 + 8 + 8 + 4 + 8
	// MaxChunk bounds one SCANDUMP data chunk.
	MaxChunk = 16 << 20
)

// AppendHeader appends the dump header.
func (c *Chain) AppendHeader(b []byte) []byte {
	b = append(b, "RBB1"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.links)))
	b = binary.LittleEndian.AppendUint32(b, c.expansion)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.err))
	for i := range c.links {
		l := &c.links[i]
		b = binary.LittleEndian.AppendUint64(b, l.capacity)
		b = binary.LittleEndian.AppendUint64(b, l.items)
		b = binary.LittleEndian.AppendUint64(b, l.nbits)
		b = binary.LittleEndian.AppendUint32(b, l.hashes)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.err))
	}
	return b
}

// FromHeader rebuilds an empty-bit chain from a dump header, validating
// every field before allocating. limit bounds the total bit-array bytes.
func FromHeader(h []byte, limit uint64) (*Chain, error) {
	bad := func(what string) error {
		return fmt.Errorf("rbbloom: dump header: %s: %w", what, bloomery.ErrCorrupt)
	}
	if len(h) < headerFixed || string(h[:4]) != "RBB1" {
		return nil, bad("bad magic or length")
	}
	n := binary.LittleEndian.Uint32(h[4:])
	if n == 0 || n > maxLinks || uint64(len(h)) != headerFixed+uint64(n)*headerLink {
		return nil, bad("link count")
	}
	c := &Chain{expansion: binary.LittleEndian.Uint32(h[8:]), err: math.Float64frombits(binary.LittleEndian.Uint64(h[12:]))}
	if !(c.err > 0 && c.err < 1) || c.expansion > MaxExpansion {
		return nil, bad("error rate or expansion")
	}
	var total uint64
	p := h[headerFixed:]
	links := make([]Link, n)
	for i := range links {
		l := &links[i]
		l.capacity = binary.LittleEndian.Uint64(p)
		l.items = binary.LittleEndian.Uint64(p[8:])
		l.nbits = binary.LittleEndian.Uint64(p[16:])
		l.hashes = binary.LittleEndian.Uint32(p[24:])
		l.err = math.Float64frombits(binary.LittleEndian.Uint64(p[28:]))
		p = p[headerLink:]
		if l.nbits == 0 || l.nbits%64 != 0 || l.hashes == 0 || l.hashes > 64 || l.capacity == 0 ||
			l.items > l.capacity || !(l.err > 0 && l.err < 1) {
			return nil, bad("link parameters")
		}
		total += l.nbits / 8
		if total > limit {
			return nil, bad("bit arrays exceed the limit")
		}
	}
	for i := range links {
		links[i].bits = make([]byte, links[i].nbits/8)
	}
	c.links = links
	return c, nil
}

// DataLen is the total bit-array bytes (the dump's data length).
func (c *Chain) DataLen() uint64 {
	var s uint64
	for i := range c.links {
		s += uint64(len(c.links[i].bits))
	}
	return s
}

// Chunk returns the data bytes starting at off: at most MaxChunk bytes,
// never crossing a link boundary. It returns nil at the end.
func (c *Chain) Chunk(off uint64) []byte {
	for i := range c.links {
		b := c.links[i].bits
		if off < uint64(len(b)) {
			end := min(uint64(len(b)), off+MaxChunk)
			return b[off:end]
		}
		off -= uint64(len(b))
	}
	return nil
}

// LoadChunk writes data at byte offset off of the concatenated bit
// arrays. It fails if the range is outside the arrays.
func (c *Chain) LoadChunk(off uint64, data []byte) error {
	if off+uint64(len(data)) > c.DataLen() || off+uint64(len(data)) < off {
		return fmt.Errorf("rbbloom: chunk [%d,+%d) outside the filter: %w", off, len(data), bloomery.ErrCorrupt)
	}
	for i := range c.links {
		b := c.links[i].bits
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
