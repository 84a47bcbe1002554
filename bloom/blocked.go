package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

var (
	_ bloomery.Adder        = (*Blocked)(nil)
	_ bloomery.BatchQuerier = (*Blocked)(nil)
)

// Blocked is a cache-line blocked Bloom filter: the bit array is split into
// 512-bit blocks (one 64-byte cache line, eight uint64 words, the backing
// array aligned to 64 bytes) and all k probes of a key fall in one block.
// A query therefore costs one cache miss, where a standard filter costs up
// to k, at the price of a somewhat higher FPR for the same memory (keys per
// block vary, and the FPR is convex in the load).
//
// # Probes
//
// The key's 64-bit hash h chooses the block with the multiply-shift
// Reduce(h, blocks), which consumes the high bits of h. The in-block
// positions come from x = Mix64(h), a full-avalanche bijection, so they
// are independent of the block choice: each probe takes the next 9 bits of
// x (3 bits choose the word, 6 the bit); after 7 probes (63 bits) x is
// refilled with Remix(h, 1), Remix(h, 2), ... So the probes of a key are
// independent and uniform within its block, exactly the model of
// fpmath.BlockedFPR (Putze, Sanders and Singler):
//
//	FPR = sum_i Pois(i; n*512/m) * (1 - (1 - 1/512)^(k*i))^k
//
// which the tests measure within a few percent. (The formula charges each
// block the k-th power of its mean fill; fpmath.BlockedFPRExact, which
// uses the exact occupancy distribution, is 1.2% higher at 10 bits/key
// and 2.6% at 16, and matches the measurements more closely. The design
// and estimated FPRs use BlockedFPR.) RocksDB's FastLocalBloom
// derives its probes by repeated 32-bit multiplication instead, which it
// reports costs about 1% relative FPR; independent bits cost one Mix64
// per 7 probes.
//
// k is chosen by BlockedK from a table of bits/key thresholds for this
// layout (not round(ln2*m/n)): at 10 bits/key it is 7 and the FPR is
// 0.96% (Poisson model 0.957%).
//
// # Costs
//
// Add and Contains touch one cache line and do not allocate; Contains
// reads its first three probes without a branch and then stops at the
// first clear bit (see ContainsHash). ContainsBatch and AddBatch are
// software pipelined: they prefetch the lines of hashes 16 (AddBatch) or
// 32 (ContainsBatch) positions ahead (PREFETCHT0 on amd64; plain loads
// elsewhere) before probing the current ones, so independent DRAM misses
// overlap. On amd64 with BMI1/BMI2 (plain mode, k <= 7) ContainsBatch is
// one assembly loop that does this key by key; elsewhere Go code plans
// and probes 16 keys at a time (see ContainsBatch). Arrays of 8
// MiB and more are advised onto transparent huge pages on Linux, which
// removes most TLB misses of random probes. On the 2-core development VM
// (shared and heavily loaded, so absolute figures are loose) a filter for
// 10^8 keys at 10 bits/key answered single queries in 275-850 ns and
// batched ones in 62-157 ns per key, 4-6 times less in each run
// (BenchmarkContainsHash and BenchmarkContainsBatch with
// BLOOMERY_BENCH_N=100000000).
//
// # Concurrency
//
// By default Contains* may run concurrently with each other, and Add*,
// Union, Reset and UnmarshalBinary need exclusive access. A filter created
// with Params.Concurrent (or switched with SetConcurrent before it is
// shared) is safe for any mix of concurrent Add*, Contains*, the batch
// methods, Len, FillRatio and the estimates, without locks: it sets bits
// with atomic OR, reads them with atomic loads and counts Len with an
// atomic counter. Union, Reset, Clone and the encoders then see each word
// atomically but not a single point in time (an Add racing with them may
// be included or not); Union and Reset still need exclusive access to be
// exact.
type Blocked struct {
	// count is the number of adds reported new, updated atomically in
	// concurrent mode. First, so that it is 64-bit aligned on 32-bit
	// platforms.
	count      int64
	words      []uint64 // blocks*8 words, 64-byte aligned
	blocks     uint64
	k          int
	capacity   int
	design     float64
	ones       uint64 // bits set; maintained only when !concurrent
	hasher     hashing.Hasher
	concurrent bool
	inline     inlineHash // hasher as the assembly key paths need it
}

