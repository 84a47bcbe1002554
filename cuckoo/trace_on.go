//go:build cuckootrace

package cuckoo

// With -tags cuckootrace every bucket access records the 64-byte cache
// lines it reads, and each insert counts how many distinct lines it
// touched: a measure of memory traffic per insert that does not depend on
// the machine's load, unlike timings. Not safe for concurrent use.

// traceStats accumulates over all inserts since the last reset.
type traceStats struct {
	inserts uint64
	lines   uint64 // distinct cache lines per insert, summed
	pages   uint64 // distinct 4 KiB pages per insert, summed
	hist    [16]uint64
	cur     []uint64 // lines of the insert in progress
	on      bool     // recording (traceReset starts, traceStop ends)
}

var trace traceStats

func traceReset() { trace = traceStats{on: true} }

// traceStop adds the insert in progress and stops recording, so that
// queries made afterwards are not counted.
func traceStop() {
	traceFlush()
	trace.on = false
}

func traceInsert() {
	if !trace.on {
		return
	}
	traceFlush()
	trace.inserts++
}

// traceFlush adds the insert in progress to the totals.
func traceFlush() {
	if len(trace.cur) == 0 {
		return
	}
	n := uint64(len(trace.cur))
	trace.lines += n
	trace.hist[min(n, 15)]++
	pages := 0
	for i, l := range trace.cur {
		seen := false
		for _, k := range trace.cur[:i] {
			if k>>6 == l>>6 {
				seen = true
				break
			}
		}
		if !seen {
			pages++
		}
	}
	trace.pages += uint64(pages)
	trace.cur = trace.cur[:0]
}

func touch(off uint64) {
	if !trace.on {
		return
	}
	for _, l := range [2]uint64{off >> 6, (off + 7) >> 6} {
		seen := false
		for _, k := range trace.cur {
			if k == l {
				seen = true
				break
			}
		}
		if !seen {
			trace.cur = append(trace.cur, l)
		}
	}
}
