package pebblefilter

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/monkey"
)

// LevelInfo describes one level of a database for Allocate: take Keys
// from the tables' Properties.NumEntries (or the distinct prefixes, if
// known) and DataBytes from Properties.DataSize, summed per level
// (db.SSTables(pebble.WithProperties())).
type LevelInfo struct {
	Keys      uint64
	DataBytes uint64
}

// Workload says which read path the filters serve.
type Workload uint8

const (
	// Seek: iterators with SeekPrefixGE and IterOptions.UseL6Filters,
	// which consult every level's filter.
	Seek Workload = iota
	// Get: DB.Get, which never consults L6 filters (pebble's file cache
	// sets NeverUseFilterBlock for L6 unless UseL6Filters is set, and Get
	// does not set it). L6 gets no filter; its memory goes to the others.
	Get
)

// AllocOptions configures Allocate.
type AllocOptions struct {
	// BitsPerKey is the budget: on average this many bits per key over
	// the levels that get a filter (L0-L6 for Seek, L0-L5 for Get), i.e.
	// the memory of a uniform allocation at BitsPerKey.
	BitsPerKey float64
	// CacheBytes is the block cache size. Zero means no cache model:
	// every false positive costs a read (textbook Monkey).
	CacheBytes uint64
	// HotBytes is the part of the cache taken by blocks every lookup
	// touches (filter and index blocks). Zero estimates it as the filter
	// budget plus 1 % of the data bytes.
	HotBytes uint64
	// MinWeight is the smallest cost of a false positive, for a level
	// whose data blocks are all cached: a cached block still costs a
	// lookup and a decode, about a tenth of a read in Pebble. Zero means
	// 0.1.
	MinWeight float64
	// MaxBitsPerKey caps every level (blocked Bloom stops improving near
	// 20-24 bits per key). Zero means 24.
	MaxBitsPerKey float64
	// Weights, when any entry is non-zero, replaces the cache model: the
	// cost of a false positive per level (for example the miss ratio of
	// each level's false positives measured on a pilot run), each floored
	// at MinWeight. CacheBytes and HotBytes are then ignored.
	Weights [NumLevels]float64
	// Probes is the number of filters a lookup of a missing key consults
	// on each level: 1 for L1-L6 (one table per level covers a key), the
	// number of L0 sublevels whose tables overlap the key for L0. The
	// cost of a level is Probes[i]·Weights[i]·p_i. Zero entries mean 1
	// (all zero: every level probed once, the historical model). A pilot
	// run measures it as filter checks per lookup ([PilotCounts]).
	Probes [NumLevels]float64
	// Elasticity, when any entry is non-zero, makes the cost of a false
	// positive depend on the FPR (see monkey.Level.Elasticity): level i's
	// reads per lookup are modelled as t_i·w_i·q_i·(p_i/q_i)^α_i around
	// the FPR q_i = WeightFPR[i] at which Weights[i] was measured, with
	// α_i = Elasticity[i] (zero entries mean 1, a constant weight). The
	// optimum then satisfies α_i·t_i·w_i·p_i·|d ln p/d b| ∝ n_i instead of
	// t_i·w_i·p_i·|d ln p/d b| ∝ n_i: a level whose reads fall more slowly
	// than its FPR (α_i < 1, because its rarer false positives find its
	// blocks evicted) gets fewer bits. [Elasticities] estimates α from
	// pilot rounds that ran the levels at different FPRs. Requires
	// Weights; each entry in (0, 4].
	Elasticity [NumLevels]float64
	// WeightFPR is the FPR of each level's filters when Weights were
	// measured (for a pilot: the model FPR of the filters it ran with),
	// in (0, 1]; required on every level whose Elasticity is not 0 or 1.
	WeightFPR [NumLevels]float64
	// Family is the filter written on every filtered level: BlockedBloom
	// (the zero value counts as BlockedBloom) or Ribbon.
	Family Family
	// Workload selects the read path.
	Workload Workload
}

// Plan is an allocation.
type Plan struct {
	// Specs is the filter of each level, for Apply.
	Specs [NumLevels]Spec
	// Weights is the cost of one false positive on each level (the
	// modelled or measured probability that it reads an uncached block),
	// after the MinWeight floor. The allocator's per-level weight is
	// this times AllocOptions.Probes[i].
	Weights [NumLevels]float64
	// Monkey is the allocator's result, one entry per level (L0 first).
	Monkey monkey.Allocation
}

// ribbonOverhead is the slots-per-key ratio of table-sized Ribbon filters
// (ribbon's overhead table: 1.023 to 1.036 between 2^10 and 2^17 slots).
const ribbonOverhead = 1.03