// NewBlocked returns an empty blocked Bloom filter for p.
func NewBlocked(p Params) (*Blocked, error) {
	blocks, k, err := blockedSize(p)
	if err != nil {
		return nil, err
	}
	f := newBlocked(blocks, k, p.Capacity, p.Hasher)
	f.concurrent = p.Concurrent
	return f, nil
}

// NewBlockedForCapacity returns an empty blocked Bloom filter sized for n
// keys at false-positive rate fpr (per fpmath.BlockedFPR), hashing with
// XXH3 seed 0.
func NewBlockedForCapacity(n int, fpr float64) (*Blocked, error) {
	return NewBlocked(Params{Capacity: n, FPR: fpr})
}

func newBlocked(blocks uint64, k, capacity int, h hashing.Hasher) *Blocked {
	return &Blocked{
		words:    alignedWords(blocks * 8),
		blocks:   blocks,
		k:        k,
		capacity: capacity,
		design:   fpmath.BlockedFPR(float64(blocks*BlockBits), float64(capacity), k, BlockBits),
		hasher:   h,
		inline:   inlineHashOf(h),
	}
}

// alignedWords returns n zeroed words whose first word is 64-byte aligned,
// so that every 8-word block is exactly one cache line. Large arrays are
// advised onto huge pages (adviseHugePages).
func alignedWords(n uint64) []uint64 {
	buf := make([]uint64, n+7)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := (64 - addr%64) % 64 / 8
	w := buf[skip : skip+uintptr(n) : skip+uintptr(n)]
	adviseHugePages(w)
	return w
}

// SetConcurrent switches the concurrent mode (see the type's doc). Call it
// before the filter is shared between goroutines, never while it is in use.
func (f *Blocked) SetConcurrent(on bool) {
	if f.concurrent && !on {
		f.ones = popcount(f.words)
	}
	f.concurrent = on
}

// Concurrent reports whether the filter is in concurrent mode.
func (f *Blocked) Concurrent() bool { return f.concurrent }

// Kind returns bloomery.KindBlocked.
func (f *Blocked) Kind() bloomery.Kind { return bloomery.KindBlocked }

// probeSeq yields the in-block bit positions of a hash: 9-bit fields of
// Mix64(h), then of Remix(h, 1), Remix(h, 2), ... (7 per word).
type probeSeq struct {
	x, h, refill uint64
	left         int
}

func newProbeSeq(h uint64) probeSeq { return probeSeq{x: hashing.Mix64(h), h: h, left: 7} }

// next returns the next bit position in [0, 512).
func (p *probeSeq) next() uint64 {
	if p.left == 0 {
		p.more()
	}
	v := p.x & 511
	p.x >>= 9
	p.left--
	return v
}

func (p *probeSeq) more() {
	p.refill++
	p.x = hashing.Remix(p.h, p.refill)
	p.left = 7
}

// blockedMasks returns the probe bits of hash h inside its block, one mask
// per word of the line.
func blockedMasks(h uint64, k int) (m [8]uint64) {
	// The probe sequence is spelled out with locals (as in add and
	// contains) rather than through probeSeq, whose state the compiler
	// keeps in memory, costing a store-to-load round trip per probe.
	x, r, left := hashing.Mix64(h), uint64(0), 7
	for range k {
		if left == 0 {
			r++
			x, left = hashing.Remix(h, r), 7
		}
		p := x & 511
		x >>= 9
		left--
		m[p>>6] |= 1 << (p & 63)
	}
	return m
}

