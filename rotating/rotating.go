// Package rotating answers "have I seen this key in the last W?" with a
// ring of N Bloom filters ("generations"), each covering W/N of time:
// inserts go to the newest generation, queries ask every live one, and
// every W/N the oldest is dropped whole (cleared and reused as the newest).
//
// # Window and slack
//
// A generation that started at time s is live while now − s < W. A key
// added at time t lands in the generation open at t (started in
// (t − W/N, t]), so it is remembered for at least W·(N−1)/N and at most W:
// the window has a slack of one generation. More generations mean less
// slack and more probes per query (one Bloom query per generation).
//
// # Sizing and overfill
//
// Each generation is sized for the keys expected in W/N of time
// (Params.Rate · W/N, or Params.Capacity) at FPR P/N, so that a query,
// which is a false positive if any of the N generations claims the key,
// stays below 1 − (1 − P/N)^N ≤ P. When more keys arrive than planned, the
// newest generation overfills and its FPR climbs; that is never silent:
// [Filter.Generations] reports each generation's load and estimated FPR,
// Stats sets Overfilled and counts "overfilled_generations", the
// cumulative [Filter.OverfillEvents] counts generations that passed their
// capacity, and Params.OnOverfill is called once per generation when it
// does.
//
// # Dedup
//
// [Filter.AddIfAbsent] is test-and-insert: a false positive makes a new
// event look like a duplicate, so a dedup built on it drops about P of new
// events. [Filter.Add] always inserts (refreshing the key's expiry) and
// reports whether the key was new to the window.
//
// # Time
//
// The clock is injected (Params.Clock, time.Now by default) and read on
// every call. Add* rotates; Contains* only skips generations that have
// expired, without modifying anything, so Contains may run concurrently with
// other Contains while Add*, Rotate and decoding need exclusive access. A
// clock that steps backwards does not rotate. Rotation clears one
// generation per elapsed W/N (O(m/N) each, amortised over the adds of a
// generation); call Rotate from a timer to keep that off the add path.
//
// # Persistence
//
// Kind bloomery.KindRotating, layout 1 (docs/format/rotating.md): the ring's
// parameters and each generation's start time and nested bloom container.
package rotating

import (
	"fmt"
	"math"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
)

// MaxGenerations bounds N.
const MaxGenerations = 1024

// Params describes a rotating filter.
type Params struct {
	// Window is W, the time a key is remembered at most (> 0).
	Window time.Duration
	// Generations is N, in [2, MaxGenerations]; 0 means 6.
	Generations int
	// Rate is the expected number of distinct keys per second; each
	// generation is sized for ceil(Rate · W/N) keys. Set Rate or
	// Capacity.
	Rate float64
	// Capacity is the number of keys per generation, instead of Rate.
	Capacity int
	// FPR is the target FPR of a query over the whole window, in (0, 1);
	// each generation gets FPR/N.
	FPR float64
	// Blocked makes the generations blocked Bloom filters (one cache
	// line per generation per query).
	Blocked bool
	// Hasher hashes keys; the zero value is XXH3 with seed 0.
	Hasher hashing.Hasher
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// OnOverfill, if set, is called (from the Add that caused it) once
	// per generation when it first holds more keys than its capacity.
	OnOverfill func(GenerationInfo)
}

// generation is a bloom.Filter or bloom.Blocked.
type generation interface {
	bloomery.Adder
	K() int
	Bits() uint64
	FillRatio() float64
	DesignFPR() float64
	Reset()
}

var (
	_ generation = (*bloom.Filter)(nil)
	_ generation = (*bloom.Blocked)(nil)
)

// Filter is a time-rotating filter. See the package documentation.
type Filter struct {
	p        Params
	genLen   time.Duration
	capacity int // per generation
	gens     []generation
	starts   []int64 // unix nanoseconds at which gens[i] opened
	flagged  []bool  // OnOverfill already reported for gens[i]
	head     int     // index of the newest generation
	overfill uint64  // generations that passed their capacity, ever
	clock    func() time.Time
}

var _ bloomery.Adder = (*Filter)(nil)

