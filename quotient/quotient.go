// Package quotient implements a rank-and-select quotient filter (RSQF, the
// metadata scheme of Pandey, Bender, Johnson and Patro's counting quotient
// filter): a compact hash table that stores, for every key, a p-bit
// fingerprint split into a q-bit quotient (its home slot) and an r-bit
// remainder (what the slot holds).
//
// # Layout
//
// The table has 2^q home slots plus a small overflow area, so runs never
// wrap around. Remainders with the same quotient are stored contiguously and
// sorted (a run); runs appear in quotient order, each starting at its home
// slot or right after the previous run, whichever is later. Two bit vectors
// and one byte per 64-slot block describe the runs:
//
//	occupieds[s] = 1  iff some stored fingerprint has quotient s
//	runends[s]   = 1  iff slot s holds the last remainder of a run
//	offsets[b]       = number of slots at the start of block b still used
//	                   by runs whose quotient is below the block (saturates
//	                   at 255; a saturated offset is recomputed exactly)
//
// That is 2 + 8/64 = 2.125 bits of metadata per slot. To find the run of
// quotient x: start at the first slot of x's block not used by earlier
// quotients (block start + offset), count the occupied quotients t from the
// block start up to x (rank), and take the t-th run end from there (select).
// A query touches one or two cache lines of metadata and the run's
// remainders.
//
// # False positives, resizing and spare bits
//
// Because (quotient, remainder) is the whole p-bit fingerprint, the filter
// is lossless with respect to fingerprints: it can be iterated in
// fingerprint order, merged with another filter, and resized. A query
// matches a stored key iff their p-bit fingerprints agree, so the FPR is
// 1 - (1 - 2^-p)^n ≈ n/2^p for n stored fingerprints. It depends only on n
// and p, not on q: doubling the table moves one bit from the remainder to
// the quotient and leaves every fingerprint intact, so a resize keeps every
// key and keeps the FPR of the keys already stored; what raises the FPR is
// storing more keys, n/2^p doubling with n. Params.Doublings reserves
// log2(2^d) spare remainder bits so that after d doublings (2^d times the
// design capacity) the FPR is still the design FPR; each reserved doubling
// costs one bit per slot.
//
// # Costs
//
// Space: (r + 2.125) bits per slot; at 95% load, (r + 2.125)/0.95 bits per
// key. Insert and delete shift the slots between the insertion point and
// the next empty slot (a few on average, growing as 1/(1-load)^2). Counts
// of repeated keys are stored as repeated remainders (a key added c times
// occupies c slots).
//
// # Concurrency
//
// A Filter is not safe for concurrent use; callers serialize access
// (Contains may run concurrently with other Contains calls).
package quotient