// offset returns the index of the first word of h's block.
func (f *Blocked) offset(h uint64) uint64 { return hashing.Reduce(h, f.blocks) * 8 }

// Add inserts key and reports whether it was new (at least one of its bits
// was clear).
//
// It is AddHash(f.Hasher().Sum64(key)). On amd64, with the default XXH3
// hasher and keys of 4 to 128 bytes, one assembly leaf function
// (blockedAddKey) hashes the key and sets its bits (with LOCK BTS in
// concurrent mode), without the nested calls through Hasher.Sum64 (see
// Contains).
func (f *Blocked) Add(key []byte) bool {
	return blockedAddKey(f, unsafe.SliceData(key), len(key))
}

// AddString is Add for a string key, without copying it.
func (f *Blocked) AddString(key string) bool {
	return blockedAddKey(f, unsafe.StringData(key), len(key))
}

// blockedAddKeyGo is Add of the n bytes at p through Hasher.Sum64: the
// portable path, and the assembly's for other hashers and key lengths.
//
//lint:ignore U1000 called from assembly (the JMP at the end of the amd64 leaf)
func blockedAddKeyGo(f *Blocked, p *byte, n int) bool {
	return f.AddHash(f.hasher.Sum64(unsafe.Slice(p, n)))
}

// AddHash inserts a key by its hash (computed with f.Hasher()) and
// reports whether it was new (at least one of its bits was clear).
//
// On amd64 it is one assembly leaf function (blockedAddHash), Add's
// probes without the hashing: with BMI1 and k <= 7 six instructions a
// probe with no branch, where the Go code (addHashGo, the other
// platforms') compiles to about eighteen. With a filter in L1/L2 it cut
// an add of random hashes from 23-33 to 15-18 ns (blobloom's Add: 15-16);
// at 10^8 keys BenchmarkAddHash went from 101-122 to 78-79 ns.
func (f *Blocked) AddHash(h uint64) bool { return blockedAddHash(f, h) }

// addHashGo is AddHash in Go: the portable path.
func (f *Blocked) addHashGo(h uint64) bool {
	if f.concurrent {
		return f.addAtomic(f.offset(h), h)
	}
	return f.add(f.line(h), h)
}

// add sets h's probe bits in its block, line.
func (f *Blocked) add(line *[8]uint64, h uint64) bool {
	x, k := hashing.Mix64(h), f.k // probeSeq, in registers
	var added uint64
	for r := uint64(1); ; r++ {
		n := min(k, 7)
		for range n {
			p := x & 511
			x >>= 9
			w, b := &line[p>>6], p&63
			added += (^*w >> b) & 1
			*w |= 1 << b
		}
		if k -= n; k == 0 {
			break
		}
		x = hashing.Remix(h, r)
	}
	f.ones += added
	if added != 0 {
		f.count++
		return true
	}
	return false
}

func (f *Blocked) addAtomic(off, h uint64) bool {
	m := blockedMasks(h, f.k)
	line := (*[8]uint64)(f.words[off : off+8])
	var added uint64
	for j := range line {
		if m[j] != 0 {
			added |= m[j] &^ atomic.OrUint64(&line[j], m[j])
		}
	}
	if added != 0 {
		atomic.AddInt64(&f.count, 1)
		return true
	}
	return false
}

// Contains reports whether key may have been added (false: certainly not).
//
// It is ContainsHash(f.Hasher().Sum64(key)). On amd64, with the default
// XXH3 hasher and keys of 4 to 128 bytes, it is one call to an assembly
// leaf function (blockedContainsKey) that hashes the key (the XXH3 code
// of xxh3_amd64.h, shared with Filter) and probes as ContainsHash does:
// Contains inlines into its callers, so a query costs one call instead
// of three nested ones (Contains, Hasher.Sum64, the XXH3 package's hash
// function) and fewer instructions, and on a filter far larger than the
// cache fewer instructions per query let the core keep more consecutive
// queries' cache misses in flight. Other hashers and key lengths take the
// Go path (blockedContainsKeyGo), with the same answers.
func (f *Blocked) Contains(key []byte) bool {
	return blockedContainsKey(f, unsafe.SliceData(key), len(key))
}

