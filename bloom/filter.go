package bloom

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

var _ bloomery.Adder = (*Filter)(nil)

// Filter is a standard Bloom filter: m bits, k probes per key spread over
// the whole array.
//
// # Probes
//
// Each key is hashed once to a 64-bit h. The probes are Kirsch-Mitzenmacher
// double hashing carried out in the 64-bit space and mapped onto the
// array separately for each probe. With w = m/64 words, in layout 2 (what
// New builds):
//
//	g_0 = h, d = rotl(h, 32) | 1, g_{i+1} = g_i + d (mod 2^64)
//	word_i = Reduce(g_i, w) = floor(g_i * w / 2^64), bit_i = g_i mod 64
//
// and in layout 1 (filters decoded from files written before layout 2):
//
//	g_0 = h, d = Mix64(h) | 1, g_{i+1} = g_i + d (mod 2^64)
//	probe_i = Reduce(g_i, m) = floor(g_i * m / 2^64)
//
// Why this form: the step d is odd, so the g_i are distinct for every
// key: there is no d = 0 case that collapses all k probes onto one bit,
// the failure of the classic g_i = h1 + i*h2 mod m when h2 = 0 (mod m).
// Because the sum runs modulo 2^64 and only the multiply-shift maps it
// onto the array, m need not be a power of two or prime, and there is no
// modulo on the path. The word comes from the top bits of g_i, the bit
// from its bottom six; the step's top bits, which move the word, are the
// bottom half of h, independent of the top bits that place the first
// word. Layout 1 took d from a full-avalanche remix of h (Mix64): twelve
// instructions and two dependent multiplies more per key. With 16-32 byte
// keys, layout 2's queries ran 1.12-1.19x faster on present keys and
// 1.08-1.14x on absent ones at 10^7 and 10^8 keys, in alternated
// same-process runs against bits-and-blooms (docs/benchmarks.md).
//
// In layout 2 a key's k bits are always k distinct bits (k <= 64): two
// of its probes in one word differ by (i-j)*d mod 64, nonzero since d is
// odd. The residual weakness of any double hashing, keys whose step
// d/2^64 lies within about 1/m of a fraction a/q with small q, there
// makes probes share words, not bits; in layout 1 such keys' probes
// revisit fewer than k bits, with probability O(k/m) per key
// (TestStandardProbesDistinct: on a 2^20-bit filter, 1 key in 10^6 has a
// repeated probe in layout 1, where k independent probes would give 20;
// none in layout 2). The FPR tests measure (1 - e^(-kn/m))^k within a few
// percent at m from 2*10^4 to 1.6*10^7 bits.
//
// # Word and bit
//
// With w = len(words) = m/64 and g*w = hi*2^64 + lo, the probe's word is
// hi, from one 64x64->128 multiply by w. In layout 2 its bit is g mod 64,
// which the amd64 bit-test instructions take from g's register as it is,
// with no shift or mask. In layout 1 it is the top 6 bits of lo, since
//
//	Reduce(g, m) = floor(g*64w / 2^64) = 64*hi + floor(lo / 2^58)
//
// Since g < 2^64, hi = floor(g*w/2^64) < w: the word is always
// inside the array, which is why the probe loops address it without a
// bounds check (the check would add a compare and a branch to every
// probe). A zero Filter has no words but k = 0, so it probes nothing.
//
// # Costs
//
// Add touches k cache lines (k dependent-free loads and stores).
// Contains stops at the first clear bit: a negative query touches about
// 1/(1-fill) lines, 2 at the design fill of one half. Add, Contains and
// their variants do not allocate.
//
// # Concurrency
//
// Contains* may run concurrently with each other. Add*, Union, Reset and
// UnmarshalBinary need exclusive access. For a lock-free concurrent
// filter use Blocked with Params.Concurrent.
type Filter struct {
	words    []uint64
	m        uint64 // bits, a multiple of 64, len(words)*64
	k        int
	capacity int
	design   float64 // design FPR at capacity keys
	count    int     // adds that reported the key as new
	ones     uint64  // bits set
	hasher   hashing.Hasher
	inline   inlineHash // hasher as the assembly key paths need it
	probes   uint8      // containsKey's probe routine (setProbes), probesGo for the Go path
	hprobes  uint8      // containsHash's probe routine (setProbes)
	layout   uint8      // Layout2, or Layout1 when decoded from it (see "Probes")
}

// step returns the probe step d of hash h in layout l (see Filter,
// "Probes").
func step(h uint64, l uint8) uint64 {
	if l == Layout1 {
		return hashing.Mix64(h) | 1
	}
	return bits.RotateLeft64(h, 32) | 1
}

// probeAt returns the word and bit of the probe sum g on an array of w
// words in layout l (see Filter, "Word and bit").
func probeAt(g, w uint64, l uint8) (word, bit uint64) {
	hi, lo := bits.Mul64(g, w)
	if l == Layout1 {
		return hi, lo >> 58
	}
	return hi, g & 63
}

