// Command blockedprobe is a diagnostic for the blocked-Bloom comparison
// at large n: it builds Bloomery's Blocked filter and greatroar/blobloom
// on the keys benchreport uses, reports how much of each bit array is
// backed by transparent huge pages (from /proc/self/pagemap and
// /proc/kpageflags, which need root; else from /proc/self/smaps), and
// times single positive, single negative and batch queries the way
// bench.Run does, interleaved and repeated.
//
//	cd bench && go run ./cmd/blockedprobe -n 1e8 -reps 3
//	cd bench && go run ./cmd/blockedprobe -n 1e8 -mode harness   # build, measure, drop, like bench.Run
//	cd bench && go run ./cmd/blockedprobe -n 1e8 -spin ours-neg -secs 20   # one loop, for perf/pprof
//
// It is a measuring tool only: it never changes what benchreport reports.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/greatroar/blobloom"
	"golang.org/x/sys/unix"

	"github.com/bloomery/bloomery/bench"
	"github.com/bloomery/bloomery/bloom"
)

//lint:ignore U1000 written so that query results stay observable
var sink int

func main() {
	var (
		nf      = flag.Float64("n", 1e8, "keys")
		queries = flag.Int("queries", 1_000_000, "positive and negative queries per measurement")
		reps    = flag.Int("reps", 3, "repetitions")
		mode    = flag.String("mode", "both", "both: build both, then measure interleaved; harness: build, measure and drop each in turn, order rotated per rep (as bench.Run)")
		spin    = flag.String("spin", "", "after building, loop one of ours-pos, ours-neg, ours-batch, peer-pos, peer-neg for -secs (for perf)")
		secs    = flag.Float64("secs", 10, "duration of -spin")
		p       = flag.Float64("p", 0.01, "target FPR")
		peerTHP = flag.Bool("peer-thp", true, "in -mode both, also move blobloom's array onto huge pages (MADV_COLLAPSE), as happens to it in bench.Run when it reuses our advised range")
	)
	flag.Parse()
	// Timings are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
	// that time spent descheduled on a shared machine is not counted;
	// cache and TLB pollution by other processes still is.
	runtime.LockOSThread()
	n := int(*nf)
	keys, absent := bench.Uint64Keys(n, *queries, 1)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	pos := make([]uint64, min(*queries, n))
	for i := range pos {
		pos[i] = keys[rng.IntN(len(keys))]
	}
	neg := absent
	out := make([]bool, 1024)

	buildOurs := func() (*bloom.Blocked, []uint64) {
		f, err := bloom.NewBlockedForCapacity(n, *p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, k := range keys {
			f.AddHash(k)
		}
		return f, oursWords(f)
	}
	buildPeer := func() (*blobloom.Filter, []byte) {
		f := blobloom.NewOptimized(blobloom.Config{Capacity: uint64(n), FPRate: *p})
		for _, k := range keys {
			f.Add(k)
		}
		return f, peerBytes(f)
	}
	timeIt := func(name string, qs []uint64, fn func(uint64) bool) float64 {
		t0 := now()
		c := 0
		for _, k := range qs {
			if fn(k) {
				c++
			}
		}
		sink += c
		return float64(now()-t0) / float64(len(qs))
	}
	timeBatch := func(f *bloom.Blocked) float64 {
		t0 := now()
		c := 0
		for j := 0; j < len(neg); j += len(out) {
			chunk := neg[j:min(j+len(out), len(neg))]
			f.ContainsBatch(chunk, out)
			for _, v := range out[:len(chunk)] {
				if v {
					c++
				}
			}
		}
		sink += c
		return float64(now()-t0) / float64(len(neg))
	}

	type row struct{ pos, neg, batch float64 }
	var ours, peer []row
	switch *mode {
	case "both":
		of, ow := buildOurs()
		report("ours", unsafe.Pointer(&ow[0]), len(ow)*8)
		pf, pb := buildPeer()
		if start := uintptr(unsafe.Pointer(&pb[0])); *peerTHP && (start+uintptr(len(pb)))&^(2<<20-1) > (start+2<<20-1)&^(2<<20-1) {
			start := uintptr(unsafe.Pointer(&pb[0]))
			lo := (start+2<<20-1)&^(2<<20-1) - start
			hi := (start+uintptr(len(pb)))&^(2<<20-1) - start
			b := pb[lo:hi]
			fmt.Println("blobloom MADV_HUGEPAGE:", syscall.Madvise(b, syscall.MADV_HUGEPAGE), "MADV_COLLAPSE:", syscall.Madvise(b, 25))
		}
		report("blobloom", unsafe.Pointer(&pb[0]), len(pb))
		if *spin != "" {
			spinLoop(*spin, *secs, of, pf, pos, neg, out)
			return
		}
		pk := *(*int)(unsafe.Add(unsafe.Pointer(pf), 24))
		fmt.Printf("ours k=%d blocks=%d; blobloom k=%d (%d probes)\n", of.K(), of.Blocks(), pk, pk-1)
		rw := &raw{words: ow, blocks: of.Blocks(), k: of.K()}
		singles := []struct {
			name string
			fn   func(uint64) bool
		}{
			{"lib", of.ContainsHash}, {"blobloom", pf.Has},
			{"tight", rw.tight}, {"flat7", rw.flat7}, {"first2", rw.first2}, {"first3", rw.first3}, {"pairs", rw.pairs},
		}
		batches := []struct {
			name string
			fn   func([]uint64, []bool)
		}{
			{"lib-batch", of.ContainsBatch},
			{"raw-branchy", func(h []uint64, o []bool) { rw.batch(h, o, false) }},
			{"raw-flat", func(h []uint64, o []bool) { rw.batch(h, o, true) }},
			{"b2-flat", func(h []uint64, o []bool) { rw.batch2(h, o, false) }},
			{"b2-first2", func(h []uint64, o []bool) { rw.batch2(h, o, true) }},
			{"b3-8-16", func(h []uint64, o []bool) { rw.batch3(h, o, 8, 16) }},
			{"b3-8-24", func(h []uint64, o []bool) { rw.batch3(h, o, 8, 24) }},
			{"b3-8-40", func(h []uint64, o []bool) { rw.batch3(h, o, 8, 40) }},
			{"b3-16-32", func(h []uint64, o []bool) { rw.batch3(h, o, 16, 32) }},
			{"b3-16-48", func(h []uint64, o []bool) { rw.batch3(h, o, 16, 48) }},
			{"b3-4-28", func(h []uint64, o []bool) { rw.batch3(h, o, 4, 28) }},
		}
		for _, qs := range [][]uint64{pos, neg} {
			for _, k := range qs {
				want := of.ContainsHash(k)
				for _, v := range singles[2:] {
					if v.fn(k) != want {
						panic(v.name + " disagrees")
					}
				}
			}
			for _, b := range batches {
				b.fn(qs[:1000], out)
				for i, k := range qs[:1000] {
					if out[i] != of.ContainsHash(k) {
						panic(b.name + " disagrees")
					}
				}
			}
		}
		res := map[string][]float64{}
		for r := 0; r < *reps; r++ {
			line := fmt.Sprintf("rep %d:", r+1)
			for i := range singles {
				v := singles[(i+r)%len(singles)]
				pt, nt := timeIt("", pos, v.fn), timeIt("", neg, v.fn)
				res[v.name+" pos"] = append(res[v.name+" pos"], pt)
				res[v.name+" neg"] = append(res[v.name+" neg"], nt)
			}
			for i := range batches {
				b := batches[(i+r)%len(batches)]
				t0 := now()
				for j := 0; j < len(neg); j += len(out) {
					chunk := neg[j:min(j+len(out), len(neg))]
					b.fn(chunk, out)
				}
				res[b.name] = append(res[b.name], float64(now()-t0)/float64(len(neg)))
			}
			bp, bn := res["blobloom pos"][r], res["blobloom neg"][r]
			for _, v := range singles {
				line += fmt.Sprintf(" %s %.0f/%.0f (%.2f/%.2f)", v.name, res[v.name+" pos"][r], res[v.name+" neg"][r], bp/res[v.name+" pos"][r], bn/res[v.name+" neg"][r])
			}
			for _, b := range batches {
				line += fmt.Sprintf(" %s %.1f (%.2fx)", b.name, res[b.name][r], bn/res[b.name][r])
			}
			fmt.Println(line)
		}
		ratioMed := func(a, b string) float64 {
			xs := make([]float64, *reps)
			for i := range xs {
				xs[i] = res[b][i] / res[a][i]
			}
			return bench.Median(xs)
		}
		for _, v := range singles {
			fmt.Printf("median %-10s pos %6.1f neg %6.1f   vs blobloom: pos %.2fx neg %.2fx\n", v.name,
				bench.Median(res[v.name+" pos"]), bench.Median(res[v.name+" neg"]),
				ratioMed(v.name+" pos", "blobloom pos"), ratioMed(v.name+" neg", "blobloom neg"))
		}
		for _, b := range batches {
			fmt.Printf("median %-12s %6.1f ns/key   vs blobloom neg: %.2fx\n", b.name, bench.Median(res[b.name]), ratioMed(b.name, "blobloom neg"))
		}
		return
	case "harness":
		for r := 0; r < *reps; r++ {
			var o, q row
			for j := range 2 {
				runtime.GC()
				if (j+r)%2 == 0 {
					f, w := buildOurs()
					report(fmt.Sprintf("rep %d ours", r+1), unsafe.Pointer(&w[0]), len(w)*8)
					o.pos, o.neg, o.batch = timeIt("", pos, f.ContainsHash), timeIt("", neg, f.ContainsHash), timeBatch(f)
				} else {
					f, b := buildPeer()
					report(fmt.Sprintf("rep %d blobloom", r+1), unsafe.Pointer(&b[0]), len(b))
					q.pos, q.neg = timeIt("", pos, f.Has), timeIt("", neg, f.Has)
				}
			}
			ours, peer = append(ours, o), append(peer, q)
			fmt.Printf("rep %d: ours pos %.1f neg %.1f batch %.1f | blobloom pos %.1f neg %.1f | ratio pos %.2f neg %.2f batch-vs-peer-neg %.2f\n",
				r+1, o.pos, o.neg, o.batch, q.pos, q.neg, q.pos/o.pos, q.neg/o.neg, q.neg/o.batch)
		}
	default:
		fmt.Fprintln(os.Stderr, "blockedprobe: unknown -mode", *mode)
		os.Exit(2)
	}
	med := func(rs []row, f func(row) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return bench.Median(xs)
	}
	ratio := func(f func(o, q row) float64) float64 {
		xs := make([]float64, len(ours))
		for i := range ours {
			xs[i] = f(ours[i], peer[i])
		}
		return bench.Median(xs)
	}
	fmt.Printf("median: ours pos %.1f neg %.1f batch %.1f | blobloom pos %.1f neg %.1f | ratios pos %.2fx neg %.2fx batch %.2fx\n",
		med(ours, func(r row) float64 { return r.pos }), med(ours, func(r row) float64 { return r.neg }), med(ours, func(r row) float64 { return r.batch }),
		med(peer, func(r row) float64 { return r.pos }), med(peer, func(r row) float64 { return r.neg }),
		ratio(func(o, q row) float64 { return q.pos / o.pos }), ratio(func(o, q row) float64 { return q.neg / o.neg }), ratio(func(o, q row) float64 { return q.neg / o.batch }))
}

func spinLoop(which string, secs float64, of *bloom.Blocked, pf *blobloom.Filter, pos, neg []uint64, out []bool) {
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	total := 0
	c := 0
	t0 := time.Now()
	for time.Now().Before(deadline) {
		switch which {
		case "ours-pos":
			for _, k := range pos {
				if of.ContainsHash(k) {
					c++
				}
			}
		case "ours-neg":
			for _, k := range neg {
				if of.ContainsHash(k) {
					c++
				}
			}
		case "peer-pos":
			for _, k := range pos {
				if pf.Has(k) {
					c++
				}
			}
		case "peer-neg":
			for _, k := range neg {
				if pf.Has(k) {
					c++
				}
			}
		case "ours-batch":
			for j := 0; j < len(neg); j += len(out) {
				chunk := neg[j:min(j+len(out), len(neg))]
				of.ContainsBatch(chunk, out)
				if out[0] {
					c++
				}
			}
		default:
			fmt.Fprintln(os.Stderr, "blockedprobe: unknown -spin", which)
			os.Exit(2)
		}
		total += len(pos)
	}
	sink += c
	fmt.Printf("spin %s: %d queries, %.1f ns/query\n", which, total, float64(time.Since(t0).Nanoseconds())/float64(total))
}

// oursWords returns the bit array of f. Blocked does not export it; its
// layout is {count int64; words []uint64; ...}, checked against SizeBytes.
func oursWords(f *bloom.Blocked) []uint64 {
	w := *(*[]uint64)(unsafe.Add(unsafe.Pointer(f), 8))
	if len(w)*8 != f.SizeBytes() {
		panic("blockedprobe: Blocked layout changed")
	}
	return w
}

// peerBytes returns blobloom's block array ({b []block; k int}) as bytes.
func peerBytes(f *blobloom.Filter) []byte {
	type block [16]uint32
	b := *(*[]block)(unsafe.Pointer(f))
	if uint64(len(b))*512 != f.NumBits() {
		panic("blobloom layout changed")
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)*64)
}

