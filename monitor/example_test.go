package monitor_test

import (
	"fmt"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/monitor"
)

// A filter sized for 1000 keys that received 3000: both the measured rate
// (from the reported false positives) and the estimate from the fill are
// far above twice the design rate.
func Example() {
	f, _ := bloom.New(bloom.Params{Capacity: 1000, FPR: 0.01})
	m, _ := monitor.NewAdder(f, monitor.Options{})
	for i := range 3000 {
		m.AddString(fmt.Sprint("key-", i))
	}
	for i := range 10000 {
		if m.ContainsString(fmt.Sprint("other-", i)) {
			m.ReportFalsePositive() // the authoritative check found nothing
		}
	}
	r := m.Report()
	fmt.Printf("queries %d, maybes %d, reported false positives %d\n", r.Queries, r.Maybes, r.FalsePositives)
	fmt.Printf("measured FPR %.1f%%, estimated %.1f%%, design %.0f%%\n", 100*r.MeasuredFPR, 100*r.EstimatedFPR, 100*r.DesignFPR)
	fmt.Println("alert:", r.Alert)
	// Output:
	// queries 10000, maybes 4497, reported false positives 4497
	// measured FPR 45.0%, estimated 44.4%, design 1%
	// alert: true
}
