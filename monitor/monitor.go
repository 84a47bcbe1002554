// Package monitor measures a filter in production: it counts the queries a
// filter answers, its "no" and "maybe" answers, and the false positives that
// the caller discovers after its authoritative check, and it raises an alert
// when either the measured or the estimated false-positive rate exceeds
// twice the design rate.
//
// # Measured FPR
//
// A filter never answers "no" for a key it holds, so every "no" is a true
// negative. A "maybe" is either a true positive or a false positive, and
// only the caller's authoritative lookup can tell which; the caller reports
// the false positives ([Filter.ReportFalsePositive], or [Filter.Observe] for
// queries made elsewhere). The measured rate is then
//
//	measured FPR = FP / (FP + TN)
//
// the fraction of absent keys that the filter failed to reject, which is the
// quantity the design FPR promises. It is only as complete as the caller's
// reports: a "maybe" that is never checked is never counted as a false
// positive, and the measured rate under-reads.
//
// The measured rate is noisy while few absent keys have been seen (one false
// positive among ten negatives reads 9 %), so it only raises an alert once at
// least [Options.MinNegatives] absent keys were observed; by default that is
// enough negatives to expect ten false positives at the design rate.
//
// # Estimated FPR
//
// The estimated rate comes from the wrapped filter itself
// ([bloomery.Filter.EstimatedFPR]: for Bloom families the fill ratio raised
// to the probe count). It needs no reports, catches overfill before queries
// reveal it, and costs a scan of the filter's table, so [Filter.Report]
// computes it; the query path never does.
//
// # Concurrency
//
// The counters are atomic, padded to separate cache lines, so any number of
// goroutines may query and report at once; the monitor adds one uncontended
// atomic increment (two for a "maybe") to each query. Whether the wrapped
// filter tolerates concurrent adds is the family's business: a Bloom filter
// allows concurrent Contains but not Add concurrent with Contains.
package monitor

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bloomery/bloomery"
)

// Options configures a monitor. The zero value takes the design FPR from
// the filter's Stats.
type Options struct {
	// DesignFPR is the rate the filter was sized for. Zero means
	// Stats().DesignFPR of the wrapped filter.
	DesignFPR float64
	// MinNegatives is the number of absent keys (true negatives plus
	// false positives) that must be observed before the measured FPR can
	// raise an alert. Zero means ceil(10 / DesignFPR), at least 100: the
	// point at which the design rate predicts ten false positives.
	MinNegatives uint64
}

// counter is an atomic counter alone on its cache line, so that counters
// bumped by different goroutines do not false-share.
type counter struct {
	n atomic.Uint64
	_ [56]byte
}

// Filter wraps a bloomery.Filter and counts what it answers. It implements
// bloomery.Filter itself, so it can replace the filter it wraps.
type Filter struct {
	f       bloomery.Filter
	design  float64
	minNeg  uint64
	queries counter // Contains* calls and Observe calls
	maybes  counter // "maybe" answers
	fps     counter // reported false positives
	fns     counter // observed false negatives (a broken filter or a misuse)
}

var _ bloomery.Filter = (*Filter)(nil)

// New wraps f. It fails with bloomery.ErrInvalidParams when no design FPR in
// (0, 1) is given and the filter's Stats does not report one.
func New(f bloomery.Filter, o Options) (*Filter, error) {
	if f == nil {
		return nil, fmt.Errorf("monitor: nil filter: %w", bloomery.ErrInvalidParams)
	}
	d := o.DesignFPR
	if d == 0 {
		d = f.Stats().DesignFPR
	}
	if !(d > 0 && d < 1) {
		return nil, fmt.Errorf("monitor: design FPR %v not in (0, 1): %w", d, bloomery.ErrInvalidParams)
	}
	m := &Filter{f: f, design: d, minNeg: o.MinNegatives}
	if m.minNeg == 0 {
		m.minNeg = max(100, uint64(math.Ceil(10/d)))
	}
	return m, nil
}

// Unwrap returns the wrapped filter.
func (m *Filter) Unwrap() bloomery.Filter { return m.f }

