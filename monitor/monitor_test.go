package monitor

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/filtertest"
)

func TestMeasuredFPRMatchesTrueRate(t *testing.T) {
	f := newFake(0.01)
	for _, h := range filtertest.Hashes(10000, 1) {
		f.AddHash(h)
	}
	m, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	present := filtertest.Hashes(10000, 1)
	filtertest.NoFalseNegatives(t, "monitor", m.ContainsHash, present)
	const probes = 1_000_000
	for _, h := range filtertest.Hashes(probes, 2) {
		if m.ContainsHash(h) {
			m.ReportFalsePositive() // every probe is absent
		}
	}
	r := m.Report()
	if r.Queries != probes+10000 {
		t.Fatalf("queries = %d, want %d", r.Queries, probes+10000)
	}
	if r.Maybes != r.FalsePositives+10000 {
		t.Fatalf("maybes %d != FP %d + 10000 present", r.Maybes, r.FalsePositives)
	}
	// The fake's true rate is floor(0.01*65536)/65536.
	want := float64(f.fprQ16) / 65536
	filtertest.CheckFPR(t, "measured", r.MeasuredFPR, want, 0.15, probes)
	if !r.MeasuredSignificant || r.Alert {
		t.Fatalf("significant=%v alert=%v (%s), want significant and no alert", r.MeasuredSignificant, r.Alert, r.Reason)
	}
}

func TestAlertOnMeasuredFPR(t *testing.T) {
	f := newFake(0.03) // the filter really has 3 %
	m, err := New(f, Options{DesignFPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if m.minNeg != 1000 {
		t.Fatalf("default MinNegatives = %d, want 1000 (10 expected FPs at 1%%)", m.minNeg)
	}
	f.est = 0.01 // the fill looks fine: only the measurement can tell
	probe := filtertest.Hashes(200_000, 3)
	for i, h := range probe {
		if m.ContainsHash(h) {
			m.ReportFalsePositive()
		}
		if i == 500 {
			r := m.Report()
			if r.MeasuredSignificant || r.Alert {
				t.Fatalf("after 501 negatives: significant=%v alert=%v; want neither", r.MeasuredSignificant, r.Alert)
			}
		}
	}
	r := m.Report()
	if !r.Alert || !strings.Contains(r.Reason, "measured") {
		t.Fatalf("measured FPR %.4f vs design 0.01: alert=%v reason=%q", r.MeasuredFPR, r.Alert, r.Reason)
	}
	if !m.Stats().Overfilled {
		t.Fatal("Stats().Overfilled not set while alerting")
	}
	m.Reset()
	if r := m.Report(); r.Queries != 0 || r.Alert {
		t.Fatalf("after Reset: %+v", r)
	}
}

func TestAlertOnEstimatedFPR(t *testing.T) {
	f := newFake(0.01)
	m, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.est = 0.0199
	if m.Alerting() {
		t.Fatal("alert at 1.99x design")
	}
	f.est = 0.0201
	r := m.Report()
	if !r.Alert || !strings.Contains(r.Reason, "estimated") {
		t.Fatalf("estimated 2.01x design: alert=%v reason=%q", r.Alert, r.Reason)
	}
}

func TestObserve(t *testing.T) {
	m, err := New(newFake(0.01), Options{MinNegatives: 10})
	if err != nil {
		t.Fatal(err)
	}
	for range 99 {
		m.Observe(false, false)
	}
	m.Observe(true, false)
	m.Observe(true, true)
	r := m.Report()
	if r.Queries != 101 || r.Maybes != 2 || r.FalsePositives != 1 || r.MeasuredFPR != 0.01 || r.Alert {
		t.Fatalf("report %+v", r)
	}
	m.Observe(false, true)
	if r := m.Report(); !r.Alert || r.FalseNegatives != 1 || !strings.Contains(r.Reason, "false negative") {
		t.Fatalf("false negative not alerted: %+v", r)
	}
}

func TestNewRejects(t *testing.T) {
	f := newFake(0.01)
	f.design = 0
	if _, err := New(f, Options{}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatalf("no design FPR: err = %v", err)
	}
	if _, err := New(nil, Options{DesignFPR: 0.01}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatalf("nil filter: err = %v", err)
	}
	if _, err := New(f, Options{DesignFPR: 1}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatalf("design 1: err = %v", err)
	}
}

func TestAdderForwardsAndStats(t *testing.T) {
	f := newFake(0.01)
	a, err := NewAdder(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.AddString("x") || a.AddString("x") || !a.Add([]byte("y")) {
		t.Fatal("Add results not forwarded")
	}
	if a.Adds() != 3 || a.Len() != 2 || a.Cap() != 1000 || !a.ContainsString("x") {
		t.Fatalf("adds=%d len=%d cap=%d", a.Adds(), a.Len(), a.Cap())
	}
	s := a.Stats()
	names := []string{}
	for _, e := range s.Extra {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); got != "queries,maybes,false_positives,false_negatives,measured_fpr,alert" {
		t.Fatalf("Extra = %s", got)
	}
	if s.Extra[0].Value != 1 || s.Extra[1].Value != 1 {
		t.Fatalf("queries/maybes = %v/%v, want 1/1", s.Extra[0].Value, s.Extra[1].Value)
	}
}

// TestConcurrent counts exactly under concurrent queries and reports; run
// with -race.
func TestConcurrent(t *testing.T) {
	f := newFake(0.05)
	m, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const workers, per = 8, 50_000
	var wg sync.WaitGroup
	fps := make([]uint64, workers)
	for w := range workers {
		wg.Go(func() {
			for _, h := range filtertest.Hashes(per, uint64(100+w)) {
				if m.ContainsHash(h) {
					m.ReportFalsePositive()
					fps[w]++
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			_ = m.Report()
		}
	})
	wg.Wait()
	r := m.Report()
	var want uint64
	for _, n := range fps {
		want += n
	}
	if r.Queries != workers*per || r.FalsePositives != want || r.Maybes != want {
		t.Fatalf("queries=%d fp=%d maybes=%d, want %d, %d, %d", r.Queries, r.FalsePositives, r.Maybes, workers*per, want, want)
	}
}

func TestZeroAllocs(t *testing.T) {
	m, err := New(newFake(0.01), Options{})
	if err != nil {
		t.Fatal(err)
	}
	filtertest.ZeroAllocs(t, "ContainsHash", func() { m.ContainsHash(12345) })
	filtertest.ZeroAllocs(t, "Observe", func() { m.Observe(true, false) })
}
