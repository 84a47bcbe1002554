//go:build cuckootrace

package cuckoo

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

var (
	traceN   = flag.Int("trace.n", 1_000_000, "capacity (keys) for TestTraceLines")
	stopLoad = flag.Float64("trace.stop", DesignLoad, "load at which TestTraceLines stops filling (1: at the first victim)")
)

// TestTraceLines fills a 12-bit filter from empty and logs the distinct
// cache lines (and 4 KiB pages) each insert reads, averaged per load band:
// a memory-traffic measure that does not depend on how busy the machine
// is. Run with
//
//	go test -tags cuckootrace -run TestTraceLines -v ./cuckoo [-trace.n 10000000]
//
// At 10^6 keys (filled to 94%) this reported 1.14 lines per insert up to
// 50% load, 1.99 from 50% to 85% and 7.99 from 85% to 94%: 2.11 on
// average (2.36, with 2.37 and 9.0 in the upper bands, when relocate read
// all 4 candidate buckets before testing any).
func TestTraceLines(t *testing.T) {
	n := *traceN
	f := mustNew(t, Params{Capacity: n, FingerprintBits: 12})
	slots := float64(f.buckets * BucketSize)
	hs := filtertest.Hashes(2*n, 99)
	bands := []float64{0.5, 0.85, 0.94, 2}
	var out []string
	var prevIns, prevLines, prevPages uint64
	report := func(label string) {
		traceFlush()
		if di := trace.inserts - prevIns; di > 0 {
			out = append(out, fmt.Sprintf("%s: %.3f lines %.3f pages", label,
				float64(trace.lines-prevLines)/float64(di), float64(trace.pages-prevPages)/float64(di)))
		}
		prevIns, prevLines, prevPages = trace.inserts, trace.lines, trace.pages
	}
	traceReset()
	b, k := 0, 0
	for ; k < len(hs) && !f.Full() && float64(f.count) < *stopLoad*slots; k++ {
		if float64(f.count) >= bands[b]*slots {
			report(fmt.Sprintf("to %.2f", bands[b]))
			b++
		}
		if f.InsertHash(hs[k]) != nil {
			t.Fatal("insert failed before the victim slot was used")
		}
	}
	report(fmt.Sprintf("to %.4f", float64(f.count)/slots))
	traceStop()
	filtertest.NoFalseNegatives(t, "inserted", f.ContainsHash, hs[:k])
	t.Logf("n=%d, %d buckets, stopped at load %.4f (victim used: %v); %s; all: %.3f lines per insert",
		n, f.buckets, float64(f.count)/slots, f.Full(), strings.Join(out, "; "), float64(trace.lines)/float64(trace.inserts))
}
