// Package counting is a counting Bloom filter (Fan, Cao, Almeida and
// Broder, "Summary cache", 2000): a Bloom filter whose bits are small
// counters, so that keys can be deleted as well as added.
//
// # Model
//
// The filter is m counters of c bits (c = 4 by default, or 8) and k probes
// per key. Add increments the key's k counters, Delete decrements them, and
// Contains reports whether all k are non-zero. Counters that are non-zero
// play the role of set bits, so the false-positive rate is that of a Bloom
// filter with m bits and k probes (fpmath.StandardFPR), at c times the
// space: about 4 x 1.44 x log2(1/FPR) bits per key for 4-bit counters.
//
// # Saturation is sticky
//
// A counter stops at its maximum, 2^c - 1 (15 or 255), and a counter that
// has reached the maximum is never decremented again: its true count is
// unknown, and decrementing it could later bring it to zero while keys
// that map to it are still present, a false negative. The price is that
// keys whose counters saturated read as present after their deletion (a
// stale positive, never a false negative). With optimal k and 4-bit
// counters the chance that any counter reaches 16 is tiny (Fan et al.
// bound it near 1.4e-15 * m); Stats reports the number of stuck counters as
// the "saturated" extra figure.
//
// # Standard and blocked layouts
//
// One 64-bit hash h per key (package hashing). The standard layout derives
// the probes by double hashing in 64-bit space and maps each onto [0, m)
// with Reduce (no modulo):
//
//	h2 = Remix(h, 1) | 1;  probe i = Reduce(h + i*h2, m),  i = 0..k-1
//
// A query touches up to k cache lines (a negative query stops at the
// first zero counter).
//
// The blocked layout confines a key's probes to one 64-byte line: 128
// 4-bit or 64 8-bit counters (Putze, Sanders and Singler's blocked Bloom
// filter). The line is Reduce(h, lines), from the high bits of h; the
// in-line positions are consecutive 7-bit (or 6-bit) fields of
// x1 = Remix(h, 1), from the low end, 9 (or 10) per word; further probes
// take the fields of Remix(h, j) for the probe number j that needs a new
// word. (Stepping x by a golden-ratio multiply, as RocksDB does, repeats
// positions too often within one line: about 1 key in 15000 had at most
// 3 distinct positions of 6.) Every
// operation touches one cache line when the table is 64-byte aligned (Go's
// allocator places objects above 32 KiB on page boundaries; smaller tables
// may straddle lines), and the uneven load of the lines raises the FPR
// (fpmath.BlockedFPR), which sizing compensates with more counters. With
// lines of only 64 or 128 counters the measured FPR runs 3-7% above
// that model: the model uses the mean fill of a line with i keys, and the
// spread of the fill around that mean raises E[fill^k] (Jensen).
//
// # Deletion
//
// Delete only keys that were added. Delete first checks that all k
// counters are non-zero and does nothing (returning false) otherwise, but
// deleting a key that was never added and happens to be a false positive
// decrements counters that other keys need, which can cause false
// negatives.
//
// The filter is a multiset: adding a key twice and deleting it once
// leaves it present. Len counts adds minus successful deletes.
//
// # Concurrency
//
// By default a Filter is not safe for concurrent use when any goroutine
// mutates it; concurrent read-only calls are safe. After EnableConcurrent
// (or with Params.Concurrent), Add, Delete, Contains and Count may run
// from many goroutines at once: every counter update is a compare-and-swap
// loop on its 64-bit word and the tallies are atomic. Each counter update
// is atomic, not each key's group of k updates, so a Contains racing with
// the Add of the same key may see it partly added; once an Add has
// returned, the key is present for every later Contains until a Delete of
// it. AppendBinary, Merge and Clone must not run beside writers.
//
// No method allocates except construction, Clone and encoding.
package counting

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Limits and constants.
const (
	// LineBytes is the size of a blocked layout's line.
	LineBytes = 64
	// MaxCapacity bounds Params.Capacity.
	MaxCapacity = 1 << 34
	// MaxK bounds the probe count.
	MaxK = 32
	// MinFPR bounds the target FPR from below (keeps tables finite).
	MinFPR = 1e-12
)