func (p Params) resolve() (Params, time.Duration, int, error) {
	const ctx = "rotating: params"
	if p.Generations == 0 {
		p.Generations = 6
	}
	switch {
	case p.Window <= 0:
		return p, 0, 0, fmt.Errorf("%s: window %v must be positive: %w", ctx, p.Window, bloomery.ErrInvalidParams)
	case p.Generations < 2 || p.Generations > MaxGenerations:
		return p, 0, 0, fmt.Errorf("%s: %d generations outside [2, %d]: %w", ctx, p.Generations, MaxGenerations, bloomery.ErrInvalidParams)
	case p.Window/time.Duration(p.Generations) <= 0:
		return p, 0, 0, fmt.Errorf("%s: window %v too short for %d generations: %w", ctx, p.Window, p.Generations, bloomery.ErrInvalidParams)
	case !(p.FPR > 0 && p.FPR < 1):
		return p, 0, 0, fmt.Errorf("%s: FPR %v outside (0, 1): %w", ctx, p.FPR, bloomery.ErrInvalidParams)
	case (p.Rate != 0) == (p.Capacity != 0):
		return p, 0, 0, fmt.Errorf("%s: set exactly one of Rate and Capacity: %w", ctx, bloomery.ErrInvalidParams)
	case p.Capacity < 0 || !(p.Rate >= 0) || math.IsInf(p.Rate, 0):
		return p, 0, 0, fmt.Errorf("%s: rate %v, capacity %d: %w", ctx, p.Rate, p.Capacity, bloomery.ErrInvalidParams)
	}
	genLen := p.Window / time.Duration(p.Generations)
	capacity := p.Capacity
	if p.Rate != 0 {
		c := math.Ceil(p.Rate * genLen.Seconds())
		if !(c >= 1 && c <= 1<<48) {
			return p, 0, 0, fmt.Errorf("%s: rate %v gives %v keys per generation: %w", ctx, p.Rate, c, bloomery.ErrInvalidParams)
		}
		capacity = int(c)
	}
	return p, genLen, capacity, nil
}

// Size returns the bytes of the bit arrays New(p) would allocate (what
// SizeBytes reports for the new filter) and the probe count of each
// generation, without allocating anything. Its errors are New's. Cost:
// one Bloom sizing, O(1) in the capacity.
func Size(p Params) (bytes uint64, k int, err error) {
	p, _, capacity, err := p.resolve()
	if err != nil {
		return 0, 0, err
	}
	bp := bloom.Params{Capacity: capacity, FPR: p.FPR / float64(p.Generations), Hasher: p.Hasher}
	var per uint64
	if p.Blocked {
		blocks, bk, err := bloom.BlockedSize(bp)
		if err != nil {
			return 0, 0, fmt.Errorf("rotating: generation: %w", err)
		}
		per, k = bloom.BlockedRawSize(blocks), bk
	} else {
		m, bk, err := bloom.Size(bp)
		if err != nil {
			return 0, 0, fmt.Errorf("rotating: generation: %w", err)
		}
		per, k = m/8, bk
	}
	return per * uint64(p.Generations), k, nil
}

// New returns an empty rotating filter whose newest generation opens now.
// It allocates all N generations (Size tells how much, beforehand).
func New(p Params) (*Filter, error) {
	p, genLen, capacity, err := p.resolve()
	if err != nil {
		return nil, err
	}
	f := &Filter{p: p, genLen: genLen, capacity: capacity, clock: p.Clock}
	if f.clock == nil {
		f.clock = time.Now
	}
	f.p.Clock = nil
	f.gens = make([]generation, p.Generations)
	f.starts = make([]int64, p.Generations)
	f.flagged = make([]bool, p.Generations)
	bp := bloom.Params{Capacity: capacity, FPR: p.FPR / float64(p.Generations), Hasher: p.Hasher}
	for i := range f.gens {
		var g generation
		if p.Blocked {
			g, err = bloom.NewBlocked(bp)
		} else {
			g, err = bloom.New(bp)
		}
		if err != nil {
			return nil, fmt.Errorf("rotating: generation: %w", err)
		}
		f.gens[i] = g
	}
	// The newest generation opens now; the others are "expired" (they
	// opened a window or more ago) and empty.
	now := f.clock().UnixNano()
	f.head = p.Generations - 1
	for i := range f.starts {
		f.starts[i] = now - int64(p.Generations-1-i)*int64(genLen) - int64(p.Window)
	}
	f.starts[f.head] = now
	return f, nil
}

// SetClock replaces the clock (for a filter just decoded, or a test).
func (f *Filter) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	f.clock = now
}

// Kind returns bloomery.KindRotating.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindRotating }

// Hasher returns the hasher keys are hashed with.
func (f *Filter) Hasher() hashing.Hasher { return f.p.Hasher }

// Window returns W.
func (f *Filter) Window() time.Duration { return f.p.Window }

// GenerationLength returns W/N.
func (f *Filter) GenerationLength() time.Duration { return f.genLen }

// NumGenerations returns N.
func (f *Filter) NumGenerations() int { return len(f.gens) }

// live reports whether generation i is live at now: it opened less than W
// ago (and not in the future of a clock that stepped back: such a
// generation is live too, nothing is dropped when time runs backwards).
func (f *Filter) live(i int, now int64) bool {
	return now-f.starts[i] < int64(f.p.Window)
}

// Rotate drops the generations that the clock has expired and opens new
// ones: one per elapsed generation length, at most N. Add calls it; call
// it from a timer to keep the clearing off the add path.
func (f *Filter) Rotate() { f.rotate(f.clock().UnixNano()) }

func (f *Filter) rotate(now int64) {
	start := f.starts[f.head]
	gl := int64(f.genLen)
	if now-start < gl {
		return
	}
	steps := (now - start) / gl
	n := int64(len(f.gens))
	first := int64(0)
	if steps > n {
		first = steps - n // those generations would open and expire unseen
	}
	for s := first + 1; s <= steps; s++ {
		f.head = (f.head + 1) % len(f.gens)
		f.gens[f.head].Reset()
		f.starts[f.head] = start + s*gl
		f.flagged[f.head] = false
	}
}

// Contains reports whether key may have been added within the window.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.p.Hasher.Sum64(key)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.p.Hasher.Sum64String(key))
}

// ContainsHash asks every live generation, newest first. It does not
// rotate, so it modifies nothing.
func (f *Filter) ContainsHash(h uint64) bool { return f.containsAt(h, f.clock().UnixNano()) }

func (f *Filter) containsAt(h uint64, now int64) bool {
	n := len(f.gens)
	for j := range n {
		i := (f.head - j + n) % n
		if f.live(i, now) && f.gens[i].ContainsHash(h) {
			return true
		}
	}
	return false
}

// Add inserts key into the newest generation (so it is remembered for at
// least W·(N−1)/N from now, even if it was seen before) and reports
// whether it was new to the window: no live generation claimed it.
func (f *Filter) Add(key []byte) bool { return f.AddHash(f.p.Hasher.Sum64(key)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) bool { return f.AddHash(f.p.Hasher.Sum64String(key)) }

// AddHash is Add for a hash computed with Hasher().
func (f *Filter) AddHash(h uint64) bool {
	now := f.clock().UnixNano()
	f.rotate(now)
	seen := f.containsAt(h, now)
	f.insert(h)
	return !seen
}

// AddIfAbsent inserts key only if no live generation claims it, and
// reports whether it did: true means "first sighting in the window,
// process it", false "duplicate (or a false positive, probability about
// FPR)". A duplicate does not extend the key's expiry.
func (f *Filter) AddIfAbsent(key []byte) bool { return f.AddIfAbsentHash(f.p.Hasher.Sum64(key)) }

// AddIfAbsentString is AddIfAbsent for a string key.
func (f *Filter) AddIfAbsentString(key string) bool {
	return f.AddIfAbsentHash(f.p.Hasher.Sum64String(key))
}

// AddIfAbsentHash is AddIfAbsent for a hash computed with Hasher().
func (f *Filter) AddIfAbsentHash(h uint64) bool {
	now := f.clock().UnixNano()
	f.rotate(now)
	if f.containsAt(h, now) {
		return false
	}
	f.insert(h)
	return true
}

func (f *Filter) insert(h uint64) {
	g := f.gens[f.head]
	if g.AddHash(h) && g.Len() == g.Cap()+1 {
		f.overfill++
		if !f.flagged[f.head] {
			f.flagged[f.head] = true
			if f.p.OnOverfill != nil {
				f.p.OnOverfill(f.info(f.head, f.clock().UnixNano()))
			}
		}
	}
}

// Len returns the number of insertions held by the live generations (a
// key added in two generations counts twice).
func (f *Filter) Len() int {
	now := f.clock().UnixNano()
	n := 0
	for i, g := range f.gens {
		if f.live(i, now) {
			n += g.Len()
		}
	}
	return n
}

// Cap returns N times the per-generation capacity: the keys a full window
// holds at the design rate.
func (f *Filter) Cap() int { return f.capacity * len(f.gens) }

// GenerationCapacity returns the per-generation capacity.
func (f *Filter) GenerationCapacity() int { return f.capacity }

// SizeBytes returns the size of all generations' bit arrays.
func (f *Filter) SizeBytes() int {
	s := 0
	for _, g := range f.gens {
		s += g.SizeBytes()
	}
	return s
}

// OverfillEvents returns how many generations, since creation (or since
// the encoded filter's creation), received more keys than their capacity.
func (f *Filter) OverfillEvents() uint64 { return f.overfill }

// GenerationInfo describes one generation.
type GenerationInfo struct {
	// Start is when the generation opened; Live whether it still answers.
	Start time.Time
	Live  bool
	// Len and Capacity are its actual and design key counts; Load their
	// ratio.
	Len, Capacity int
	Load          float64
	FillRatio     float64
	// DesignFPR is the generation's FPR at Capacity (about FPR/N);
	// EstimatedFPR the FPR at its current fill.
	DesignFPR, EstimatedFPR float64
	// Overfilled is true once EstimatedFPR exceeds twice DesignFPR.
	Overfilled bool
}

func (f *Filter) info(i int, now int64) GenerationInfo {
	g := f.gens[i]
	est := g.EstimatedFPR()
	return GenerationInfo{
		Start:        time.Unix(0, f.starts[i]),
		Live:         f.live(i, now),
		Len:          g.Len(),
		Capacity:     g.Cap(),
		Load:         float64(g.Len()) / float64(g.Cap()),
		FillRatio:    g.FillRatio(),
		DesignFPR:    g.DesignFPR(),
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, g.DesignFPR()) || g.Len() > g.Cap(),
	}
}