// report prints the share of [p, p+size) on THP huge pages.
func report(name string, p unsafe.Pointer, size int) {
	lo := uintptr(p)
	hi := lo + uintptr(size)
	huge, present, total, err := thpPages(lo, hi)
	if err != nil {
		fmt.Printf("%s: array %#x-%#x (%d MiB): pagemap: %v\n", name, lo, hi, size>>20, err)
	} else {
		fmt.Printf("%s: array %#x-%#x (%d MiB): %d of %d 4K pages present, %d on THP (%.1f%%)\n",
			name, lo, hi, size>>20, present, total, huge, 100*float64(huge)/float64(total))
	}
	smapsReport(lo, hi)
}

// thpPages counts the 4 KiB pages of [lo, hi) that are present and that
// belong to a transparent huge page (KPF_THP, bit 22 of kpageflags).
func thpPages(lo, hi uintptr) (huge, present, total int, err error) {
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return
	}
	defer pm.Close()
	kf, err := os.Open("/proc/kpageflags")
	if err != nil {
		return
	}
	defer kf.Close()
	first := lo &^ 4095
	npages := int((hi - first + 4095) / 4096)
	buf := make([]byte, 8*npages)
	if _, err = pm.ReadAt(buf, int64(first/4096)*8); err != nil {
		return
	}
	var fb [8]byte
	for i := range npages {
		e := binary.LittleEndian.Uint64(buf[8*i:])
		total++
		if e>>63 == 0 {
			continue
		}
		present++
		pfn := e & (1<<55 - 1)
		if pfn == 0 {
			err = fmt.Errorf("PFNs hidden (not root?)")
			return
		}
		if _, err = kf.ReadAt(fb[:], int64(pfn)*8); err != nil {
			return
		}
		if binary.LittleEndian.Uint64(fb[:])>>22&1 != 0 {
			huge++
		}
	}
	return
}

