// Package gcs implements Golomb-coded sets (GCS), the most compact practical
// static membership filter, in a general form and in the exact "basic
// filter" form of Bitcoin's BIP-158 (with the BIP-157 filter-header chain).
//
// # Construction
//
// Each of the N distinct keys is hashed to 64 bits with the filter's
// [hashing.Hasher] and mapped onto [0, F) with F = N·M by multiply-high
// ([hashing.Reduce]: the high 64 bits of hash·F, no modulo). The N values
// are sorted, and the differences between consecutive values (the first
// from 0) are written with Golomb-Rice coding of parameter P: the quotient
// d >> P in unary (that many one-bits, then a zero-bit), then the low P bits
// of d, most significant first; bits are packed MSB-first into bytes and the
// last byte is padded with zero bits. Duplicated keys are removed before N
// is counted; two distinct keys that map to the same value produce a zero
// delta, which the code represents.
//
// # False positives and size
//
// An absent key maps to a value that is uniform on [0, F); it is a false
// positive when that value is one of the N stored values, so
//
//	FPR = 1 - (1 - 1/F)^N ≈ 1/M.
//
// The deltas are close to geometric with mean M, so a code takes on average
//
//	P + 1 + 1/(e^(2^P/M) - 1) bits,
//
// which for a given P is smallest near M = 1.497·2^P (sipa's analysis, used
// by BIP-158: P = 19, M = 784931, 21.05 bits per element at FPR 1.27e-6,
// about 1.5 bits above the information bound log2 M). [Params] chooses P
// for a given M by minimising that expression.
//
// # Queries
//
// Queries decode the bit stream incrementally and never materialise the
// set. A sampled index taken every [IndexInterval] = 64 elements (bit
// offset and the running value before that element: 16 bytes per 64
// elements, 2 bits per element in memory, built when the filter is built or
// decoded, never persisted) lets a single query binary-search to the right
// stretch and decode at most 64 codes (32 on average): O(log(N/64) + 64)
// instead of O(N). Codes are decoded out of a 64-bit window that is
// reloaded only when the next code does not fit, so a code costs a count
// of leading ones and a few shifts. A batch of sorted hashes is answered by
// one merge pass over the stream that also uses the index to skip
// stretches holding no target. Queries do not allocate.
//
// # Concurrency
//
// A Filter is immutable after Build or Decode; any number of goroutines may
// query it at once. A [Builder] is not safe for concurrent use.
//
// # Persistence
//
// [Filter.AppendBinary] writes the Bloomery container (kind "gcs", layout
// 1): params are P (u8), M (u64 LE) and N (u64 LE); the payload is the
// Golomb-Rice stream. [Filter.Bytes] writes the raw BIP-158 serialization
// (CompactSize N followed by the stream) and [ParseBIP158] reads it. Both
// decoders validate the whole stream (exactly N codes, values below F, zero
// padding, no trailing bytes), so a decoded filter re-encodes to identical
// bytes. The layouts are documented in docs/format/gcs.md.
package gcs

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// IndexInterval is the number of elements between two entries of the
// in-memory sampled index.
const IndexInterval = 64

// MinP and MaxP bound the Golomb-Rice parameter.
const (
	MinP = 1
	MaxP = 32
)

// MaxM bounds the range per element (2^48, far beyond any useful FPR).
const MaxM = 1 << 48

// OptimalRatio is the M/2^P ratio that minimises the code length for a
// given P (about 1.497137; BIP-158 uses M = 784931 = 1.497137·2^19).
const OptimalRatio = 1.497137

// Params configures a general Golomb-coded set. Set either FPR or P (or
// both P and M).
type Params struct {
	// FPR is the target false-positive rate, in (0, 0.5]. When P is 0,
	// M = round(1/FPR) and P is the value that minimises the code length
	// for that M.
	FPR float64
	// P is the Golomb-Rice parameter (MinP..MaxP).
	P int
	// M is the range per element; when 0 it defaults to
	// round(OptimalRatio·2^P). The FPR is about 1/M.
	M uint64
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
}