// ContainsString is Contains for a string key.
func (f *Blocked) ContainsString(key string) bool {
	return blockedContainsKey(f, unsafe.StringData(key), len(key))
}

// blockedContainsKeyGo is Contains of the n bytes at p through
// Hasher.Sum64.
//
//lint:ignore U1000 called from assembly (the JMP at the end of the amd64 leaf)
func blockedContainsKeyGo(f *Blocked, p *byte, n int) bool {
	return f.ContainsHash(f.hasher.Sum64(unsafe.Slice(p, n)))
}

// ContainsHash reports whether a key with hash h may have been added.
//
// It calls nothing and reads the array without a bounds check (see
// line): the block address is one multiply from h, so the line's cache
// miss issues first and everything else (Mix64, the probe fields)
// overlaps it. On the plain path with k >= 3 the first three probes are
// read and ANDed without a branch, then one branch decides: a negative
// query leaves there with probability 1 - fill^3 (about 0.9 at the
// design load), so that branch, which can only resolve when the line
// arrives, is mispredicted about a tenth of the time instead of the
// coin-flip of a probe-by-probe exit. The remaining probes exit at the
// first clear bit. At 10^8 keys, against the previous probe-by-probe
// code two calls deep, this cut a negative query by 10-20% and a
// positive one by 5-15% in the same process (bench/cmd/blockedprobe,
// thread CPU time on the loaded VM). The concurrent mode and k < 3
// probe one by one with atomic loads.
func (f *Blocked) ContainsHash(h uint64) bool {
	// No path calls a function, so ContainsHash is a leaf without a
	// stack frame: every instruction before the line's load and the
	// first branch is one fewer in the out-of-order window, which is
	// what lets consecutive queries' misses overlap.
	line := f.line(h)
	x := hashing.Mix64(h)
	k := f.k
	if f.concurrent || k < 3 {
		// Probe by probe with atomic loads (plain loads on amd64), as
		// the concurrent mode needs; also fine for k < 3.
		for r := uint64(1); ; r++ {
			for n := min(k, 7); n > 0; n-- {
				if atomic.LoadUint64(&line[(x>>6)&7])&(1<<(x&63)) == 0 {
					return false
				}
				x >>= 9
			}
			if k <= 7 {
				return true
			}
			k -= 7
			x = hashing.Remix(h, r)
		}
	}
	a := line[(x>>6)&7] >> (x & 63)
	b := line[(x>>15)&7] >> ((x >> 9) & 63)
	c := line[(x>>24)&7] >> ((x >> 18) & 63)
	if a&b&c&1 == 0 {
		return false
	}
	x >>= 27
	for n := min(k, 7) - 3; n > 0; n-- {
		if line[(x>>6)&7]&(1<<(x&63)) == 0 {
			return false
		}
		x >>= 9
	}
	for r := uint64(1); k > 7; r++ {
		k -= 7
		x = hashing.Remix(h, r)
		for n := min(k, 7); n > 0; n-- {
			if line[(x>>6)&7]&(1<<(x&63)) == 0 {
				return false
			}
			x >>= 9
		}
	}
	return true
}

// line returns h's block (Reduce(h, blocks)) without a bounds check.
// Every constructor allocates words with alignedWords(8*blocks) or more
// words (DecodeBlocked: m/64 words for m/512 blocks), and words and
// blocks never change after, so the line is always inside the array
// (TestBlockedLineInBounds checks each constructor).
func (f *Blocked) line(h uint64) *[8]uint64 {
	return (*[8]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.words)), hashing.Reduce(h, f.blocks)*64))
}