// BloomModelFPR is the FPR model of a blocked Bloom policy at b bits per
// key: the Poisson blocked-Bloom formula (fpmath.BlockedFPR) with the
// probe count NewBloom chooses. The formula sums a Poisson series, too slow
// for the allocator's hundreds of thousands of evaluations, so it is
// tabulated once every 1/32 bit per key over [MinBitsPerKey,
// MaxBitsPerKey] and interpolated linearly in log(FPR) (exact at the grid
// points; the curve is smooth between them except where k steps).
func BloomModelFPR(b float64) float64 {
	if !(b >= MinBitsPerKey) {
		return 1
	}
	bloomTableOnce.Do(fillBloomTable)
	x := (min(b, MaxBitsPerKey) - MinBitsPerKey) * bloomTableStep
	i := min(int(x), len(bloomTable)-2)
	f := x - float64(i)
	return math.Exp(bloomTable[i]*(1-f) + bloomTable[i+1]*f)
}

const bloomTableStep = 32 // points per bit per key

var (
	bloomTableOnce sync.Once
	bloomTable     []float64 // log FPR at MinBitsPerKey + i/bloomTableStep
)

func fillBloomTable() {
	n := (MaxBitsPerKey-MinBitsPerKey)*bloomTableStep + 1
	bloomTable = make([]float64, n)
	for i := range bloomTable {
		b := MinBitsPerKey + float64(i)/bloomTableStep
		bloomTable[i] = math.Log(fpmath.BlockedFPR(b, 1, bloom.BlockedK(b), bloom.BlockBits))
	}
}

// RibbonModelFPR is the FPR of a Ribbon filter at b bits per key:
// 2^(-b/overhead).
func RibbonModelFPR(b float64) float64 { return math.Exp2(-b / ribbonOverhead) }

// MissCosts returns each level's cost of a false positive under a simple
// cache model: after the hot blocks (hotBytes), the cache holds the data
// of the levels with the least data first (a random lookup touches each
// level's data about equally often, so a small level's blocks are the
// densest in accesses and stay cached), and a level whose fraction f of
// data is cached costs 1-f per false positive, floored at minWeight.
func MissCosts(levels [NumLevels]LevelInfo, cacheBytes, hotBytes uint64, minWeight float64) [NumLevels]float64 {
	var w [NumLevels]float64
	order := make([]int, 0, NumLevels)
	for i := range levels {
		order = append(order, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return levels[order[a]].DataBytes < levels[order[b]].DataBytes })
	left := 0.0
	if cacheBytes > hotBytes {
		left = float64(cacheBytes - hotBytes)
	}
	for _, i := range order {
		d := float64(levels[i].DataBytes)
		cached := 1.0
		if d > 0 {
			cached = min(1, left/d)
			left = max(0, left-d)
		}
		w[i] = max(minWeight, 1-cached)
	}
	return w
}

