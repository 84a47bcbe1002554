// Package scalable is a Bloom filter for sets of unknown size: a chain of
// Bloom filters ("links") that grows by appending a larger, tighter link
// whenever the newest one is full (Almeida, Baquero, Preguiça and Hutchison,
// "Scalable Bloom Filters", IPL 2007), with the arithmetic of RedisBloom's
// BF.* commands available exactly, so `bloomery serve` can mirror BF.INFO.
//
// # The arithmetic
//
// Link i (from 0) has capacity n0·s^i and design error P0·r^i, where s is
// the expansion (default 2) and r the tightening ratio (default 0.5). A key
// is a false positive of the chain when any link claims it, so the chain's
// FPR is at most Σ P0·r^i < P0/(1−r); the first link gets P0 = P·(1−r) and
// the whole chain stays below the target P however far it grows. With
// r = 0.5 that is RedisBloom's rule: link i gets P·0.5^(i+1) (0.005, 0.0025,
// 0.00125, ... for P = 1%). Each link needs log2(1/r)/ln 2 ≈ 1.44 more bits
// per key than the previous one (r = 0.5), so a chain that grew far costs
// more memory per key than a filter sized for the final count, and a query
// for an absent key probes every link: plan InitialCapacity near the
// expected size when it is known.
//
// A non-scaling filter (Params.NonScaling) has one link at the full P; once
// it holds its capacity, TryAdd of a new key fails with bloomery.ErrFull and
// changes nothing.
//
// # Sizing
//
// SizingOptimal (the default) sizes each link with bloom.Params.FPR: the
// smallest bit array whose probe count meets the link's error. SizingRedis
// reproduces RedisBloom: bits per key bpe = −ln(err)/(ln 2)², the bit array
// is ⌊capacity·bpe⌋ rounded up to a multiple of 64, and the probe count is
// ⌈ln 2·bpe⌉ (at most bloom.MaxHashFuncs = 32, which RedisBloom exceeds only
// past a link error of about 2·10⁻¹⁰). BF.RESERVE k 0.01 100 gives links of
// 144, 312, 696 and 1536 bytes with 8, 9, 10 and 11 probes (tested).
//
// # Adds
//
// Add hashes the key once and asks every link, newest first (it is the
// largest, so a present key is most likely found there); if any claims the
// key it reports false and changes nothing, so a false positive of an older
// link makes a new key count as present, as in RedisBloom. Otherwise the
// key goes into the newest link, after appending a new link if the newest
// already holds its capacity (growth is lazy: a chain of one full link and
// no new key has one link). Len counts the adds that reported true.
//
// # Costs and concurrency
//
// Contains and Add probe every link: L links cost L times a Bloom query
// (early exit per link), and L ≈ log_s(n/n0) + 1. Add and Contains do not
// allocate, except Add when it appends a link. Contains* may run
// concurrently with each other; Add*, TryAdd* and decoding need exclusive
// access.
//
// # Persistence
//
// Kind bloomery.KindScalable, layout 1, see docs/format/scalable.md: the
// chain parameters, then each link as a complete nested bloom container
// (kind bloom or blocked) recording the same hasher.
package scalable