// allFrom returns, in bit 0, the AND of the k probe bits of h after its
// first 7 (7 per word of Remix(h, 1), Remix(h, 2), ...), without
// branches on the bits.
func allFrom(line *[8]uint64, h uint64, k int) uint64 {
	acc := uint64(1)
	for r := uint64(1); k > 0; r++ {
		x := hashing.Remix(h, r)
		n := min(k, 7)
		for range n {
			acc &= line[(x>>6)&7] >> (x & 63)
			x >>= 9
		}
		k -= n
	}
	return acc
}

func (f *Blocked) containsAtomic(off, h uint64) bool {
	m := blockedMasks(h, f.k)
	line := (*[8]uint64)(f.words[off : off+8])
	for j := range line {
		if m[j] != 0 && m[j]&^atomic.LoadUint64(&line[j]) != 0 {
			return false
		}
	}
	return true
}

// Len returns the number of adds that reported their key as new. After a
// Union it is an estimate (see Union).
func (f *Blocked) Len() int { return int(atomic.LoadInt64(&f.count)) }

// Cap returns the design capacity.
func (f *Blocked) Cap() int { return f.capacity }

// SizeBytes returns the size of the bit array, 64 bytes per block.
func (f *Blocked) SizeBytes() int { return len(f.words) * 8 }

// Hasher returns the hasher keys are hashed with.
func (f *Blocked) Hasher() hashing.Hasher { return f.hasher }

// K returns the number of probes per key.
func (f *Blocked) K() int { return f.k }

// Bits returns m, the number of bits (512 per block).
func (f *Blocked) Bits() uint64 { return f.blocks * BlockBits }

// Blocks returns the number of 512-bit blocks.
func (f *Blocked) Blocks() uint64 { return f.blocks }

// setBits returns the number of set bits: O(1) normally, a scan of the
// array (O(m/64) atomic loads) in concurrent mode.
func (f *Blocked) setBits() uint64 {
	if !f.concurrent {
		return f.ones
	}
	var n uint64
	for i := range f.words {
		n += uint64(bits.OnesCount64(atomic.LoadUint64(&f.words[i])))
	}
	return n
}

// FillRatio returns the fraction of bits set.
func (f *Blocked) FillRatio() float64 { return float64(f.setBits()) / float64(f.Bits()) }

// DesignFPR returns fpmath.BlockedFPR at n = Cap().
func (f *Blocked) DesignFPR() float64 { return f.design }

// approxCount is the fill-based estimate of distinct keys
// (fpmath.BlockedCountFromFill), +Inf when every bit is set.
func (f *Blocked) approxCount(ones uint64) float64 {
	return fpmath.BlockedCountFromFill(float64(f.Bits()), float64(ones), f.k, BlockBits)
}

// EstimatedFPR estimates the number of keys from the fill
// (ApproxCount's estimator) and returns the Poisson blocked FPR
// (fpmath.BlockedFPR) at that count, so it accounts for overfill and for
// keys that arrived through Union. A few microseconds (plus a scan of the
// array in concurrent mode).
func (f *Blocked) EstimatedFPR() float64 {
	n := f.approxCount(f.setBits())
	if math.IsInf(n, 1) {
		return 1
	}
	return fpmath.BlockedFPR(float64(f.Bits()), n, f.k, BlockBits)
}

// ApproxCount estimates the number of distinct keys added from the fill
// with fpmath.BlockedCountFromFill (Swamidass and Baldi's estimator with
// the blocked layout's per-key bit probability). A full filter returns
// math.MaxInt.
func (f *Blocked) ApproxCount() int {
	n := f.approxCount(f.setBits())
	if math.IsInf(n, 1) || n >= math.MaxInt {
		return math.MaxInt
	}
	return int(math.Round(n))
}

// Overfilled reports whether EstimatedFPR exceeds bloomery.OverfillFactor
// (2) times DesignFPR.
func (f *Blocked) Overfilled() bool { return bloomery.IsOverfilled(f.EstimatedFPR(), f.design) }