import (
	"fmt"
	"iter"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// MaxLoad is the load factor at which New sizes a filter for its capacity.
const MaxLoad = 0.95

// Params describes a quotient filter.
type Params struct {
	// Capacity is the number of keys the filter is designed to hold at
	// MaxLoad; the table has the next power of two >= Capacity/MaxLoad
	// home slots.
	Capacity int
	// FPR is the target false-positive rate at Capacity keys (and, with
	// Doublings, at Capacity*2^Doublings keys after as many resizes).
	// Ignored when RemainderBits is set.
	FPR float64
	// RemainderBits sets r directly (1..58); 0 derives it from FPR.
	RemainderBits int
	// Doublings reserves spare remainder bits for that many Resize calls
	// at the design FPR (0..16).
	Doublings int
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
}

// Filter is a rank-and-select quotient filter. The zero value is not
// usable; create one with New.
type Filter struct {
	q, r, p   uint   // quotient, remainder and fingerprint bits
	nslots    uint64 // 2^q home slots
	xslots    uint64 // total slots (home + overflow), a multiple of 64
	occupieds []uint64
	runends   []uint64
	offsets   []uint8
	rems      []uint64 // packed r-bit remainders, xslots*r bits (+1 word)
	n         int      // stored fingerprints, counting repeats
	capacity  int
	design    float64
	doublings int // spare doublings still reserved
	resizes   int // resizes done
	h         hashing.Hasher
}

var (
	_ bloomery.Adder   = (*Filter)(nil)
	_ bloomery.Deleter = (*Filter)(nil)
	_ bloomery.Counter = (*Filter)(nil)
)

// New returns an empty filter for p.
func New(p Params) (*Filter, error) {
	q, r, err := dims(p)
	if err != nil {
		return nil, err
	}
	f := newTable(q, r, p.Hasher)
	f.capacity = p.Capacity
	f.doublings = p.Doublings
	f.design = fprAt(float64(p.Capacity)*math.Ldexp(1, p.Doublings), f.p)
	if p.RemainderBits == 0 && p.FPR > 0 {
		f.design = p.FPR
	}
	return f, nil
}

// Size returns the quotient bits, remainder bits and table bytes New would
// choose for p, without allocating the table.
func Size(p Params) (q, r int, bytes int64, err error) {
	qq, rr, err := dims(p)
	if err != nil {
		return 0, 0, 0, err
	}
	return int(qq), int(rr), int64(tableBytes(qq, rr)), nil
}

// dims validates p and chooses q and r.
func dims(p Params) (uint, uint, error) {
	if p.Capacity <= 0 || uint64(p.Capacity) > 1<<40 {
		return 0, 0, fmt.Errorf("quotient: capacity %d out of range: %w", p.Capacity, bloomery.ErrInvalidParams)
	}
	if p.Doublings < 0 || p.Doublings > 16 {
		return 0, 0, fmt.Errorf("quotient: doublings %d out of range [0,16]: %w", p.Doublings, bloomery.ErrInvalidParams)
	}
	q := uint(max(6, bits.Len64(uint64(math.Ceil(float64(p.Capacity)/MaxLoad))-1)))
	r := p.RemainderBits
	if r == 0 {
		if !(p.FPR > 0 && p.FPR < 1) {
			return 0, 0, fmt.Errorf("quotient: FPR %v not in (0,1): %w", p.FPR, bloomery.ErrInvalidParams)
		}
		// n/2^p <= FPR at n = Capacity * 2^Doublings.
		need := math.Log2(float64(p.Capacity)) + float64(p.Doublings) - math.Log2(p.FPR)
		pbits := int(math.Ceil(need - 1e-9))
		r = max(1, pbits-int(q))
	}
	if r < 1 || int(q)+r > 64 || r > 58 {
		return 0, 0, fmt.Errorf("quotient: %d remainder bits with %d quotient bits: %w", r, q, bloomery.ErrInvalidParams)
	}
	if err := checkTable(q, uint(r)); err != nil {
		return 0, 0, err
	}
	return q, uint(r), nil
}

// tableBytes is the memory of a table with 2^q home slots and r-bit
// remainders: two metadata bit vectors, the offset bytes, the remainders.
func tableBytes(q, r uint) uint64 {
	_, words, remWords := geometry(q, r)
	return 8*(2*words+remWords) + words
}

// checkTable refuses a table larger than bloomery.MaxTableBytes.
func checkTable(q, r uint) error {
	return bloomery.CheckTableBytes("quotient", tableBytes(q, r))
}

// geometry returns the total slots, the metadata words (one bit per slot)
// and the remainder words of a table with 2^q home slots and r-bit
// remainders.
func geometry(q, r uint) (xslots, words, remWords uint64) {
	nslots := uint64(1) << q
	extra := uint64(10*math.Sqrt(float64(nslots))) + 64
	xslots = (nslots + extra + 63) &^ 63
	return xslots, xslots / 64, (xslots*uint64(r)+63)/64 + 1
}

// NewForCapacity returns an empty filter for n keys at FPR fpr.
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{Capacity: n, FPR: fpr})
}

func newTable(q, r uint, h hashing.Hasher) *Filter {
	xslots, words, remWords := geometry(q, r)
	return &Filter{
		q: q, r: r, p: q + r,
		nslots:    uint64(1) << q,
		xslots:    xslots,
		occupieds: make([]uint64, words),
		runends:   make([]uint64, words),
		offsets:   make([]uint8, words),
		rems:      make([]uint64, remWords),
		h:         h,
	}
}

func fprAt(n float64, p uint) float64 {
	return -math.Expm1(n * math.Log1p(-math.Ldexp(1, -int(p))))
}

// ---- bit-level helpers ----

func getBit(v []uint64, i uint64) bool { return v[i>>6]>>(i&63)&1 != 0 }
func setBit(v []uint64, i uint64)      { v[i>>6] |= 1 << (i & 63) }
func clrBit(v []uint64, i uint64)      { v[i>>6] &^= 1 << (i & 63) }
func putBit(v []uint64, i uint64, b bool) {
	if b {
		setBit(v, i)
	} else {
		clrBit(v, i)
	}
}