// New returns an empty standard Bloom filter for p.
func New(p Params) (*Filter, error) {
	m, k, err := standardSize(p)
	if err != nil {
		return nil, err
	}
	return newFilter(m, k, p.Capacity, p.Hasher, Layout2), nil
}

// NewForCapacity returns an empty standard Bloom filter sized for n keys at
// false-positive rate fpr, hashing with XXH3 seed 0.
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{Capacity: n, FPR: fpr})
}

func newFilter(m uint64, k, capacity int, h hashing.Hasher, layout uint8) *Filter {
	f := &Filter{
		words:    newWords(m / 64),
		m:        m,
		k:        k,
		capacity: capacity,
		design:   fpmath.StandardFPR(float64(m), float64(capacity), k),
		hasher:   h,
		inline:   inlineHashOf(h),
		layout:   layout,
	}
	f.setProbes()
	return f
}

// Kind returns bloomery.KindBloom.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindBloom }

// Add inserts key and reports whether it was new (at least one of its bits
// was clear). A false answer may be a false positive of an absent key.
//
// It is AddHash(f.Hasher().Sum64(key)). On amd64, with the default XXH3
// hasher and keys of 4 to 128 bytes, one assembly leaf function (addKey)
// hashes the key and sets its bits, without the calls through
// Hasher.Sum64 (see Contains for why that matters).
func (f *Filter) Add(key []byte) bool { return addKey(f, unsafe.SliceData(key), len(key)) }

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool {
	return addKey(f, unsafe.StringData(key), len(key))
}

// addKeyGo is Add of the n bytes at p through Hasher.Sum64: the portable
// path, and the assembly's for other hashers and key lengths.
//
//lint:ignore U1000 called from assembly (the JMP at the end of the amd64 leaf)
func addKeyGo(f *Filter, p *byte, n int) bool {
	return f.AddHash(f.hasher.Sum64(unsafe.Slice(p, n)))
}

// AddHash inserts a key by its hash (computed with f.Hasher()).
//
// It has no branch on loaded data: each probe reads its word, ORs the bit
// in and counts whether the bit was already set, and the "was new" answer
// comes from the count, not from a test. With no mispredicted branch and
// few instructions per probe, the core runs ahead into the next keys'
// probes while this key's cache misses are outstanding, which is what
// bounds a bulk insert into a filter larger than the cache. On amd64 the
// loop is in assembly (filter_add_amd64.s), at ten instructions a probe;
// in same-process runs at 10^7 keys it inserts about 1.2x faster than the
// same loop in Go (whose register moves around the 128-bit multiply
// double the instruction count) and about 1.4x faster than the earlier
// bounds-checked loop with a branch on the result.
func (f *Filter) AddHash(h uint64) bool { return addHash(f, h) }

// addHashGo is the portable AddHash: see there.
func addHashGo(f *Filter, h uint64) bool {
	words, l := f.words, f.layout
	d, w := step(h, l), uint64(len(words))
	base := unsafe.Pointer(unsafe.SliceData(words))
	var seen uint64 // probes whose bit was already set
	for i := f.k; i > 0; i-- {
		hi, s := probeAt(h, w, l) // see Filter, "Word and bit"
		p := (*uint64)(unsafe.Add(base, hi*8))
		old := *p
		seen += old >> s & 1
		*p = old | 1<<s
		h += d
	}
	added := uint64(f.k) - seen
	f.ones += added
	isNew := (added | -added) >> 63 // 1 if any bit was clear, else 0
	f.count += int(isNew)
	return isNew != 0
}

// Contains reports whether key may have been added (false: certainly not).
//
// It is ContainsHash(f.Hasher().Sum64(key)). On amd64 with BMI2, with the
// default XXH3 hasher and keys of 4 to 128 bytes, it is one call to an assembly
// leaf function (containsKey) that hashes the key and runs the probe loop
// itself: Contains is small enough to inline into its callers (and into
// the wrapper of the method value f.Contains), so a query costs one call,
// against three nested ones through Hasher.Sum64 (Contains, Sum64, the
// XXH3 package's hash function). Counting the caller's
// loop and the method-value wrapper, a query for a present 16-32 byte
// key executed 130 instructions instead of 242, an absent one 99
// instead of 180 (callgrind, 4*10^6 keys at 1% FPR, layout 1). Called
// directly from a loop, layout 2's queries execute 97 and 71
// instructions, layout 1's 115 and 83 (same filter and keys). On a filter far
// larger than the cache that count is what bounds the query rate: the
// core overlaps the cache misses of as many consecutive queries as fit
// in its reorder window, so fewer instructions per query mean more
// misses in flight. (Measured: computing the hash off the probes'
// dependency chain, same instruction count, changed nothing at 10^7
// keys; dropping the hash's ~40 instructions made queries 1.1-1.2x
// faster; the probes' MULX, one instruction fewer a probe, another
// 1.04-1.11x; one jump to the filter's probe routine instead of tests of
// its hasher, size and k, six instructions fewer a query, 1.04-1.07x.)
// Other hashers, shorter and longer keys, and CPUs without
// BMI2 take the Go path (containsKeyGo), with the same answers.
func (f *Filter) Contains(key []byte) bool {
	return containsKey(f, unsafe.SliceData(key), len(key))
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return containsKey(f, unsafe.StringData(key), len(key))
}