import (
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// Sizing selects how each link's bit array and probe count are computed.
type Sizing uint8

const (
	// SizingOptimal sizes links with bloom.Params.FPR (the smallest m
	// meeting the link's error at its optimal k).
	SizingOptimal Sizing = 0
	// SizingRedis reproduces RedisBloom's link sizes exactly (standard
	// links only).
	SizingRedis Sizing = 1
)

func (s Sizing) String() string {
	switch s {
	case SizingOptimal:
		return "optimal"
	case SizingRedis:
		return "redis"
	}
	return fmt.Sprintf("sizing(%d)", uint8(s))
}

// Defaults.
const (
	DefaultExpansion       = 2
	DefaultTighteningRatio = 0.5
	// MaxExpansion is the largest expansion accepted (RedisBloom's limit).
	MaxExpansion = 32768
	// MaxLinks bounds the chain: beyond it TryAdd reports ErrFull.
	MaxLinks = 1024
)

// Params describes a scalable filter.
type Params struct {
	// InitialCapacity is the first link's capacity (required, > 0).
	InitialCapacity int
	// FPR is the target false-positive rate of the whole chain, in (0, 1).
	FPR float64
	// Expansion multiplies each new link's capacity; 0 means 2. It must
	// lie in [1, MaxExpansion]. Ignored when NonScaling.
	Expansion int
	// TighteningRatio multiplies each new link's error; 0 means 0.5. It
	// must lie in (0, 1). Ignored when NonScaling.
	TighteningRatio float64
	// NonScaling makes a one-link filter at the full FPR whose TryAdd
	// fails with bloomery.ErrFull once it holds InitialCapacity keys.
	NonScaling bool
	// Sizing selects the link sizing (SizingRedis needs standard links).
	Sizing Sizing
	// Blocked makes each link a cache-line blocked Bloom filter
	// (bloom.Blocked): one cache line per link per query, at about 1.2x
	// the FPR of a standard link of the same size, which the sizing
	// compensates for.
	Blocked bool
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
}

func (p Params) withDefaults() Params {
	if p.Expansion == 0 {
		p.Expansion = DefaultExpansion
	}
	if p.TighteningRatio == 0 {
		p.TighteningRatio = DefaultTighteningRatio
	}
	return p
}

func (p Params) validate() error {
	const ctx = "scalable: params"
	switch {
	case p.InitialCapacity <= 0:
		return fmt.Errorf("%s: initial capacity %d must be positive: %w", ctx, p.InitialCapacity, bloomery.ErrInvalidParams)
	case !(p.FPR > 0 && p.FPR < 1):
		return fmt.Errorf("%s: FPR %v outside (0, 1): %w", ctx, p.FPR, bloomery.ErrInvalidParams)
	case p.Expansion < 1 || p.Expansion > MaxExpansion:
		return fmt.Errorf("%s: expansion %d outside [1, %d]: %w", ctx, p.Expansion, MaxExpansion, bloomery.ErrInvalidParams)
	case !(p.TighteningRatio > 0 && p.TighteningRatio < 1):
		return fmt.Errorf("%s: tightening ratio %v outside (0, 1): %w", ctx, p.TighteningRatio, bloomery.ErrInvalidParams)
	case p.Sizing != SizingOptimal && p.Sizing != SizingRedis:
		return fmt.Errorf("%s: unknown sizing %d: %w", ctx, p.Sizing, bloomery.ErrInvalidParams)
	case p.Sizing == SizingRedis && p.Blocked:
		return fmt.Errorf("%s: RedisBloom sizing needs standard links, not blocked: %w", ctx, bloomery.ErrInvalidParams)
	case p.Hasher.Keyed() && !p.Hasher.HasKey():
		return fmt.Errorf("%s: keyed hasher without its key: %w", ctx, bloomery.ErrKeyRequired)
	}
	return nil
}

// LinkFPR returns the design error of link i: P for a non-scaling filter,
// else P·(1−r)·r^i.
func (p Params) LinkFPR(i int) float64 {
	p = p.withDefaults()
	if p.NonScaling {
		return p.FPR
	}
	return p.FPR * (1 - p.TighteningRatio) * math.Pow(p.TighteningRatio, float64(i))
}

// LinkCapacity returns the capacity of link i, InitialCapacity·Expansion^i,
// or false when it does not fit in an int.
func (p Params) LinkCapacity(i int) (int, bool) {
	p = p.withDefaults()
	c := p.InitialCapacity
	for range i {
		if c > math.MaxInt/p.Expansion {
			return 0, false
		}
		c *= p.Expansion
	}
	return c, true
}

// RedisSize returns RedisBloom's link size for capacity keys at error err:
// the number of bits (⌊capacity·bpe⌋ rounded up to a multiple of 64) and
// probes (⌈ln 2·bpe⌉), with bpe = −ln(err)/(ln 2)². The probe count is not
// capped here.
func RedisSize(capacity int, err float64) (bits uint64, hashes int) {
	bpe := -math.Log(err) / fpmath.Ln2Sq
	raw := uint64(math.Floor(float64(capacity) * bpe))
	bits = (raw + 63) / 64 * 64
	hashes = int(math.Ceil(fpmath.Ln2 * bpe))
	return bits, hashes
}

// link is what the chain needs of a bloom.Filter or bloom.Blocked.
type link interface {
	bloomery.Adder
	K() int
	Bits() uint64
	FillRatio() float64
	DesignFPR() float64
	Hasher() hashing.Hasher
}

var (
	_ link = (*bloom.Filter)(nil)
	_ link = (*bloom.Blocked)(nil)
)

// Filter is a scalable Bloom filter. See the package documentation.
type Filter struct {
	p     Params // with defaults applied
	links []link // oldest first
	count int
}

var _ bloomery.Adder = (*Filter)(nil)

// New returns an empty scalable filter with its first link allocated.
func New(p Params) (*Filter, error) {
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	f := &Filter{p: p}
	l, err := f.newLink(0)
	if err != nil {
		return nil, err
	}
	f.links = append(f.links, l)
	return f, nil
}

// NewForCapacity returns a scaling filter that starts at n keys and keeps
// the whole chain below fpr.
func NewForCapacity(n int, fpr float64) (*Filter, error) {
	return New(Params{InitialCapacity: n, FPR: fpr})
}

// newLink allocates link i.
func (f *Filter) newLink(i int) (link, error) {
	bp, err := f.linkParams(i)
	if err != nil {
		return nil, err
	}
	var l link
	var e error
	if f.p.Blocked {
		l, e = bloom.NewBlocked(bp)
	} else {
		l, e = bloom.New(bp)
	}
	if e != nil {
		return nil, fmt.Errorf("scalable: link %d (capacity %d, error %.3g): %w", i, bp.Capacity, f.p.LinkFPR(i), e)
	}
	return l, nil
}

// linkParams returns the bloom parameters of link i.
func (f *Filter) linkParams(i int) (bloom.Params, error) {
	capacity, ok := f.p.LinkCapacity(i)
	if !ok {
		return bloom.Params{}, fmt.Errorf("scalable: link %d capacity overflows: %w", i, bloomery.ErrFull)
	}
	err := f.p.LinkFPR(i)
	if !(err > 0) {
		return bloom.Params{}, fmt.Errorf("scalable: link %d error underflows: %w", i, bloomery.ErrFull)
	}
	bp := bloom.Params{Capacity: capacity, FPR: err, Hasher: f.p.Hasher}
	if f.p.Sizing == SizingRedis {
		bits, k := RedisSize(capacity, err)
		// bloom rounds capacity*BitsPerKey up to whole words; half a bit
		// below the target lands exactly on it whatever the rounding of
		// the division.
		bp.FPR = 0
		bp.BitsPerKey = (float64(bits) - 0.5) / float64(capacity)
		bp.HashFuncs = min(k, bloom.MaxHashFuncs)
		if bp.BitsPerKey < bloom.MinBitsPerKey {
			bp.BitsPerKey = bloom.MinBitsPerKey
		}
	}
	return bp, nil
}

// Kind returns bloomery.KindScalable.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindScalable }

// Hasher returns the hasher keys are hashed with.
func (f *Filter) Hasher() hashing.Hasher { return f.p.Hasher }

// Params returns the parameters with defaults applied.
func (f *Filter) Params() Params { return f.p }

// Contains reports whether key may have been added.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.p.Hasher.Sum64(key)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.p.Hasher.Sum64String(key))
}