// resolve validates p and returns the effective P and M.
func (p Params) resolve() (uint, uint64, error) {
	P, M := p.P, p.M
	if P == 0 {
		if !(p.FPR > 0 && p.FPR <= 0.5) {
			return 0, 0, fmt.Errorf("gcs: FPR %v outside (0, 0.5] and no P given: %w", p.FPR, bloomery.ErrInvalidParams)
		}
		if M == 0 {
			m := math.Round(1 / p.FPR)
			if m > MaxM {
				return 0, 0, fmt.Errorf("gcs: FPR %v needs M > 2^48: %w", p.FPR, bloomery.ErrInvalidParams)
			}
			M = uint64(m)
		}
		P = BestP(M)
	}
	if P < MinP || P > MaxP {
		return 0, 0, fmt.Errorf("gcs: P = %d outside [%d, %d]: %w", P, MinP, MaxP, bloomery.ErrInvalidParams)
	}
	if M == 0 {
		M = uint64(math.Round(OptimalRatio * math.Ldexp(1, P)))
	}
	if M > MaxM {
		return 0, 0, fmt.Errorf("gcs: M = %d exceeds 2^48: %w", M, bloomery.ErrInvalidParams)
	}
	return uint(P), M, nil
}

// BestP returns the Golomb-Rice parameter in [MinP, MaxP] that minimises
// the expected code length [CodeBits] for range M.
func BestP(m uint64) int {
	best, bestBits := MinP, math.Inf(1)
	for p := MinP; p <= MaxP; p++ {
		if b := CodeBits(p, m); b < bestBits {
			best, bestBits = p, b
		}
	}
	return best
}

// CodeBits is the expected Golomb-Rice code length in bits per element for
// parameter p and range m, treating deltas as exponential with mean m:
// p + 1 + 1/(e^(2^p/m) - 1).
func CodeBits(p int, m uint64) float64 {
	return float64(p) + 1 + 1/math.Expm1(math.Ldexp(1, p)/float64(m))
}

// ExpectedFPR is 1 - (1 - 1/(n·m))^n, the false-positive rate of a set of
// n values on [0, n·m) (about 1/m).
func ExpectedFPR(n, m uint64) float64 {
	if n == 0 {
		return 0
	}
	f := float64(n) * float64(m)
	return -math.Expm1(float64(n) * math.Log1p(-1/f))
}

// mark is one sampled-index entry: the bit offset at which the code of
// element j·IndexInterval starts, and the running value before it (the
// value of element j·IndexInterval - 1; 0 for j = 0).
type mark struct {
	pos, prev uint64
}

// Filter is an immutable Golomb-coded set.
type Filter struct {
	hasher hashing.Hasher
	p      uint
	m      uint64
	n      uint64
	f      uint64 // n·m, the hash range
	maxQ   uint64 // bound on any quotient: f >> p
	data   []byte // Golomb-Rice stream: padded[:len(padded)-8]
	padded []byte // the stream followed by 8 zero bytes, for unaligned 8-byte loads
	bits   uint64 // exact stream length in bits
	idx    []mark
}

var (
	_ bloomery.Filter       = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Build builds a filter from key hashes made with p.Hasher. Duplicates are
// removed. Cost: one sort of the hashes and one encoding pass.
func Build(hashes []uint64, p Params) (*Filter, error) {
	var b Builder
	return b.Build(hashes, p)
}

// BuildKeys hashes keys with p.Hasher and builds a filter from them.
func BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	var b Builder
	return b.BuildKeys(keys, p)
}

// Builder builds filters and keeps its scratch buffers between builds, so
// building many filters (one per block, one per SSTable) allocates only
// the filters themselves. It is not safe for concurrent use.
type Builder struct {
	hashes []uint64
	tmp    []uint64 // radix sort scratch
	items  [][]byte
}

// Build builds a filter from key hashes made with p.Hasher; duplicates are
// removed. hashes is not modified.
func (b *Builder) Build(hashes []uint64, p Params) (*Filter, error) {
	P, M, err := p.resolve()
	if err != nil {
		return nil, err
	}
	b.hashes = append(b.hashes[:0], hashes...)
	b.tmp = sortHashes(b.hashes, b.tmp)
	b.hashes = slices.Compact(b.hashes)
	return encode(b.hashes, P, M, p.Hasher)
}

// BuildKeys hashes keys with p.Hasher and builds a filter; duplicate
// hashes are removed.
func (b *Builder) BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	P, M, err := p.resolve()
	if err != nil {
		return nil, err
	}
	b.hashes = slices.Grow(b.hashes[:0], len(keys))[:len(keys)]
	p.Hasher.Sum64Batch(keys, b.hashes)
	b.tmp = sortHashes(b.hashes, b.tmp)
	b.hashes = slices.Compact(b.hashes)
	return encode(b.hashes, P, M, p.Hasher)
}