// Generations describes the generations, newest first.
func (f *Filter) Generations() []GenerationInfo {
	now := f.clock().UnixNano()
	n := len(f.gens)
	out := make([]GenerationInfo, n)
	for j := range n {
		out[j] = f.info((f.head-j+n)%n, now)
	}
	return out
}

// EstimatedFPR is 1 − Π(1 − est_i) over the live generations.
func (f *Filter) EstimatedFPR() float64 {
	now := f.clock().UnixNano()
	miss := 1.0
	for i, g := range f.gens {
		if f.live(i, now) {
			miss *= 1 - g.EstimatedFPR()
		}
	}
	return 1 - miss
}

// Stats returns a snapshot. DesignFPR is Params.FPR; EstimatedFPR is over
// the live generations; Overfilled is set when the estimate exceeds twice
// the design or any live generation is overfilled. Extra: "generations",
// "live_generations", "generation_seconds", "overfilled_generations" (live
// ones), "max_load" (the highest Len/Capacity of a live generation),
// "overfill_events" (cumulative).
func (f *Filter) Stats() bloomery.Stats {
	now := f.clock().UnixNano()
	var bits, ones float64
	miss := 1.0
	live, over, n := 0, 0, 0
	maxLoad := 0.0
	for i, g := range f.gens {
		b := float64(g.Bits())
		bits += b
		ones += b * g.FillRatio()
		if !f.live(i, now) {
			continue
		}
		live++
		gi := f.info(i, now)
		n += gi.Len
		miss *= 1 - gi.EstimatedFPR
		maxLoad = max(maxLoad, gi.Load)
		if gi.Overfilled {
			over++
		}
	}
	est := 1 - miss
	return bloomery.Stats{
		Kind:         bloomery.KindRotating,
		Len:          n,
		Cap:          f.Cap(),
		SizeBytes:    f.SizeBytes(),
		BitsPerKey:   bits / float64(f.Cap()),
		HashFuncs:    f.gens[f.head].K(),
		FillRatio:    ones / bits,
		DesignFPR:    f.p.FPR,
		EstimatedFPR: est,
		Overfilled:   bloomery.IsOverfilled(est, f.p.FPR) || over > 0,
		Extra: []bloomery.Stat{
			{Name: "generations", Value: float64(len(f.gens))},
			{Name: "live_generations", Value: float64(live)},
			{Name: "generation_seconds", Value: f.genLen.Seconds()},
			{Name: "overfilled_generations", Value: float64(over)},
			{Name: "max_load", Value: maxLoad},
			{Name: "overfill_events", Value: float64(f.overfill)},
		},
	}
}