// DesignFPR returns the design rate the alerts compare against.
func (m *Filter) DesignFPR() float64 { return m.design }

func (m *Filter) count(maybe bool) bool {
	m.queries.n.Add(1)
	if maybe {
		m.maybes.n.Add(1)
	}
	return maybe
}

// Contains queries the wrapped filter and counts the answer.
func (m *Filter) Contains(key []byte) bool { return m.count(m.f.Contains(key)) }

// ContainsString queries the wrapped filter and counts the answer.
func (m *Filter) ContainsString(key string) bool { return m.count(m.f.ContainsString(key)) }

// ContainsHash queries the wrapped filter and counts the answer.
func (m *Filter) ContainsHash(h uint64) bool { return m.count(m.f.ContainsHash(h)) }

// ReportFalsePositive records that a "maybe" answer of this monitor turned
// out, after the authoritative check, to concern an absent key. Call it at
// most once per "maybe" answer.
func (m *Filter) ReportFalsePositive() { m.fps.n.Add(1) }

// Observe records the outcome of one query that the caller made to the
// filter by other means (a filter read from an SST block, a batch query):
// maybe is the filter's answer, present the authoritative answer. A "no"
// for a present key is a false negative, which a correct filter never
// gives; it is counted and raises the alert.
func (m *Filter) Observe(maybe, present bool) {
	m.count(maybe)
	switch {
	case maybe && !present:
		m.fps.n.Add(1)
	case !maybe && present:
		m.fns.n.Add(1)
	}
}

// Reset zeroes the counters (for example after the filter was rebuilt).
// Queries racing with Reset may be counted before or after it.
func (m *Filter) Reset() {
	m.queries.n.Store(0)
	m.maybes.n.Store(0)
	m.fps.n.Store(0)
	m.fns.n.Store(0)
}

// Report is a snapshot of a monitor's counters and rates.
type Report struct {
	// Queries is the number of answers counted; Maybes those that said
	// "maybe", Negatives those that said "no" (all true negatives).
	Queries, Maybes, Negatives uint64
	// FalsePositives is the number of reported false positives;
	// FalseNegatives the number of observed false negatives (always 0
	// for a correct filter used correctly).
	FalsePositives, FalseNegatives uint64
	// MeasuredFPR is FP / (FP + TN), or 0 before any absent key was seen.
	MeasuredFPR float64
	// EstimatedFPR is the wrapped filter's own estimate from its fill.
	EstimatedFPR float64
	DesignFPR    float64
	// MeasuredSignificant says whether enough absent keys were seen for
	// MeasuredFPR to raise an alert (Options.MinNegatives).
	MeasuredSignificant bool
	// Alert is set when MeasuredFPR (once significant) or EstimatedFPR
	// exceeds bloomery.OverfillFactor times DesignFPR, or when a false
	// negative was observed. Reason says which.
	Alert  bool
	Reason string
}

// Report takes a snapshot. The counters are read one by one, so a snapshot
// taken under concurrent queries may be off by the queries in flight. It
// calls the wrapped filter's EstimatedFPR, which may scan its table.
func (m *Filter) Report() Report {
	fp := m.fps.n.Load()
	fn := m.fns.n.Load()
	maybes := m.maybes.n.Load()
	q := m.queries.n.Load()
	r := Report{
		Queries:        q,
		Maybes:         maybes,
		Negatives:      q - min(q, maybes),
		FalsePositives: fp,
		FalseNegatives: fn,
		EstimatedFPR:   m.f.EstimatedFPR(),
		DesignFPR:      m.design,
	}
	// Observed false negatives are "no" answers for present keys, not
	// true negatives.
	tn := r.Negatives - min(r.Negatives, fn)
	if absent := fp + tn; absent > 0 {
		r.MeasuredFPR = float64(fp) / float64(absent)
		r.MeasuredSignificant = absent >= m.minNeg
	}
	limit := bloomery.OverfillFactor * m.design
	switch {
	case fn > 0:
		r.Alert, r.Reason = true, fmt.Sprintf("%d false negatives observed: the filter is broken or keys were added with another hash", fn)
	case r.MeasuredSignificant && r.MeasuredFPR > limit:
		r.Alert, r.Reason = true, fmt.Sprintf("measured FPR %.4g exceeds %.4g (%.0fx design %.4g)", r.MeasuredFPR, limit, bloomery.OverfillFactor, m.design)
	case r.EstimatedFPR > limit:
		r.Alert, r.Reason = true, fmt.Sprintf("estimated FPR %.4g from the fill exceeds %.4g (%.0fx design %.4g)", r.EstimatedFPR, limit, bloomery.OverfillFactor, m.design)
	}
	return r
}