// encode builds a filter from sorted hashes (duplicates allowed: they
// become zero deltas). Because multiply-high is monotone in the hash,
// sorted hashes give sorted values.
func encode(sorted []uint64, p uint, m uint64, h hashing.Hasher) (*Filter, error) {
	n := uint64(len(sorted))
	hi, f := bits.Mul64(n, m)
	if hi != 0 {
		return nil, fmt.Errorf("gcs: N·M = %d·%d overflows 64 bits: %w", n, m, bloomery.ErrInvalidParams)
	}
	flt := &Filter{hasher: h, p: p, m: m, n: n, f: f, maxQ: f >> p}
	// First pass: exact length and index.
	flt.idx = make([]mark, 0, (n+IndexInterval-1)/IndexInterval)
	var total, prev uint64
	for i, x := range sorted {
		v := hashing.Reduce(x, f)
		if i%IndexInterval == 0 {
			flt.idx = append(flt.idx, mark{pos: total, prev: prev})
		}
		total += codeBits(v-prev, p)
		prev = v
	}
	flt.bits = total
	w := bitWriter{buf: make([]byte, 0, (total+7)/8+8)}
	prev = 0
	for _, x := range sorted {
		v := hashing.Reduce(x, f)
		w.putCode(v-prev, p)
		prev = v
	}
	w.flush()
	flt.data = w.buf
	flt.padded = w.buf[:len(w.buf)+8] // fresh zero bytes
	return flt, nil
}

// Kind returns bloomery.KindGCS.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindGCS }

// Hasher returns the filter's hasher.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// P returns the Golomb-Rice parameter.
func (f *Filter) P() int { return int(f.p) }

// M returns the range per element (FPR ≈ 1/M).
func (f *Filter) M() uint64 { return f.m }

// Len returns N, the number of distinct elements.
func (f *Filter) Len() int { return int(f.n) }

// Cap returns N: a static filter's capacity is its contents.
func (f *Filter) Cap() int { return int(f.n) }

// SizeBytes returns the stream size plus the in-memory index.
func (f *Filter) SizeBytes() int { return len(f.data) + 16*len(f.idx) }

// StreamBits returns the exact length of the Golomb-Rice stream in bits.
func (f *Filter) StreamBits() uint64 { return f.bits }

// EstimatedFPR returns [ExpectedFPR](N, M): for a static filter the design
// rate and the rate at its contents are the same.
func (f *Filter) EstimatedFPR() float64 { return ExpectedFPR(f.n, f.m) }

// Stats describes the filter. BitsPerKey counts the index; the Extra
// figures give the stream alone.
func (f *Filter) Stats() bloomery.Stats {
	fpr := f.EstimatedFPR()
	s := bloomery.Stats{
		Kind:         bloomery.KindGCS,
		Len:          int(f.n),
		Cap:          int(f.n),
		SizeBytes:    f.SizeBytes(),
		DesignFPR:    fpr,
		EstimatedFPR: fpr,
	}
	streamBPK := 0.0
	if f.n > 0 {
		s.BitsPerKey = float64(s.SizeBytes) * 8 / float64(f.n)
		streamBPK = float64(f.bits) / float64(f.n)
	}
	s.Extra = []bloomery.Stat{
		{Name: "P", Value: float64(f.p)},
		{Name: "M", Value: float64(f.m)},
		{Name: "streamBitsPerKey", Value: streamBPK},
		{Name: "expectedBitsPerKey", Value: CodeBits(int(f.p), f.m)},
		{Name: "indexBytes", Value: float64(16 * len(f.idx))},
	}
	return s
}

// Contains reports whether key may be in the set. It hashes key with the
// filter's hasher (for a BIP-158 filter: SipHash keyed by the block hash).
// Cost: one hash, a binary search of the index and at most IndexInterval
// decoded codes; no allocation.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// ContainsHash reports whether a key with hash h (made with the filter's
// hasher) may be in the set.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.n == 0 {
		return false
	}
	return f.containsValue(hashing.Reduce(h, f.f))
}

// containsValue reports whether t (on [0, F)) is one of the values.
func (f *Filter) containsValue(t uint64) bool {
	if f.n == 0 {
		return false
	}
	j := f.seek(t, 0)
	return f.scanFrom(f.idx[j].pos, f.idx[j].prev, f.n-uint64(j)*IndexInterval, t)
}