// Stats returns a snapshot of the filter's figures.
func (f *Blocked) Stats() bloomery.Stats {
	ones := f.setBits()
	fill := float64(ones) / float64(f.Bits())
	n := f.approxCount(ones)
	est := 1.0
	approx := math.Inf(1)
	if !math.IsInf(n, 1) {
		est = fpmath.BlockedFPR(float64(f.Bits()), n, f.k, BlockBits)
		approx = math.Round(n)
	}
	return bloomery.Stats{
		Kind:         bloomery.KindBlocked,
		Len:          f.Len(),
		Cap:          f.capacity,
		SizeBytes:    f.SizeBytes(),
		BitsPerKey:   float64(f.Bits()) / float64(max(1, f.capacity)),
		HashFuncs:    f.k,
		FillRatio:    fill,
		DesignFPR:    f.design,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, f.design),
		Extra: []bloomery.Stat{
			{Name: "bits", Value: float64(f.Bits())},
			{Name: "blocks", Value: float64(f.blocks)},
			{Name: "approx_count", Value: approx},
		},
	}
}

func (f *Blocked) compatible(o *Blocked) error {
	switch {
	case o == nil:
		return fmt.Errorf("bloom: union with a nil filter: %w", bloomery.ErrIncompatible)
	case f.blocks != o.blocks:
		return fmt.Errorf("bloom: union of blocked filters of %d and %d blocks: %w", f.blocks, o.blocks, bloomery.ErrIncompatible)
	case f.k != o.k:
		return fmt.Errorf("bloom: union of blocked filters with k=%d and k=%d: %w", f.k, o.k, bloomery.ErrIncompatible)
	case !f.hasher.Equal(o.hasher):
		return fmt.Errorf("bloom: union of filters hashed with %v and %v: %w", f.hasher, o.hasher, bloomery.ErrIncompatible)
	}
	return nil
}

// Union sets f to the union of f and o. They must have the same number of
// blocks, k and hasher; otherwise the error wraps bloomery.ErrIncompatible
// and f is unchanged. f keeps its capacity and design FPR; Len becomes the
// fill-based estimate clamped to [max(f.Len, o.Len), f.Len+o.Len]. O(m/64).
func (f *Blocked) Union(o *Blocked) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	var ones uint64
	for i := range o.words {
		w := o.load(i)
		var v uint64
		if f.concurrent {
			v = atomic.OrUint64(&f.words[i], w) | w
		} else {
			v = f.words[i] | w
			f.words[i] = v
		}
		ones += uint64(bits.OnesCount64(v))
	}
	if !f.concurrent {
		f.ones = ones
	}
	est := math.MaxInt
	if n := f.approxCount(ones); n < math.MaxInt {
		est = int(math.Round(n))
	}
	atomic.StoreInt64(&f.count, int64(unionCount(f.Len(), o.Len(), est)))
	return nil
}

// load reads word i, atomically in concurrent mode.
func (f *Blocked) load(i int) uint64 {
	if f.concurrent {
		return atomic.LoadUint64(&f.words[i])
	}
	return f.words[i]
}

// Clone returns an independent copy of f, in the same mode.
func (f *Blocked) Clone() *Blocked {
	c := &Blocked{
		words:      alignedWords(f.blocks * 8),
		blocks:     f.blocks,
		k:          f.k,
		capacity:   f.capacity,
		design:     f.design,
		count:      atomic.LoadInt64(&f.count),
		ones:       f.ones,
		hasher:     f.hasher,
		concurrent: f.concurrent,
		inline:     f.inline,
	}
	if f.concurrent {
		for i := range c.words {
			c.words[i] = f.load(i)
		}
	} else {
		copy(c.words, f.words)
	}
	return c
}

// Reset clears every bit and the count, keeping the size, hasher and mode.
func (f *Blocked) Reset() {
	if f.concurrent {
		for i := range f.words {
			atomic.StoreUint64(&f.words[i], 0)
		}
	} else {
		clear(f.words)
	}
	f.ones = 0
	atomic.StoreInt64(&f.count, 0)
}