// smapsReport prints the mappings of /proc/self/smaps that overlap
// [lo, hi): their range, overlap, Rss, AnonHugePages and THPeligible.
func smapsReport(lo, hi uintptr) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		fmt.Println("  smaps:", err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var cur string
	in := false
	fields := map[string]string{}
	var lines []string
	flush := func() {
		if in {
			lines = append(lines, fmt.Sprintf("  vma %s Rss %s AnonHuge %s THPeligible %s VmFlags %s", cur, fields["Rss:"], fields["AnonHugePages:"], fields["THPeligible:"], fields["VmFlags:"]))
		}
	}
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if a, b, ok := strings.Cut(fs[0], "-"); ok && !strings.HasSuffix(fs[0], ":") {
			flush()
			x, _ := strconv.ParseUint(a, 16, 64)
			y, _ := strconv.ParseUint(b, 16, 64)
			in = uintptr(y) > lo && uintptr(x) < hi
			cur = fmt.Sprintf("%s (%d MiB)", fs[0], (y-x)>>20)
			fields = map[string]string{}
			continue
		}
		if len(fs) >= 2 {
			fields[fs[0]] = strings.Join(fs[1:], " ")
		}
	}
	flush()
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}

// now returns this thread's CPU time in nanoseconds.
func now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}