// scanFrom decodes up to left codes starting at bit pos with running value
// v, until the running value reaches t; it reports whether it equals t.
// Codes are decoded out of a 64-bit window that is reloaded only when the
// next code does not fit in its remaining bits, which keeps memory loads
// off the serial dependency chain of the decoder.
func (f *Filter) scanFrom(pos, v, left, t uint64) bool {
	p := uint64(f.p)
	for left > 0 {
		w := binary.BigEndian.Uint64(f.padded[pos>>3:]) << (pos & 7)
		avail := uint64(windowBits)
		for {
			q := uint64(bits.LeadingZeros64(^w))
			need := q + 1 + p
			if need > avail {
				break
			}
			v += q<<p | (w<<(q+1))>>(64-p)
			w <<= need
			avail -= need
			pos += need
			left--
			if v >= t {
				return v == t
			}
			if left == 0 {
				return false
			}
		}
		if avail == windowBits {
			// A code longer than a window: the slow path.
			var d uint64
			d, pos, _ = readDelta(f.data, pos, f.p, f.maxQ, f.bits)
			v += d
			left--
			if v >= t {
				return v == t
			}
		}
	}
	return false
}

// step decodes the code that starts at bit pos of the (validated) stream
// and returns the delta and the position after it. The common case, a
// code within one 57-bit window, is a load, a count of leading ones and
// two shifts.
func (f *Filter) step(pos uint64) (uint64, uint64) {
	w := binary.BigEndian.Uint64(f.padded[pos>>3:]) << (pos & 7)
	q := uint64(bits.LeadingZeros64(^w))
	if q+1+uint64(f.p) <= windowBits {
		return q<<f.p | (w<<(q+1))>>(64-f.p), pos + q + 1 + uint64(f.p)
	}
	d, next, _ := readDelta(f.data, pos, f.p, f.maxQ, f.bits)
	return d, next
}

// seek returns the last index entry at or after from whose running value
// is below t (or from, if none is): decoding from there reaches every
// element that could equal t.
func (f *Filter) seek(t uint64, from int) int {
	lo, hi := from+1, len(f.idx) // invariant: idx[lo-1].prev < t or lo-1 == from
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.idx[mid].prev < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// cursor is a position in the stream during a merge.
type cursor struct {
	pos  uint64 // bit position of the next code
	i    uint64 // number of codes decoded
	v    uint64 // value of the last decoded element
	have bool   // whether v is an element
}

// advance moves c to the first element >= t and reports whether it
// equals t. Targets must be presented in non-decreasing order. Stretches
// of the stream that lie wholly below t are skipped with the index; the
// rest is decoded with the same windowed decoder as single queries.
func (f *Filter) advance(c *cursor, t uint64) bool {
	if c.have && c.v >= t {
		return c.v == t
	}
	if c.i == f.n {
		return false
	}
	if next := int(c.i/IndexInterval) + 1; next < len(f.idx) && f.idx[next].prev < t {
		j := f.seek(t, next)
		c.pos, c.i, c.v = f.idx[j].pos, uint64(j)*IndexInterval, f.idx[j].prev
	}
	p := uint64(f.p)
	pos, v, i := c.pos, c.v, c.i
	for i < f.n {
		w := binary.BigEndian.Uint64(f.padded[pos>>3:]) << (pos & 7)
		avail := uint64(windowBits)
		for {
			q := uint64(bits.LeadingZeros64(^w))
			need := q + 1 + p
			if need > avail {
				break
			}
			v += q<<p | (w<<(q+1))>>(64-p)
			w <<= need
			avail -= need
			pos += need
			i++
			if v >= t || i == f.n {
				c.pos, c.v, c.i, c.have = pos, v, i, true
				return v == t
			}
		}
		if avail == windowBits {
			var d uint64
			d, pos, _ = readDelta(f.data, pos, f.p, f.maxQ, f.bits)
			v += d
			i++
			if v >= t || i == f.n {
				c.pos, c.v, c.i, c.have = pos, v, i, true
				return v == t
			}
		}
	}
	c.pos, c.v, c.i, c.have = pos, v, i, true
	return false
}

// ContainsBatch sets out[i] to ContainsHash(hashes[i]) for every i;
// len(out) must be >= len(hashes). When hashes is sorted ascending the
// batch is answered by one merge pass over the stream (skipping stretches
// with the index), which is the cheapest way to test many keys; otherwise
// each hash is looked up on its own. It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if f.n == 0 {
		clear(out)
		return
	}
	if !slices.IsSorted(hashes) {
		for i, h := range hashes {
			out[i] = f.ContainsHash(h)
		}
		return
	}
	var c cursor
	for i, h := range hashes {
		out[i] = f.advance(&c, hashing.Reduce(h, f.f))
	}
}