// Alerting reports whether Report().Alert is set.
func (m *Filter) Alerting() bool { return m.Report().Alert }

// Kind returns the wrapped filter's kind.
func (m *Filter) Kind() bloomery.Kind { return m.f.Kind() }

// Len returns the wrapped filter's Len.
func (m *Filter) Len() int { return m.f.Len() }

// SizeBytes returns the wrapped filter's SizeBytes.
func (m *Filter) SizeBytes() int { return m.f.SizeBytes() }

// EstimatedFPR returns the wrapped filter's estimate.
func (m *Filter) EstimatedFPR() float64 { return m.f.EstimatedFPR() }

// AppendBinary encodes the wrapped filter; the counters are not persisted.
func (m *Filter) AppendBinary(b []byte) ([]byte, error) { return m.f.AppendBinary(b) }

// MarshalBinary encodes the wrapped filter; the counters are not persisted.
func (m *Filter) MarshalBinary() ([]byte, error) { return m.f.MarshalBinary() }

// Stats returns the wrapped filter's Stats with the monitor's figures
// appended to Extra ("queries", "maybes", "false_positives",
// "false_negatives", "measured_fpr", "alert" as 0/1), and Overfilled also
// set when the monitor alerts.
func (m *Filter) Stats() bloomery.Stats {
	s := m.f.Stats()
	r := m.Report()
	alert := 0.0
	if r.Alert {
		alert = 1
		s.Overfilled = true
	}
	s.Extra = append(s.Extra,
		bloomery.Stat{Name: "queries", Value: float64(r.Queries)},
		bloomery.Stat{Name: "maybes", Value: float64(r.Maybes)},
		bloomery.Stat{Name: "false_positives", Value: float64(r.FalsePositives)},
		bloomery.Stat{Name: "false_negatives", Value: float64(r.FalseNegatives)},
		bloomery.Stat{Name: "measured_fpr", Value: r.MeasuredFPR},
		bloomery.Stat{Name: "alert", Value: alert},
	)
	return s
}

// Adder is a monitor over a filter that accepts keys; it forwards the adds
// and counts them.
type Adder struct {
	*Filter
	a    bloomery.Adder
	adds counter
}

var _ bloomery.Adder = (*Adder)(nil)

// NewAdder wraps an Adder (see New).
func NewAdder(a bloomery.Adder, o Options) (*Adder, error) {
	if a == nil {
		return nil, fmt.Errorf("monitor: nil filter: %w", bloomery.ErrInvalidParams)
	}
	m, err := New(a, o)
	if err != nil {
		return nil, err
	}
	return &Adder{Filter: m, a: a}, nil
}

// Add forwards to the wrapped filter.
func (m *Adder) Add(key []byte) bool { m.adds.n.Add(1); return m.a.Add(key) }

// AddString forwards to the wrapped filter.
func (m *Adder) AddString(key string) bool { m.adds.n.Add(1); return m.a.AddString(key) }

// AddHash forwards to the wrapped filter.
func (m *Adder) AddHash(h uint64) bool { m.adds.n.Add(1); return m.a.AddHash(h) }

// Cap returns the wrapped filter's design capacity.
func (m *Adder) Cap() int { return m.a.Cap() }

// Adds returns the number of Add calls forwarded.
func (m *Adder) Adds() uint64 { return m.adds.n.Load() }

// Unwrap returns the wrapped filter.
func (m *Adder) Unwrap() bloomery.Adder { return m.a }