// Params configures New.
type Params struct {
	// Capacity is the number of keys at which the filter meets FPR.
	// Required, 1..MaxCapacity.
	Capacity int
	// FPR is the target false-positive rate at Capacity keys, in
	// [MinFPR, 1). Required.
	FPR float64
	// CounterBits is 4 (the default when zero) or 8.
	CounterBits int
	// Blocked confines each key's probes to one 64-byte line.
	Blocked bool
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
	// Concurrent makes Add and Delete safe beside each other and beside
	// queries (see EnableConcurrent).
	Concurrent bool
}

// Filter is a counting Bloom filter. The zero value is not usable; call New.
type Filter struct {
	// words holds the counters, 64/c per word, counter i in word i/(64/c)
	// at bit (i mod 64/c)*c.
	words []uint64
	// m is the number of counters. INVARIANT: a multiple of 64/c; in the
	// blocked layout a multiple of the counters per line.
	m        uint64
	k        int
	cbits    uint   // c: 4 or 8
	cshift   uint   // log2(c)
	wshift   uint   // log2(counters per word)
	slotMask uint64 // counters per word - 1
	cmax     uint64 // 2^c - 1
	blocked  bool
	lines    uint64 // blocked: m / counters per line
	lshift   uint   // blocked: log2(counters per line)
	capacity int
	// count is adds minus successful deletes (never below 0).
	count int64
	// nonzero and saturated count counters that are > 0 and == cmax.
	nonzero, saturated uint64
	// concurrent selects atomic updates (EnableConcurrent).
	concurrent bool
	hasher     hashing.Hasher
}

var (
	_ bloomery.Adder        = (*Filter)(nil)
	_ bloomery.Deleter      = (*Filter)(nil)
	_ bloomery.Counter      = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Sizing is what New chooses: m counters and k probes.
type Sizing struct {
	Counters uint64
	K        int
	// FPR is the expected false-positive rate at the planned capacity.
	FPR float64
}

// Plan returns the counters and probes New uses for p (without
// allocating): the standard layout takes m = n * 1.44 * log2(1/FPR)
// counters rounded up to whole words and the optimal k, growing m until
// the rounded k meets the target; the blocked layout grows the number of
// lines from that starting point until the best k meets the target under
// the blocked model.
func Plan(p Params) (Sizing, error) {
	cb, err := validate(p)
	if err != nil {
		return Sizing{}, err
	}
	n := float64(p.Capacity)
	perWord := uint64(64 / cb)
	if !p.Blocked {
		m := roundUp(uint64(math.Ceil(n*fpmath.BitsPerKeyForFPR(p.FPR))), perWord)
		for i := 0; ; i++ {
			k := fpmath.StandardK(float64(m) / n)
			if fpr := fpmath.StandardFPR(float64(m), n, k); fpr <= p.FPR || i == 100 {
				return Sizing{Counters: m, K: k, FPR: fpr}, nil
			}
			m = roundUp(m+m/100+1, perWord)
		}
	}
	perLine := uint64(LineBytes * 8 / cb)
	lines := max(1, uint64(math.Ceil(n*fpmath.BitsPerKeyForFPR(p.FPR)/float64(perLine))))
	for range 400 {
		m := lines * perLine
		k, fpr := bestBlockedK(float64(m), n, int(perLine))
		if fpr <= p.FPR {
			return Sizing{Counters: m, K: k, FPR: fpr}, nil
		}
		lines += lines/50 + 1
	}
	return Sizing{}, fmt.Errorf("counting: no blocked layout reaches FPR %v: %w", p.FPR, bloomery.ErrInvalidParams)
}

// bestBlockedK returns the probe count minimising the blocked FPR.
func bestBlockedK(m, n float64, perLine int) (int, float64) {
	bestK, best := 1, 2.0
	start := fpmath.StandardK(m / n)
	for k := max(1, start-3); k <= min(MaxK, start+4); k++ {
		if f := fpmath.BlockedFPR(m, n, k, perLine); f < best {
			bestK, best = k, f
		}
	}
	return bestK, best
}

func roundUp(x, to uint64) uint64 { return (max(x, 1) + to - 1) / to * to }

func validate(p Params) (int, error) {
	if p.Capacity < 1 || uint64(p.Capacity) > MaxCapacity {
		return 0, fmt.Errorf("counting: capacity %d outside 1..%d: %w", p.Capacity, uint64(MaxCapacity), bloomery.ErrInvalidParams)
	}
	if !(p.FPR >= MinFPR && p.FPR < 1) {
		return 0, fmt.Errorf("counting: FPR %v outside [%g, 1): %w", p.FPR, MinFPR, bloomery.ErrInvalidParams)
	}
	switch p.CounterBits {
	case 0:
		return 4, nil
	case 4, 8:
		return p.CounterBits, nil
	}
	return 0, fmt.Errorf("counting: counter bits %d (want 4 or 8): %w", p.CounterBits, bloomery.ErrInvalidParams)
}

// New returns an empty filter for p.Capacity keys at p.FPR.
func New(p Params) (*Filter, error) {
	l, err := Plan(p)
	if err != nil {
		return nil, err
	}
	cb, _ := validate(p)
	if err := bloomery.CheckTableBytes("counting", l.Counters*uint64(cb)/8); err != nil {
		return nil, err
	}
	f := newFilter(l.Counters, l.K, cb, p.Blocked, p.Capacity, p.Hasher)
	f.words = make([]uint64, f.m>>f.wshift)
	f.concurrent = p.Concurrent
	return f, nil
}

// NewForCapacity returns an empty standard filter with 4-bit counters for
// n keys at false-positive rate fpr.
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{Capacity: n, FPR: fpr})
}