// Allocate splits the filter budget across levels with monkey.Optimize,
// minimising the expected number of uncached block reads per lookup of a
// missing key, Σ t_i·w_i·p_i (with o.Elasticity: Σ t_i·w_i·q_i·(p_i/q_i)^α_i), where p_i is level i's FPR (from the family's
// model), w_i the cost of a false positive (o.Weights if given, typically
// PilotCounts.Weights from a pilot run; else MissCosts; else 1 for every
// level if CacheBytes is 0) and t_i the filters probed per lookup
// (o.Probes, default 1: one table per level for L1-L6; L0's sublevels each
// hold part of L0's keys and are all probed, so t_0 is about the sublevel
// count). With the textbook model the optimum is p_i ∝ n_i/(t_i·w_i): a
// level's FPR grows with its size and shrinks with how often its false
// positives cost a read. Levels without keys get the spec of the next
// larger non-empty level, so tables that later land there still have
// filters.
func Allocate(levels [NumLevels]LevelInfo, o AllocOptions) (Plan, error) {
	if !(o.BitsPerKey > 0 && o.BitsPerKey <= MaxBitsPerKey) {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: bits per key %v outside (0, %d]: %w", o.BitsPerKey, MaxBitsPerKey, bloomery.ErrInvalidParams)
	}
	if o.Family == None {
		o.Family = BlockedBloom
	}
	if o.Family != BlockedBloom && o.Family != Ribbon {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: family %v: %w", o.Family, bloomery.ErrInvalidParams)
	}
	if o.MinWeight == 0 {
		o.MinWeight = 0.1
	}
	if o.MaxBitsPerKey == 0 {
		o.MaxBitsPerKey = 24
	}
	if !(o.MinWeight > 0 && o.MinWeight <= 1) || !(o.MaxBitsPerKey >= MinBitsPerKey && o.MaxBitsPerKey <= MaxBitsPerKey) {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: MinWeight %v, MaxBitsPerKey %v: %w", o.MinWeight, o.MaxBitsPerKey, bloomery.ErrInvalidParams)
	}
	model := BloomModelFPR
	if o.Family == Ribbon {
		model = RibbonModelFPR
	}
	var keys, data float64
	for i, l := range levels {
		data += float64(l.DataBytes)
		if o.Workload == Get && i == NumLevels-1 {
			continue
		}
		keys += float64(l.Keys)
	}
	if keys == 0 {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: no keys on the filtered levels: %w", bloomery.ErrInvalidParams)
	}
	budget := o.BitsPerKey * keys
	var plan Plan
	if o.Weights != ([NumLevels]float64{}) {
		for i, w := range o.Weights {
			if !(w >= 0 && w <= 1) {
				return Plan{}, fmt.Errorf("pebblefilter: allocate: weight %v of L%d outside [0, 1]: %w", w, i, bloomery.ErrInvalidParams)
			}
			plan.Weights[i] = max(o.MinWeight, w)
		}
	} else if o.CacheBytes == 0 {
		for i := range plan.Weights {
			plan.Weights[i] = 1
		}
	} else {
		hot := o.HotBytes
		if hot == 0 {
			hot = uint64(budget/8 + 0.01*data)
		}
		plan.Weights = MissCosts(levels, o.CacheBytes, hot, o.MinWeight)
	}
	for i, t := range o.Probes {
		if !(t >= 0 && t <= 64) {
			return Plan{}, fmt.Errorf("pebblefilter: allocate: %v probes on L%d outside [0, 64]: %w", t, i, bloomery.ErrInvalidParams)
		}
	}
	if o.Elasticity != ([NumLevels]float64{}) && o.Weights == ([NumLevels]float64{}) {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: elasticities without measured weights: %w", bloomery.ErrInvalidParams)
	}
	for i, a := range o.Elasticity {
		if !(a >= 0 && a <= 4) || a != 0 && a != 1 && !(o.WeightFPR[i] > 0 && o.WeightFPR[i] <= 1) {
			return Plan{}, fmt.Errorf("pebblefilter: allocate: L%d elasticity %v at FPR %v: %w", i, a, o.WeightFPR[i], bloomery.ErrInvalidParams)
		}
	}
	ml := make([]monkey.Level, NumLevels)
	for i, l := range levels {
		probes := o.Probes[i]
		if probes == 0 {
			probes = 1
		}
		ml[i] = monkey.Level{Keys: float64(l.Keys), Weight: probes * plan.Weights[i]}
		if a := o.Elasticity[i]; a != 0 && a != 1 {
			ml[i].Elasticity, ml[i].RefFPR = a, o.WeightFPR[i]
		}
		if o.Workload == Get && i == NumLevels-1 {
			ml[i].NoFilter = true
		}
	}
	a, err := monkey.Optimize(ml, budget, monkey.Options{FPR: model, MaxBitsPerKey: o.MaxBitsPerKey})
	if err != nil {
		return Plan{}, fmt.Errorf("pebblefilter: allocate: %w", err)
	}
	plan.Monkey = a
	for i, la := range a.Levels {
		b := la.BitsPerKey
		switch {
		case b < MinBitsPerKey:
			plan.Specs[i] = Spec{}
		case o.Family == Ribbon:
			plan.Specs[i] = RibbonFPR(min(MaxFPR, max(MinFPR, model(b))))
		default:
			plan.Specs[i] = Bloom(b)
		}
	}
	// Empty levels inherit from the next larger non-empty one.
	for i := NumLevels - 2; i >= 0; i-- {
		if levels[i].Keys == 0 {
			plan.Specs[i] = plan.Specs[i+1]
		}
	}
	if o.Workload == Get {
		plan.Specs[NumLevels-1] = Spec{}
	}
	return plan, nil
}

// PilotCounts are per-level counts from a pilot run of missing-key lookups
// on a database whose filters are in place (typically the uniform
// configuration the allocation will replace): how many filters were
// checked, how many answered "may contain" (on a missing key, every one
// is a false positive), and how many data blocks were read from storage
// because of them (block-cache misses; count them with a vfs.FS wrapper).
type PilotCounts struct {
	Lookups        int64
	Checks         [NumLevels]int64
	FalsePositives [NumLevels]int64
	DataReads      [NumLevels]int64
}