// containsKeyGo is Contains of the n bytes at p through Hasher.Sum64.
//
//lint:ignore U1000 called from assembly (the JMP at the end of the amd64 leaf)
func containsKeyGo(f *Filter, p *byte, n int) bool {
	return f.ContainsHash(f.hasher.Sum64(unsafe.Slice(p, n)))
}

// ContainsHash reports whether a key with hash h may have been added.
//
// It tests each probe as it reads it and stops at the first clear bit.
// In same-process measurements on the development machine (filters of
// 10^7 and 10^8 keys, random order, every probe a cache or TLB miss) this
// was 1.1-1.2x faster on absent keys and no slower on present ones than
// reading the first three probes branch-free before one test, and about
// 1.6x faster on absent keys than reading all k branch-free: an absent key
// stops after 2 probes on average at the design fill, so it requests
// fewer lines, and a mispredicted early exit still leaves the lines it
// started loading for the following keys in the cache. Present keys read
// all k probes behind branches that predict well. On a filter that fits
// in the cache, an absent key's early exits are coin flips the predictor
// misses about once a query, and there (up to pairMaxBytes) the amd64
// path tests the first two probes together, with one branch, as Contains
// does.
//
// On amd64 with BMI2 the probes are containsKey's assembly routines
// (containsHash in filter_add_amd64.s), five instructions a probe (six
// in layout 1, which the Go loop now serves) where the Go loop,
// containsHashGo, compiles to thirteen (the register moves around MULQ's
// fixed operands, the loop counter), at the price of a call the compiler
// cannot inline (about 20 instructions of frame and stack arguments). In
// layout 1, through a method value, a present key's query executed 97
// instructions instead of 126, an absent key's, which stops
// after two probes on average, 66 instead of 64 (callgrind, 4*10^6 keys
// at 1% FPR). A filter far larger than the cache answers as many queries
// at once as fit in the core's reorder window, so the count is what
// bounds the query rate there (see Contains). In same-process runs
// against bits-and-blooms at 10^7 uint64 keys, present-key queries went
// from 2.78-3.11x to 3.20-3.28x, absent ones from 3.41-3.61x to
// 3.30-3.55x; at 10^6 keys (the paired start) absent-key queries from
// 3.39-3.48x to 3.93-4.20x. On a filter the cache holds (10^6 keys,
// 1.2 MB; loops of 100 queries, the assembly and the Go loop alternated
// in one process, medians of 9 passes, three runs) absent keys took
// 15.7-18.8 ns against the Go loop's 22.3-26.1, present keys 13.2-20.2
// against 14.7-20.9. ContainsHash itself is one call, small enough for
// the compiler to inline into its callers and into the wrapper of the
// method value f.ContainsHash. Elsewhere the Go loop answers, the same
// way.
func (f *Filter) ContainsHash(h uint64) bool { return containsHash(f, h, 0) }

// containsHashGo is the portable ContainsHash; its signature is
// containsHash's, to which the assembly tail-jumps without MULX.
func containsHashGo(f *Filter, h uint64, _ uintptr) bool {
	l, w := f.layout, f.words
	d := step(h, l)
	for range f.k {
		hi, b := probeAt(h, uint64(len(w)), l) // see Filter, "Word and bit"
		if *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), hi*8))&(1<<b) == 0 {
			return false
		}
		h += d
	}
	return true
}

// Len returns the number of adds that reported their key as new. After a
// Union it is an estimate (see Union).
func (f *Filter) Len() int { return f.count }

// Cap returns the design capacity.
func (f *Filter) Cap() int { return f.capacity }

// SizeBytes returns the size of the bit array, m/8.
func (f *Filter) SizeBytes() int { return len(f.words) * 8 }

// Hasher returns the hasher keys are hashed with.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// K returns the number of probes per key.
func (f *Filter) K() int { return f.k }

// Layout returns the container layout byte of f's probe derivation:
// Layout2, or Layout1 for a filter decoded from that layout.
func (f *Filter) Layout() uint8 { return f.layout }

// Bits returns m, the number of bits.
func (f *Filter) Bits() uint64 { return f.m }