// newFilter sets up the derived fields; the caller supplies words.
// REQUIRES: cb is 4 or 8, m a multiple of the counters per word (per line
// if blocked), 1 <= k <= MaxK.
func newFilter(m uint64, k, cb int, blocked bool, capacity int, h hashing.Hasher) *Filter {
	f := &Filter{
		m:        m,
		k:        k,
		cbits:    uint(cb),
		cmax:     1<<uint(cb) - 1,
		blocked:  blocked,
		capacity: capacity,
		hasher:   h,
	}
	if cb == 4 {
		f.cshift, f.wshift, f.lshift = 2, 4, 7
	} else {
		f.cshift, f.wshift, f.lshift = 3, 3, 6
	}
	f.slotMask = 1<<f.wshift - 1
	if blocked {
		f.lines = m >> f.lshift
	}
	return f
}

// EnableConcurrent switches f to atomic updates, so that Add, Delete,
// Contains and Count may be called from many goroutines at once. Call it
// before sharing f (for instance right after Decode); it cannot be undone.
// Updates cost a compare-and-swap per counter instead of a plain store.
func (f *Filter) EnableConcurrent() { f.concurrent = true }

// Concurrent reports whether f uses atomic updates.
func (f *Filter) Concurrent() bool { return f.concurrent }

// Kind returns bloomery.KindCounting.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindCounting }

// Hasher returns the filter's hasher.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// K returns the number of probes per key.
func (f *Filter) K() int { return f.k }

// Counters returns the number of counters m.
func (f *Filter) Counters() int { return int(f.m) }

// CounterBits returns the counter width (4 or 8).
func (f *Filter) CounterBits() int { return int(f.cbits) }

// Blocked reports whether the filter uses the blocked layout.
func (f *Filter) Blocked() bool { return f.blocked }

// Len returns adds minus successful deletes (a key added twice counts twice).
func (f *Filter) Len() int { return int(atomic.LoadInt64(&f.count)) }

// Cap returns the design capacity.
func (f *Filter) Cap() int { return f.capacity }

// SizeBytes returns the memory held by the counters.
func (f *Filter) SizeBytes() int { return len(f.words) * 8 }

// Saturated returns the number of counters stuck at their maximum.
func (f *Filter) Saturated() int { return int(atomic.LoadUint64(&f.saturated)) }

// FillRatio returns the fraction of non-zero counters.
func (f *Filter) FillRatio() float64 {
	return float64(atomic.LoadUint64(&f.nonzero)) / float64(f.m)
}