func (f *Filter) rem(i uint64) uint64 {
	bit := i * uint64(f.r)
	w, o := bit>>6, bit&63
	v := f.rems[w] >> o
	if o+uint64(f.r) > 64 {
		v |= f.rems[w+1] << (64 - o)
	}
	return v & (1<<f.r - 1)
}

func (f *Filter) setRem(i, v uint64) {
	bit := i * uint64(f.r)
	w, o := bit>>6, bit&63
	mask := uint64(1)<<f.r - 1
	f.rems[w] = f.rems[w]&^(mask<<o) | v<<o
	if o+uint64(f.r) > 64 {
		sh := 64 - o
		f.rems[w+1] = f.rems[w+1]&^(mask>>sh) | v>>sh
	}
}

// selectInWord returns the position of the t-th (1-based) set bit of w;
// REQUIRES: popcount(w) >= t >= 1.
func selectInWord(w uint64, t int) uint64 {
	for ; t > 1; t-- {
		w &= w - 1
	}
	return uint64(bits.TrailingZeros64(w))
}

// selectRunend returns the position of the t-th (1-based) run end at or
// after slot from, or xslots if there is none.
func (f *Filter) selectRunend(from uint64, t int) uint64 {
	w := from >> 6
	if w >= uint64(len(f.runends)) {
		return f.xslots
	}
	word := f.runends[w] &^ (1<<(from&63) - 1)
	for {
		c := bits.OnesCount64(word)
		if c >= t {
			return w<<6 + selectInWord(word, t)
		}
		t -= c
		w++
		if w >= uint64(len(f.runends)) {
			return f.xslots
		}
		word = f.runends[w]
	}
}

// blockStart returns the first slot at or after block b's first slot that
// is not used by a run whose quotient is below the block.
func (f *Filter) blockStart(b uint64) uint64 {
	if o := f.offsets[b]; o < 255 {
		return b<<6 + uint64(o)
	}
	return f.blockStartSlow(b)
}

// blockStartSlow computes blockStart exactly: the end of the run of the
// largest occupied quotient below the block, plus one.
func (f *Filter) blockStartSlow(b uint64) uint64 {
	s0 := b << 6
	for w := int64(b) - 1; w >= 0; w-- {
		if x := f.occupieds[w]; x != 0 {
			qq := uint64(w)<<6 + uint64(63-bits.LeadingZeros64(x))
			return max(s0, f.runEnd(qq)+1)
		}
	}
	return s0
}

// runEnd returns the slot holding the end of quotient x's run.
// REQUIRES: occupieds[x] = 1.
func (f *Filter) runEnd(x uint64) uint64 {
	b := x >> 6
	t := bits.OnesCount64(f.occupieds[b] & (2<<(x&63) - 1))
	return f.selectRunend(f.blockStart(b), t)
}

// runStart returns where quotient x's run starts (or would start if x is
// not occupied): after every run of a smaller quotient, and not before x.
func (f *Filter) runStart(x uint64) uint64 {
	b := x >> 6
	start := f.blockStart(b)
	t := bits.OnesCount64(f.occupieds[b] & (1<<(x&63) - 1))
	if t > 0 {
		start = f.selectRunend(start, t) + 1
	}
	return max(start, x)
}

// firstEmpty returns the first unused slot at or after x, or xslots.
func (f *Filter) firstEmpty(x uint64) uint64 {
	for x < f.xslots {
		b := x >> 6
		if bs := f.blockStart(b); x < bs {
			x = bs
			continue
		}
		// Runs that may cover x have quotients in [block start, x].
		occ := f.occupieds[b] & (2<<(x&63) - 1)
		if occ == 0 {
			return x
		}
		qq := b<<6 + uint64(63-bits.LeadingZeros64(occ))
		e := f.runEnd(qq)
		if e < x {
			return x
		}
		x = e + 1
	}
	return f.xslots
}

// fixOffsets recomputes the offsets of blocks whose first slot lies in
// (lo, hi], in increasing order (each depends only on earlier blocks).
func (f *Filter) fixOffsets(lo, hi uint64) {
	first := lo>>6 + 1
	last := min(hi>>6, uint64(len(f.offsets))-1)
	for b := first; b <= last; b++ {
		f.offsets[b] = 0 // never read by blockStartSlow(b)
		d := f.blockStartSlow(b) - b<<6
		f.offsets[b] = uint8(min(d, 255))
	}
}