// MatchAnyHashes reports whether any of hashes may be in the set, by one
// sorted merge over the stream that stops at the first match (the BIP-157
// client query). It sorts a copy of hashes (one allocation).
func (f *Filter) MatchAnyHashes(hashes []uint64) bool {
	if f.n == 0 || len(hashes) == 0 {
		return false
	}
	s := slices.Clone(hashes)
	slices.Sort(s)
	var c cursor
	for _, h := range s {
		if f.advance(&c, hashing.Reduce(h, f.f)) {
			return true
		}
	}
	return false
}

// MatchAny reports whether any of keys may be in the set (hashing each
// with the filter's hasher, then [Filter.MatchAnyHashes]).
func (f *Filter) MatchAny(keys [][]byte) bool {
	if f.n == 0 || len(keys) == 0 {
		return false
	}
	hs := make([]uint64, len(keys))
	f.hasher.Sum64Batch(keys, hs)
	slices.Sort(hs)
	var c cursor
	for _, h := range hs {
		if f.advance(&c, hashing.Reduce(h, f.f)) {
			return true
		}
	}
	return false
}

// Values calls fn with every element value in ascending order (the
// decoded set, for inspection and tests), decoding incrementally.
func (f *Filter) Values(fn func(v uint64) bool) {
	var pos, v uint64
	for i := uint64(0); i < f.n; i++ {
		var d uint64
		d, pos = f.step(pos)
		v += d
		if !fn(v) {
			return
		}
	}
}

// scan validates a stream of n codes with parameter p over range f and
// returns the sampled index and the exact bit length. It checks every
// quotient bound, that values stay below f, that the stream holds exactly
// the codes plus fewer than 8 zero padding bits, before anything but the
// index (n/IndexInterval entries, n already checked against the input
// length) is allocated.
func scan(data []byte, p uint, n, f uint64) ([]mark, uint64, error) {
	total := uint64(len(data)) * 8
	if n > total/(uint64(p)+1) {
		return nil, 0, fmt.Errorf("gcs: %d elements cannot fit in %d bytes: %w", n, len(data), bloomery.ErrCorrupt)
	}
	idx := make([]mark, 0, (n+IndexInterval-1)/IndexInterval)
	maxQ := f >> p
	var pos, v uint64
	for i := uint64(0); i < n; i++ {
		if i%IndexInterval == 0 {
			idx = append(idx, mark{pos: pos, prev: v})
		}
		d, next, ok := readDelta(data, pos, p, maxQ, total)
		if !ok {
			return nil, 0, fmt.Errorf("gcs: element %d: code runs past the stream or its quotient is too large: %w", i, bloomery.ErrCorrupt)
		}
		pos = next
		if d >= f-v {
			return nil, 0, fmt.Errorf("gcs: element %d: value exceeds the range %d: %w", i, f, bloomery.ErrCorrupt)
		}
		v += d
	}
	if want := (pos + 7) / 8; want != uint64(len(data)) {
		return nil, 0, fmt.Errorf("gcs: stream is %d bytes, codes need %d: %w", len(data), want, bloomery.ErrCorrupt)
	}
	if pad := pos & 7; pad != 0 && data[len(data)-1]<<pad != 0 {
		return nil, 0, fmt.Errorf("gcs: nonzero padding bits: %w", bloomery.ErrCorrupt)
	}
	return idx, pos, nil
}

// fromStream validates a stream and wraps a padded copy of it.
func fromStream(data []byte, p uint, m, n uint64, h hashing.Hasher) (*Filter, error) {
	if p < MinP || p > MaxP {
		return nil, fmt.Errorf("gcs: P = %d outside [%d, %d]: %w", p, MinP, MaxP, bloomery.ErrCorrupt)
	}
	if m == 0 || m > MaxM {
		return nil, fmt.Errorf("gcs: M = %d outside [1, 2^48]: %w", m, bloomery.ErrCorrupt)
	}
	hi, f := bits.Mul64(n, m)
	if hi != 0 {
		return nil, fmt.Errorf("gcs: N·M overflows 64 bits: %w", bloomery.ErrCorrupt)
	}
	idx, nbits, err := scan(data, p, n, f)
	if err != nil {
		return nil, err
	}
	padded := make([]byte, len(data)+8)
	copy(padded, data)
	return &Filter{hasher: h, p: p, m: m, n: n, f: f, maxQ: f >> p, data: padded[:len(data)], padded: padded, bits: nbits, idx: idx}, nil
}