// EstimatedFPR returns the false-positive rate expected from the actual
// fill: fill^k for the standard layout; for the blocked layout, the
// blocked model at the key count the fill implies
// (fpmath.BlockedCountFromFill, which counts the repeated probes of a key
// inside its line), since fill^k ignores the uneven load of
// lines.
func (f *Filter) EstimatedFPR() float64 {
	if !f.blocked {
		return fpmath.FillFPR(f.FillRatio(), f.k)
	}
	n := fpmath.BlockedCountFromFill(float64(f.m), float64(atomic.LoadUint64(&f.nonzero)), f.k, 1<<f.lshift)
	if math.IsInf(n, 1) {
		return 1
	}
	return fpmath.BlockedFPR(float64(f.m), n, f.k, 1<<f.lshift)
}

// DesignFPR returns the false-positive rate expected at Cap keys.
func (f *Filter) DesignFPR() float64 { return f.fprAt(float64(f.capacity)) }

func (f *Filter) fprAt(n float64) float64 {
	if f.blocked {
		return fpmath.BlockedFPR(float64(f.m), n, f.k, 1<<f.lshift)
	}
	return fpmath.StandardFPR(float64(f.m), n, f.k)
}

// Stats describes the filter. Extra holds "saturated" (counters stuck at
// the maximum), "counter_bits" and "blocked" (0 or 1).
func (f *Filter) Stats() bloomery.Stats {
	est, design := f.EstimatedFPR(), f.DesignFPR()
	bl := 0.0
	if f.blocked {
		bl = 1
	}
	return bloomery.Stats{
		Kind:         bloomery.KindCounting,
		Len:          f.Len(),
		Cap:          f.capacity,
		SizeBytes:    f.SizeBytes(),
		BitsPerKey:   float64(f.SizeBytes()*8) / float64(f.capacity),
		HashFuncs:    f.k,
		FillRatio:    f.FillRatio(),
		DesignFPR:    design,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, design),
		Extra: []bloomery.Stat{
			{Name: "saturated", Value: float64(f.Saturated())},
			{Name: "counter_bits", Value: float64(f.cbits)},
			{Name: "blocked", Value: bl},
		},
	}
}

// indices stores the key's k counter indices in out and returns them as
// a slice of it (on the caller's stack: no allocation).
func (f *Filter) indices(h uint64, out *[MaxK]uint64) []uint64 {
	idx := out[:f.k]
	if f.blocked {
		base := hashing.Reduce(h, f.lines) << f.lshift
		lmask := uint64(1)<<f.lshift - 1
		x, left := hashing.Remix(h, 1), f.perWord()
		for j := range idx {
			if left == 0 {
				x, left = hashing.Remix(h, uint64(j)+1), f.perWord()
			}
			idx[j] = base + x&lmask
			x >>= f.lshift
			left--
		}
		return idx
	}
	h2 := hashing.Remix(h, 1) | 1
	x := h
	for j := range idx {
		idx[j] = hashing.Reduce(x, f.m)
		x += h2
	}
	return idx
}

// perWord is the number of in-line probe positions one 64-bit word
// supplies: 9 of 7 bits (128 counters per line) or 10 of 6 bits (64).
func (f *Filter) perWord() int { return int(64 / f.lshift) }

// get returns counter i. The load is atomic (a plain load on amd64 and
// arm64 for aligned words), so readers may run beside concurrent writers.
func (f *Filter) get(i uint64) uint64 {
	return atomic.LoadUint64(&f.words[i>>f.wshift]) >> ((i & f.slotMask) << f.cshift) & f.cmax
}

// incrAtomic increments counter i unless it is saturated, and reports
// its previous value: the concurrent mode's increment, a compare-and-swap
// loop on the counter's word (there is no atomic add of a nibble that
// stops at 15). The plain mode's adds use addPlain.
func (f *Filter) incrAtomic(i uint64) uint64 {
	p := &f.words[i>>f.wshift]
	sh := (i & f.slotMask) << f.cshift
	for {
		w := atomic.LoadUint64(p)
		c := w >> sh & f.cmax
		if c == f.cmax {
			return c
		}
		if !atomic.CompareAndSwapUint64(p, w, w+1<<sh) {
			continue
		}
		if c == 0 {
			atomic.AddUint64(&f.nonzero, 1)
		}
		if c+1 == f.cmax {
			atomic.AddUint64(&f.saturated, 1)
		}
		return c
	}
}