func (f *Filter) split(h uint64) (quot, rem uint64) {
	fp := h >> (64 - f.p)
	return fp >> f.r, fp & (1<<f.r - 1)
}

// ---- queries ----

// Contains reports whether key may be in the filter.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.h.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.ContainsHash(f.h.Sum64String(key)) }

// ContainsHash reports whether a key with hash h may be in the filter.
func (f *Filter) ContainsHash(h uint64) bool { return f.CountHash(h) > 0 }

// ContainsBatch sets out[i] to ContainsHash(hashes[i]).
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	for i, h := range hashes {
		out[i] = f.ContainsHash(h)
	}
}

// Count returns how many times key's fingerprint is stored: the number of
// adds of key not yet deleted, plus colliding keys (within the FPR).
func (f *Filter) Count(key []byte) int { return f.CountHash(f.h.Sum64(key)) }

// CountHash is Count for a precomputed hash.
func (f *Filter) CountHash(h uint64) int {
	x, rm := f.split(h)
	if !getBit(f.occupieds, x) {
		return 0
	}
	start, end := f.runStart(x), f.runEnd(x)
	c := 0
	for i := start; i <= end; i++ {
		v := f.rem(i)
		if v == rm {
			c++
		} else if v > rm {
			break
		}
	}
	return c
}

// ---- updates ----

// Add inserts key and reports whether its fingerprint was new to the
// filter. A full filter (see Insert) reports false and is unchanged.
func (f *Filter) Add(key []byte) bool { return f.AddHash(f.h.Sum64(key)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) bool { return f.AddHash(f.h.Sum64String(key)) }

// AddHash is Add for a precomputed hash.
func (f *Filter) AddHash(h uint64) bool {
	isNew := f.CountHash(h) == 0
	if f.InsertHash(h) != nil {
		return false
	}
	return isNew
}

// Insert adds key, returning an error wrapping bloomery.ErrFull (and
// leaving the filter exactly as it was) when no slot is left.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(f.h.Sum64(key)) }

// InsertHash is Insert for a precomputed hash.
func (f *Filter) InsertHash(h uint64) error {
	x, rm := f.split(h)
	occupied := getBit(f.occupieds, x)
	var pos, end uint64
	if occupied {
		start := f.runStart(x)
		end = f.runEnd(x)
		pos = start
		for pos <= end && f.rem(pos) <= rm {
			pos++
		}
	} else {
		pos = f.runStart(x)
	}
	e := f.firstEmpty(pos)
	if e >= f.xslots {
		return fmt.Errorf("quotient: no free slot after %d (%d of %d slots used): %w", pos, f.n, f.xslots, bloomery.ErrFull)
	}
	for i := e; i > pos; i-- {
		f.setRem(i, f.rem(i-1))
		putBit(f.runends, i, getBit(f.runends, i-1))
	}
	f.setRem(pos, rm)
	switch {
	case !occupied:
		setBit(f.runends, pos)
		setBit(f.occupieds, x)
	case pos == end+1:
		clrBit(f.runends, end)
		setBit(f.runends, pos)
	default:
		clrBit(f.runends, pos)
	}
	f.n++
	f.fixOffsets(min(x, pos), e+1)
	return nil
}

// Delete removes one copy of key's fingerprint and reports whether one was
// found. Delete only keys that were added: deleting a key that was never
// added but collides with one that was removes that key's fingerprint and
// causes a false negative for it.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.h.Sum64(key)) }

// DeleteHash is Delete for a precomputed hash.
func (f *Filter) DeleteHash(h uint64) bool {
	x, rm := f.split(h)
	if !getBit(f.occupieds, x) {
		return false
	}
	start, endQ := f.runStart(x), f.runEnd(x)
	pos := start
	for pos <= endQ && f.rem(pos) < rm {
		pos++
	}
	if pos > endQ || f.rem(pos) != rm {
		return false
	}
	// Find E, the end of the last run that shifts left: runs that follow
	// contiguously and are not at their home slot.
	last := endQ
	cur := x
	for {
		nq, ok := f.nextOccupied(cur, last+1)
		if !ok || nq == last+1 {
			break // a gap, or the next run sits at its home
		}
		e := f.selectRunend(last+1, 1)
		cur, last = nq, e
	}
	if start == endQ {
		clrBit(f.occupieds, x)
	} else if pos == endQ {
		setBit(f.runends, pos-1)
	}
	for i := pos; i < last; i++ {
		f.setRem(i, f.rem(i+1))
		putBit(f.runends, i, getBit(f.runends, i+1))
	}
	f.setRem(last, 0)
	clrBit(f.runends, last)
	f.n--
	f.fixOffsets(min(x, pos), last+1)
	return true
}

// nextOccupied returns the smallest occupied quotient in (after, limit].
func (f *Filter) nextOccupied(after, limit uint64) (uint64, bool) {
	i := after + 1
	limit = min(limit, f.nslots-1)
	for i <= limit {
		w := f.occupieds[i>>6] >> (i & 63)
		if w != 0 {
			c := i + uint64(bits.TrailingZeros64(w))
			return c, c <= limit
		}
		i = (i | 63) + 1
	}
	return 0, false
}

// ---- iteration, resize, merge ----

// Fingerprints yields every stored fingerprint, repeats included, in
// increasing order, as the high p bits of a 64-bit hash (the low 64-p bits
// are zero). A filter built from the same fingerprints with the same p
// answers exactly like this one.
func (f *Filter) Fingerprints() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		f.walk(func(x, rm uint64) bool { return yield((x<<f.r | rm) << (64 - f.p)) })
	}
}