// Weights returns the measured cost of a false positive on each level,
// DataReads/FalsePositives: the probability that a false positive there
// misses the block cache and reads a data block. This is the quantity the
// cache model of [MissCosts] guesses, measured instead, so the allocation
// follows what the cache really holds under the workload (for example,
// that small levels' blocks stay cached because false positives keep
// touching them, while a level of moderate size loses its blocks to the
// last level's). A level with no false positives in the pilot has no
// evidence and gets weight 1 (the pessimistic textbook cost). The result
// is clamped to [0, 1]; Allocate applies MinWeight. Relative error: a
// level with F false positives and weight w has standard error about
// sqrt(w(1-w)/F), so the pilot needs a few thousand false positives on
// the levels that matter (about 5,000 per level at 500,000 lookups and
// 1 % FPR).
func (c PilotCounts) Weights() (w [NumLevels]float64) {
	for i := range w {
		w[i] = 1
		if c.FalsePositives[i] > 0 {
			w[i] = min(1, max(0, float64(c.DataReads[i])/float64(c.FalsePositives[i])))
		}
	}
	return w
}

// Probes returns the filter checks per lookup on each level (L0: about
// the number of its sublevels; levels without tables: 0, which Allocate
// reads as 1). Zero Lookups gives all zeros.
func (c PilotCounts) Probes() (t [NumLevels]float64) {
	if c.Lookups <= 0 {
		return t
	}
	for i := range t {
		t[i] = float64(c.Checks[i]) / float64(c.Lookups)
	}
	return t
}

// Elasticity estimation: a pair of rounds is used for a level when both
// have at least elasticityMinCount false positives and reads there and
// the secant's standard error from the counts' sampling noise,
// sqrt(1/R₁ + 1/R₂) / |Δ ln p| (R the reads, Poisson), is at most
// elasticityMaxSE.
const (
	elasticityMinCount = 20
	elasticityMaxSE    = 0.15
)

// Elasticities estimates, per level, α_i = d ln r_i / d ln p_i: how fast
// the data-block reads r_i that level i's false positives cost fall with
// its FPR p_i (1: in proportion, a constant weight; below 1: more slowly,
// because rarer false positives find the level's blocks evicted). rounds
// are pilot runs of the same lookups on databases whose filters differ;
// the last one is the operating point the estimate is for, and p_i is
// measured as false positives per check. For each level the estimate is
// the secant Δ ln(reads per lookup) / Δ ln p between the last round and
// the earlier round nearest to it in ln p among those precise enough:
// both with at least 20 false positives and 20 reads on the level, and a
// secant whose standard error from the counts, sqrt(1/R₁ + 1/R₂)/|Δ ln p|,
// is at most 0.15 (with 4,000 reads per round the FPRs must differ by
// 16 %, with 100 by a factor of 2.6). Nearest, not a fit over all rounds:
// the relation is not a power law over a wide range (on a cached level
// reads can even rise while false positives fall). A level without such
// a pair gets 1 (no evidence: the constant-weight model). The result is
// clamped to [lo, hi], which must satisfy 0 < lo ≤ 1 ≤ hi ≤ 4 (lo keeps a
// level whose reads did not fall from losing its filter on the strength
// of two points).
func Elasticities(rounds []PilotCounts, lo, hi float64) ([NumLevels]float64, error) {
	var a [NumLevels]float64
	if !(lo > 0 && lo <= 1 && hi >= 1 && hi <= 4) {
		return a, fmt.Errorf("pebblefilter: elasticities: bounds [%v, %v]: %w", lo, hi, bloomery.ErrInvalidParams)
	}
	usable := func(c PilotCounts, l int) bool {
		return c.Lookups > 0 && c.Checks[l] > 0 && c.FalsePositives[l] >= elasticityMinCount && c.DataReads[l] >= elasticityMinCount
	}
	point := func(c PilotCounts, l int) (lnp, lnr float64) {
		return math.Log(float64(c.FalsePositives[l]) / float64(c.Checks[l])), math.Log(float64(c.DataReads[l]) / float64(c.Lookups))
	}
	for l := range a {
		a[l] = 1
		last := rounds[len(rounds)-1:]
		if len(rounds) < 2 || !usable(last[0], l) {
			continue
		}
		p0, r0 := point(last[0], l)
		best := math.Inf(1)
		for _, c := range rounds[:len(rounds)-1] {
			if !usable(c, l) {
				continue
			}
			p, r := point(c, l)
			d := math.Abs(p - p0)
			se := math.Sqrt(1/float64(c.DataReads[l])+1/float64(last[0].DataReads[l])) / d
			if se <= elasticityMaxSE && d <= best {
				best = d
				a[l] = min(hi, max(lo, (r-r0)/(p-p0)))
			}
		}
	}
	return a, nil
}