// decr decrements counter i unless it is zero or saturated (sticky).
func (f *Filter) decr(i uint64) {
	p := &f.words[i>>f.wshift]
	sh := (i & f.slotMask) << f.cshift
	for {
		var w uint64
		if f.concurrent {
			w = atomic.LoadUint64(p)
		} else {
			w = *p
		}
		c := w >> sh & f.cmax
		if c == 0 || c == f.cmax {
			return
		}
		if !f.concurrent {
			*p = w - 1<<sh
		} else if !atomic.CompareAndSwapUint64(p, w, w-1<<sh) {
			continue
		}
		if c == 1 {
			f.tally(&f.nonzero, ^uint64(0))
		}
		return
	}
}

// tally adds d (two's complement for a decrement) to a counter tally.
func (f *Filter) tally(p *uint64, d uint64) {
	if f.concurrent {
		atomic.AddUint64(p, d)
	} else {
		*p += d
	}
}

// ContainsHash reports whether a key with hash h may be in the filter:
// whether all of its k counters are non-zero. It stops at the first zero.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.blocked {
		base := hashing.Reduce(h, f.lines) << f.lshift
		lmask := uint64(1)<<f.lshift - 1
		x, left := hashing.Remix(h, 1), f.perWord()
		for j := range f.k {
			if left == 0 {
				x, left = hashing.Remix(h, uint64(j)+1), f.perWord()
			}
			if f.get(base+x&lmask) == 0 {
				return false
			}
			x >>= f.lshift
			left--
		}
		return true
	}
	h2 := hashing.Remix(h, 1) | 1
	x := h
	for range f.k {
		if f.get(hashing.Reduce(x, f.m)) == 0 {
			return false
		}
		x += h2
	}
	return true
}

// Contains reports whether key may be in the filter.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]).
// REQUIRES: len(out) >= len(hashes).
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	for i, h := range hashes {
		out[i] = f.ContainsHash(h)
	}
}

// AddHash adds one copy of a key with hash h (incrementing its k counters,
// each saturating at the maximum) and reports whether the key was absent
// before: false means it was already present or a false positive. The key
// is counted either way, and one Delete undoes one Add.
//
// Outside the concurrent mode no branch depends on a counter's value (see
// addPlain), so the k counters' cache misses overlap.
func (f *Filter) AddHash(h uint64) bool {
	var buf [MaxK]uint64
	idx := f.indices(h, &buf)
	if !f.concurrent {
		return f.addPlain(idx)
	}
	isNew := false
	for _, i := range idx {
		if f.incrAtomic(i) == 0 {
			isNew = true
		}
	}
	atomic.AddInt64(&f.count, 1)
	return isNew
}

// addPlain is AddHash's update of counters idx outside the concurrent
// mode: incrAtomic's effect, with plain stores and without its branches.
// A counter c gains inc = 1 - (c+1)>>cbits (0 once saturated at cmax =
// 2^cbits - 1); the tallies gain (c-1)>>63 (1 when c was 0) and
// ((c+1)^cmax - 1)>>63 (1 when c+1 is cmax), which are 0 or 1 as c <=
// cmax. A branch on the loaded value (was it zero? saturated?) resolves
// only when the counter's line arrives and is mispredicted about half the
// time near the design load, and every mispredict discarded the probes
// issued after it: at 10^7 keys per-key adds took 980-1170 ns, nearly k
// dependent DRAM misses, against 222 ns for a positive query of the same
// counters; without the branches 365-372 ns (benchreport -sizes 1e7
// -only counting, alternated runs). Two probes of one key on the same
// counter work as before: the second reads the first's store.
func (f *Filter) addPlain(idx []uint64) bool {
	var zeros, sats uint64
	for _, i := range idx {
		p := &f.words[i>>f.wshift]
		sh := (i & f.slotMask) << f.cshift
		w := *p
		c := w >> sh & f.cmax
		*p = w + (1-(c+1)>>f.cbits)<<sh
		zeros += (c - 1) >> 63
		sats += ((c + 1) ^ f.cmax - 1) >> 63
	}
	f.nonzero += zeros
	f.saturated += sats
	f.count++
	return zeros != 0
}