// walk visits (quotient, remainder) pairs in order.
func (f *Filter) walk(fn func(x, rm uint64) bool) {
	var cursor uint64
	for w, word := range f.occupieds {
		for word != 0 {
			x := uint64(w)<<6 + uint64(bits.TrailingZeros64(word))
			word &= word - 1
			i := max(cursor, x)
			for ; ; i++ {
				if !fn(x, f.rem(i)) {
					return
				}
				if getBit(f.runends, i) {
					break
				}
			}
			cursor = i + 1
		}
	}
}

// fill rebuilds an empty table from fingerprints (as p-bit values) in
// increasing order.
func (f *Filter) fill(fps iter.Seq[uint64]) error {
	var cursor uint64
	lastQ := ^uint64(0)
	for fp := range fps {
		x, rm := fp>>f.r, fp&(1<<f.r-1)
		pos := cursor
		if x != lastQ {
			if lastQ != ^uint64(0) {
				setBit(f.runends, cursor-1)
			}
			pos = max(x, cursor)
			setBit(f.occupieds, x)
			lastQ = x
		}
		if pos >= f.xslots {
			return fmt.Errorf("quotient: %d fingerprints overflow %d slots: %w", f.n, f.xslots, bloomery.ErrFull)
		}
		f.setRem(pos, rm)
		cursor = pos + 1
		f.n++
	}
	if lastQ != ^uint64(0) {
		setBit(f.runends, cursor-1)
	}
	f.fixOffsets(0, f.xslots)
	return nil
}

// Resize returns a filter with twice the home slots holding every
// fingerprint of f (f is unchanged). One remainder bit becomes a quotient
// bit; the fingerprints, and so the answers for stored keys, are kept
// exactly. While reserved doublings remain the FPR at the doubled capacity
// stays at the design FPR; beyond them it doubles with each doubling of
// the number of keys. It fails with ErrInvalidParams when r would drop
// below 1.
func (f *Filter) Resize() (*Filter, error) {
	if f.r < 2 {
		return nil, fmt.Errorf("quotient: cannot resize with %d remainder bits: %w", f.r, bloomery.ErrInvalidParams)
	}
	if err := checkTable(f.q+1, f.r-1); err != nil {
		return nil, err
	}
	g := newTable(f.q+1, f.r-1, f.h)
	g.capacity = f.capacity * 2
	g.doublings = max(0, f.doublings-1)
	g.resizes = f.resizes + 1
	g.design = f.design
	if f.doublings == 0 {
		g.design = fprAt(float64(g.capacity), g.p)
	}
	if err := g.fill(f.pfps()); err != nil {
		return nil, err
	}
	return g, nil
}

func (f *Filter) pfps() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		f.walk(func(x, rm uint64) bool { return yield(x<<f.r | rm) })
	}
}