// ContainsHash reports whether a key with hash h may have been added,
// asking every link, newest first.
func (f *Filter) ContainsHash(h uint64) bool {
	for i := len(f.links) - 1; i >= 0; i-- {
		if f.links[i].ContainsHash(h) {
			return true
		}
	}
	return false
}

// Add inserts key and reports whether it was new (no link claimed it). A
// scaling filter always accepts the key. A full non-scaling filter cannot
// refuse through this interface without losing the key, so Add inserts it
// anyway, overfilling the link (Stats reports it); use TryAdd to be
// refused instead.
func (f *Filter) Add(key []byte) bool { return f.AddHash(f.p.Hasher.Sum64(key)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) bool { return f.AddHash(f.p.Hasher.Sum64String(key)) }

// AddHash is Add for a hash computed with Hasher().
func (f *Filter) AddHash(h uint64) bool {
	added, err := f.TryAddHash(h)
	if err != nil {
		// Full: overfill the newest link rather than lose the key.
		if f.links[len(f.links)-1].AddHash(h) {
			f.count++
			return true
		}
		return false
	}
	return added
}

// TryAdd inserts key and reports whether it was new. When the key is new
// and the chain cannot take it (a full non-scaling filter, or a link that
// could not be allocated) it returns an error wrapping bloomery.ErrFull and
// the filter is unchanged. A key that some link already claims returns
// (false, nil) even on a full filter.
func (f *Filter) TryAdd(key []byte) (bool, error) { return f.TryAddHash(f.p.Hasher.Sum64(key)) }

// TryAddString is TryAdd for a string key.
func (f *Filter) TryAddString(key string) (bool, error) {
	return f.TryAddHash(f.p.Hasher.Sum64String(key))
}

// TryAddHash is TryAdd for a hash computed with Hasher().
//
// While the last link has room, it takes one pass over that link: the
// older links are tested, and then the last link's AddHash reports false,
// changing nothing, exactly when all of h's bits are already set there,
// which is when its ContainsHash would have claimed h. So the answer and
// the bits are those of testing every link and then adding, without
// reading the last link's k lines twice. (The older links are tested
// first because adding to the last link must not happen when one of them
// claims h.)
func (f *Filter) TryAddHash(h uint64) (bool, error) {
	n := len(f.links)
	last := f.links[n-1]
	if last.Len() < last.Cap() {
		for _, l := range f.links[:n-1] {
			if l.ContainsHash(h) {
				return false, nil
			}
		}
		if !last.AddHash(h) {
			return false, nil
		}
		f.count++
		return true, nil
	}
	// The last link is full: h goes to a new link if no link claims it.
	if f.ContainsHash(h) {
		return false, nil
	}
	if f.p.NonScaling {
		return false, fmt.Errorf("scalable: non-scaling filter holds its capacity %d: %w", last.Cap(), bloomery.ErrFull)
	}
	if n >= MaxLinks {
		return false, fmt.Errorf("scalable: chain has %d links: %w", n, bloomery.ErrFull)
	}
	l, err := f.newLink(n)
	if err != nil {
		return false, err
	}
	f.links = append(f.links, l)
	l.AddHash(h)
	f.count++
	return true, nil
}

// Len returns the number of adds that reported their key as new.
func (f *Filter) Len() int { return f.count }

// Cap returns the sum of the links' capacities (BF.INFO Capacity).
func (f *Filter) Cap() int {
	c := 0
	for _, l := range f.links {
		c += l.Cap()
	}
	return c
}

// NumLinks returns the number of links (BF.INFO Number of filters).
func (f *Filter) NumLinks() int { return len(f.links) }

// SizeBytes returns the sum of the links' bit arrays.
func (f *Filter) SizeBytes() int {
	s := 0
	for _, l := range f.links {
		s += l.SizeBytes()
	}
	return s
}

// Full reports whether the next new key would be refused by TryAdd: a
// non-scaling filter holding its capacity.
func (f *Filter) Full() bool {
	last := f.links[len(f.links)-1]
	return f.p.NonScaling && last.Len() >= last.Cap()
}

// LinkInfo describes one link.
type LinkInfo struct {
	// Capacity and Len are the link's design and actual key counts.
	Capacity, Len int
	// Bits and SizeBytes are the bit array's size; HashFuncs its probes.
	Bits      uint64
	SizeBytes int
	HashFuncs int
	// Error is the link's target error (P·(1−r)·r^i); DesignFPR the
	// FPR the link's actual size gives at Capacity keys.
	Error, DesignFPR float64
	// FillRatio and EstimatedFPR describe the current contents.
	FillRatio, EstimatedFPR float64
}

// Links describes the links, oldest first. It scans nothing but the
// links' counters, except EstimatedFPR of blocked links (a few µs each).
func (f *Filter) Links() []LinkInfo {
	out := make([]LinkInfo, len(f.links))
	for i, l := range f.links {
		out[i] = LinkInfo{
			Capacity:     l.Cap(),
			Len:          l.Len(),
			Bits:         l.Bits(),
			SizeBytes:    l.SizeBytes(),
			HashFuncs:    l.K(),
			Error:        f.p.LinkFPR(i),
			DesignFPR:    l.DesignFPR(),
			FillRatio:    l.FillRatio(),
			EstimatedFPR: l.EstimatedFPR(),
		}
	}
	return out
}

// EstimatedFPR is the chain's FPR at the current contents: a key is a
// false positive if any link claims it, 1 − Π(1 − est_i).
func (f *Filter) EstimatedFPR() float64 {
	miss := 1.0
	for _, l := range f.links {
		miss *= 1 - l.EstimatedFPR()
	}
	return 1 - miss
}

// DesignFPR returns the target FPR of the chain (Params.FPR).
func (f *Filter) DesignFPR() float64 { return f.p.FPR }

// Stats returns a snapshot: Cap, SizeBytes, FillRatio (set bits over all
// bits), HashFuncs of the newest link, the compounded EstimatedFPR, and in
// Extra "links", "expansion", "tightening_ratio", "non_scaling" (0/1),
// "newest_fill" and "design_fpr_links" (1 − Π(1 − link design FPR), what the
// chain's links promise at their capacities).
func (f *Filter) Stats() bloomery.Stats {
	var bits, ones float64
	miss, designMiss := 1.0, 1.0
	for _, l := range f.links {
		b := float64(l.Bits())
		bits += b
		ones += b * l.FillRatio()
		miss *= 1 - l.EstimatedFPR()
		designMiss *= 1 - l.DesignFPR()
	}
	last := f.links[len(f.links)-1]
	est := 1 - miss
	c := f.Cap()
	ns := 0.0
	if f.p.NonScaling {
		ns = 1
	}
	return bloomery.Stats{
		Kind:         bloomery.KindScalable,
		Len:          f.count,
		Cap:          c,
		SizeBytes:    f.SizeBytes(),
		BitsPerKey:   bits / float64(c),
		HashFuncs:    last.K(),
		FillRatio:    ones / bits,
		DesignFPR:    f.p.FPR,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, f.p.FPR),
		Extra: []bloomery.Stat{
			{Name: "links", Value: float64(len(f.links))},
			{Name: "expansion", Value: float64(f.p.Expansion)},
			{Name: "tightening_ratio", Value: f.p.TighteningRatio},
			{Name: "non_scaling", Value: ns},
			{Name: "newest_fill", Value: last.FillRatio()},
			{Name: "design_fpr_links", Value: 1 - designMiss},
		},
	}
}