// Add is AddHash of the key's hash.
func (f *Filter) Add(key []byte) bool { return f.AddHash(f.hasher.Sum64(key)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) bool { return f.AddHash(f.hasher.Sum64String(key)) }

// DeleteHash removes one copy of a key with hash h: if all of its counters
// are non-zero it decrements each that is not saturated and returns true;
// otherwise the key is certainly absent, nothing changes, and it returns
// false. Delete only keys that were added (see the package documentation).
func (f *Filter) DeleteHash(h uint64) bool {
	if !f.ContainsHash(h) {
		return false
	}
	var buf [MaxK]uint64
	for _, i := range f.indices(h, &buf) {
		f.decr(i)
	}
	// Deletes of false positives must not drive the count below 0.
	for {
		c := atomic.LoadInt64(&f.count)
		if c == 0 || atomic.CompareAndSwapInt64(&f.count, c, c-1) {
			break
		}
	}
	return true
}

// Delete is DeleteHash of the key's hash.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.hasher.Sum64(key)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(f.hasher.Sum64String(key)) }

// CountHash estimates how many times a key with hash h was added and not
// deleted: the minimum of its k counters. It never undercounts a key that
// was only added (other keys can raise it; a saturated minimum means "at
// least 2^c - 1").
func (f *Filter) CountHash(h uint64) int {
	var buf [MaxK]uint64
	lo := f.cmax
	for _, i := range f.indices(h, &buf) {
		lo = min(lo, f.get(i))
	}
	return int(lo)
}

// Count is CountHash of the key's hash.
func (f *Filter) Count(key []byte) int { return f.CountHash(f.hasher.Sum64(key)) }

// Clone returns a deep copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	g.words = append([]uint64(nil), f.words...)
	return &g
}

// Compatible reports whether f and o have the same layout and hashing, so
// that merging them is meaningful; otherwise the error wraps
// bloomery.ErrIncompatible.
func (f *Filter) Compatible(o *Filter) error {
	switch {
	case f.m != o.m || f.k != o.k || f.cbits != o.cbits || f.blocked != o.blocked:
		return fmt.Errorf("counting: layouts differ (%d/%d counters, k %d/%d, %d/%d bits, blocked %v/%v): %w",
			f.m, o.m, f.k, o.k, f.cbits, o.cbits, f.blocked, o.blocked, bloomery.ErrIncompatible)
	case !f.hasher.Equal(o.hasher):
		return fmt.Errorf("counting: hashers differ (%v, %v): %w", f.hasher, o.hasher, bloomery.ErrIncompatible)
	}
	return nil
}

// Merge adds o's counters into f, counter by counter, saturating at the
// maximum (a saturated counter in either input stays saturated), so f
// then holds the multiset union: every key of either filter is present,
// and deleting a key from the merged filter is valid if it was added to
// either input. The layouts and hashers must match (Compatible); on error
// f is unchanged. The design capacity becomes the larger of the two.
func (f *Filter) Merge(o *Filter) error {
	if err := f.Compatible(o); err != nil {
		return err
	}
	per := uint64(1) << f.wshift
	for w, ow := range o.words {
		if ow == 0 {
			continue
		}
		x := f.words[w]
		var out uint64
		for j := uint64(0); j < per; j++ {
			sh := j << f.cshift
			a, b := x>>sh&f.cmax, ow>>sh&f.cmax
			s := min(a+b, f.cmax)
			if a == 0 && s != 0 {
				f.nonzero++
			}
			if a != f.cmax && s == f.cmax {
				f.saturated++
			}
			out |= s << sh
		}
		f.words[w] = out
	}
	f.count += o.count
	f.capacity = max(f.capacity, o.capacity)
	return nil
}

// recount recomputes nonzero and saturated from the counters.
func (f *Filter) recount() {
	f.nonzero, f.saturated = 0, 0
	per := uint64(1) << f.wshift
	for _, x := range f.words {
		if x == 0 {
			continue
		}
		for j := uint64(0); j < per; j++ {
			c := x >> (j << f.cshift) & f.cmax
			if c != 0 {
				f.nonzero++
			}
			if c == f.cmax {
				f.saturated++
			}
		}
	}
}