// FillRatio returns the fraction of bits set. O(1): the count of set bits
// is maintained by Add.
func (f *Filter) FillRatio() float64 { return float64(f.ones) / float64(f.m) }

// DesignFPR returns (1 - e^(-k*n/m))^k at n = Cap().
func (f *Filter) DesignFPR() float64 { return f.design }

// EstimatedFPR returns fill^k, the probability that k probes at uniform
// positions all find a set bit: the FPR of this filter's actual contents,
// whatever was added, including after overfill or union.
func (f *Filter) EstimatedFPR() float64 { return fpmath.FillFPR(f.FillRatio(), f.k) }

// ApproxCount estimates the number of distinct keys added from the fill
// (Swamidass and Baldi: n = -(m/k) ln(1 - fill)). Its relative standard
// error is well under 1% for filters of 10^5 bits and more below 90% fill;
// a completely full filter returns math.MaxInt.
func (f *Filter) ApproxCount() int {
	n := fpmath.CountFromFill(float64(f.m), float64(f.ones), f.k)
	if math.IsInf(n, 1) || n >= math.MaxInt {
		return math.MaxInt
	}
	return int(math.Round(n))
}

// Overfilled reports whether EstimatedFPR exceeds bloomery.OverfillFactor
// (2) times DesignFPR. For a filter at its optimal k this happens at about
// 1.16 times the design capacity.
func (f *Filter) Overfilled() bool { return bloomery.IsOverfilled(f.EstimatedFPR(), f.design) }

// Stats returns a snapshot of the filter's figures.
func (f *Filter) Stats() bloomery.Stats {
	est := f.EstimatedFPR()
	return bloomery.Stats{
		Kind:         bloomery.KindBloom,
		Len:          f.count,
		Cap:          f.capacity,
		SizeBytes:    f.SizeBytes(),
		BitsPerKey:   float64(f.m) / float64(max(1, f.capacity)),
		HashFuncs:    f.k,
		FillRatio:    f.FillRatio(),
		DesignFPR:    f.design,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, f.design),
		Extra: []bloomery.Stat{
			{Name: "bits", Value: float64(f.m)},
			{Name: "approx_count", Value: float64(f.ApproxCount())},
		},
	}
}

// compatible reports why o cannot be merged into f, or nil.
func (f *Filter) compatible(o *Filter) error {
	switch {
	case o == nil:
		return fmt.Errorf("bloom: union with a nil filter: %w", bloomery.ErrIncompatible)
	case f.m != o.m:
		return fmt.Errorf("bloom: union of %d-bit and %d-bit filters: %w", f.m, o.m, bloomery.ErrIncompatible)
	case f.k != o.k:
		return fmt.Errorf("bloom: union of filters with k=%d and k=%d: %w", f.k, o.k, bloomery.ErrIncompatible)
	case f.layout != o.layout:
		return fmt.Errorf("bloom: union of a layout %d and a layout %d filter (their probes differ): %w", f.layout, o.layout, bloomery.ErrIncompatible)
	case !f.hasher.Equal(o.hasher):
		return fmt.Errorf("bloom: union of filters hashed with %v and %v: %w", f.hasher, o.hasher, bloomery.ErrIncompatible)
	}
	return nil
}

// Union sets f to the union of f and o: afterwards f answers true for
// every key either held. The filters must have the same m, k, hasher and
// layout;
// otherwise the error wraps bloomery.ErrIncompatible and f is unchanged.
// f keeps its capacity and design FPR. Len becomes an estimate: the
// fill-based count, clamped to [max(f.Len, o.Len), f.Len+o.Len], since
// the overlap of the two key sets is unknown. O(m/64).
func (f *Filter) Union(o *Filter) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	var ones uint64
	for i, w := range o.words {
		v := f.words[i] | w
		f.words[i] = v
		ones += uint64(bits.OnesCount64(v))
	}
	f.ones = ones
	f.count = unionCount(f.count, o.count, f.ApproxCount())
	return nil
}

func unionCount(a, b, est int) int {
	lo, hi := max(a, b), a+b
	if hi < 0 { // overflow
		hi = math.MaxInt
	}
	return min(max(est, lo), hi)
}

// Clone returns an independent copy of f.
func (f *Filter) Clone() *Filter {
	c := *f
	c.words = newWords(uint64(len(f.words)))
	copy(c.words, f.words)
	return &c
}

// Reset clears every bit and the count, keeping the size and hasher.
func (f *Filter) Reset() {
	clear(f.words)
	f.ones, f.count = 0, 0
}

// newWords returns n zeroed words, advised onto huge pages when large.
func newWords(n uint64) []uint64 {
	w := make([]uint64, n)
	adviseHugePages(w)
	return w
}

func popcount(words []uint64) uint64 {
	var n uint64
	for _, w := range words {
		n += uint64(bits.OnesCount64(w))
	}
	return n
}