// Merge returns a new filter holding the fingerprints of f and g (repeats
// add up); neither input changes. Both must use the same hasher and the
// same fingerprint width p, else the error wraps bloomery.ErrIncompatible.
// The result has enough home slots for the combined count at MaxLoad.
func Merge(f, g *Filter) (*Filter, error) {
	if f.p != g.p || !f.h.Equal(g.h) {
		return nil, fmt.Errorf("quotient: merge of %d-bit/%v and %d-bit/%v fingerprints: %w", f.p, f.h, g.p, g.h, bloomery.ErrIncompatible)
	}
	q := max(f.q, g.q)
	for float64(f.n+g.n) > MaxLoad*math.Ldexp(1, int(q)) {
		q++
	}
	if q >= f.p {
		return nil, fmt.Errorf("quotient: merged filter needs %d quotient bits of %d: %w", q, f.p, bloomery.ErrInvalidParams)
	}
	if err := checkTable(q, f.p-q); err != nil {
		return nil, err
	}
	out := newTable(q, f.p-q, f.h)
	out.capacity = f.capacity + g.capacity
	out.doublings = min(f.doublings, g.doublings)
	out.design = max(f.design, g.design)
	next1, stop1 := iter.Pull(f.pfps())
	defer stop1()
	next2, stop2 := iter.Pull(g.pfps())
	defer stop2()
	a, okA := next1()
	b, okB := next2()
	merged := func(yield func(uint64) bool) {
		for okA || okB {
			var v uint64
			if okA && (!okB || a <= b) {
				v = a
				a, okA = next1()
			} else {
				v = b
				b, okB = next2()
			}
			if !yield(v) {
				return
			}
		}
	}
	if err := out.fill(merged); err != nil {
		return nil, err
	}
	return out, nil
}

// ---- figures ----

// Len returns the number of stored fingerprints, repeats included.
func (f *Filter) Len() int { return f.n }

// Cap returns the design capacity.
func (f *Filter) Cap() int { return f.capacity }

// Slots returns the number of home slots (2^q).
func (f *Filter) Slots() int { return int(f.nslots) }

// QuotientBits, RemainderBits and FingerprintBits return q, r and p = q+r.
func (f *Filter) QuotientBits() int    { return int(f.q) }
func (f *Filter) RemainderBits() int   { return int(f.r) }
func (f *Filter) FingerprintBits() int { return int(f.p) }

// Hasher returns the filter's hasher.
func (f *Filter) Hasher() hashing.Hasher { return f.h }

// Kind returns bloomery.KindQuotient.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindQuotient }

// SizeBytes returns the bytes held by the table (slots, metadata, offsets).
func (f *Filter) SizeBytes() int {
	return 8*(len(f.occupieds)+len(f.runends)+len(f.rems)) + len(f.offsets)
}

// LoadFactor returns used slots / home slots.
func (f *Filter) LoadFactor() float64 { return float64(f.n) / float64(f.nslots) }

// EstimatedFPR returns 1 - (1 - 2^-p)^n for the n stored fingerprints.
func (f *Filter) EstimatedFPR() float64 { return fprAt(float64(f.n), f.p) }

// DesignFPR returns the FPR the filter was sized for.
func (f *Filter) DesignFPR() float64 { return f.design }

// Overfilled reports whether EstimatedFPR exceeds twice DesignFPR.
func (f *Filter) Overfilled() bool { return bloomery.IsOverfilled(f.EstimatedFPR(), f.design) }

// Stats describes the filter.
func (f *Filter) Stats() bloomery.Stats {
	return bloomery.Stats{
		Kind:            bloomery.KindQuotient,
		Len:             f.n,
		Cap:             f.capacity,
		SizeBytes:       f.SizeBytes(),
		BitsPerKey:      float64(8*f.SizeBytes()) / float64(max(1, f.capacity)),
		FingerprintBits: int(f.p),
		FillRatio:       f.LoadFactor(),
		DesignFPR:       f.design,
		EstimatedFPR:    f.EstimatedFPR(),
		Overfilled:      f.Overfilled(),
		Extra: []bloomery.Stat{
			{Name: "quotient_bits", Value: float64(f.q)},
			{Name: "remainder_bits", Value: float64(f.r)},
			{Name: "spare_doublings", Value: float64(f.doublings)},
			{Name: "resizes", Value: float64(f.resizes)},
		},
	}
}
