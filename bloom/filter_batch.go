package bloom

// Filter batch queries. A standard Bloom key's k probes land on k
// unrelated cache lines. A loop of ContainsHash calls overlaps the misses
// of consecutive keys only as far as the core's reorder window reaches,
// and an absent key's early exit, a branch the predictor often misses,
// throws away the loads issued past it. ContainsBatch on a large array
// runs a three-stage pipeline over chunks of filterChunk keys:
//
//  1. locate the first two probe words of every key of a chunk and
//     prefetch them (PREFETCHT0 retires at once, so they stay in flight
//     without holding up the reorder buffer);
//  2. filterAhead1-filterAhead2 chunks later, test those two probes
//     branch-free: a key with a clear bit is answered false (3 absent
//     keys in 4 at the design fill), the others survive, and the rest of
//     their probe words are located and prefetched;
//  3. filterAhead2 chunks later, test the survivors' other probes.
//
// An absent key so costs about two lines and a quarter of the other k-2,
// not all k: the misses in flight are the probes that decide. Measured
// (throwaway same-process runs on the Intel development VM, 2^20 keys in
// batches of 1024, 1% FPR, k = 7, medians of 7 passes, ns per key; this
// pipeline / the previous design, which prefetched all k words of the
// next 8 keys and called ContainsHash on each / a ContainsHash loop):
//
//	keys   array   absent         present
//	10^7   12 MB   29 / 40 / 35   47 / 34 / 24
//	3e7    36 MB   31 / 51 / 41   60 / 53 / 37
//	10^8   120 MB  43 / 81 / 69   72 / 70 / 62
//
// (chunks of 8 keys with stages 48 and 24 keys ahead; 16 and 32 keys a
// chunk, and shorter distances, measured slower.) To measure the
// pipeline against the loop: BLOOMERY_BENCH_N=100000000 go test -run '^$'
// -bench ContainsBatchPipeline ./bloom (at 10^8, absent keys 60-68
// against 82-93 ns, present 114-122 against 95-110, on a slower hour of
// the same VM; at 10^6 the pipeline is 1.4x slower on absent keys). The
// previous design now lost to the loop everywhere: since ContainsHash's
// probes are in assembly, a loop keeps more queries in the reorder
// window, and all-k prefetching spent the core's 16 line-fill buffers on
// lines no test read. The pipeline wins on absent keys, the workload batches mostly
// serve (an LSM lookup, BF.MEXISTS of mostly new items), but its extra
// pass costs present keys, and on arrays the cache can hold the loop is
// close on absent keys too; so it runs from filterBatchMinBytes, 64 MiB,
// where absent keys gain 1.6x and present ones lose about 15%.
const (
	filterChunk  = 8
	filterAhead1 = 6 // chunks between stage 1 and stage 3
	filterAhead2 = 3 // chunks between stage 2 and stage 3
	// pairRing and survRing hold the chunks between stages 1 and 2 and
	// between stages 2 and 3 (powers of two above the distances).
	pairRing = 4
	survRing = 4
	// filterBatchMaxK bounds k for the pipelined path (stage 2 records
	// up to filterChunk*(filterBatchMaxK-2) probes a chunk). Larger k (an
	// FPR below about 2^-16) and k = 1 take the plain loop.
	filterBatchMaxK = 16
)

// filterBatchMinBytes is the smallest array the pipeline runs on (see
// the measurements above). A variable so that tests can run the pipeline
// on smaller arrays.
var filterBatchMinBytes = 64 << 20

// The rings must hold every chunk between the stages that pass it on.
const (
	_ = uint(pairRing - (filterAhead1 - filterAhead2 + 1))
	_ = uint(survRing - (filterAhead2 + 1))
)

// firstPair is what stage 1 leaves for stage 2 about one key: the words
// of its first two probes, their bits, and its probe step.
type firstPair struct {
	w0, w1 uint64
	b0, b1 uint64 // bit positions in the words
	d      uint64
}

// batchPlan is the pipeline's state, on ContainsBatch's stack. For the
// keys of a chunk whose first two probes were set (survivors), stage 2
// leaves their indexes in the batch and the words and bits of their other
// probes, which stage 3 tests.
type batchPlan struct {
	pairs [pairRing][filterChunk]firstPair
	surv  [survRing][filterChunk]int32
	nsurv [survRing]int
	words [survRing][filterChunk * (filterBatchMaxK - 2)]uint64
	bits  [survRing][filterChunk * (filterBatchMaxK - 2)]uint8
	offs  [2 * filterChunk]uint64
}

// ContainsBatch sets out[i] = ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes).
//
// On arrays of at least 64 MiB (and 2 <= k <= 16) it runs the three-stage
// pipeline described above, so the misses of independent keys overlap
// and an absent key's misses are mostly the two probes that answer it;
// smaller arrays take a ContainsHash loop (see the measurements above).
// The answers are ContainsHash's in both cases. It does not allocate (the
// plan, about 6 KB, lives on the stack) and may run concurrently with
// other readers.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if f.k < 2 || f.k > filterBatchMaxK || len(f.words)*8 < filterBatchMinBytes || len(hashes) <= filterChunk {
		for i, h := range hashes {
			out[i] = f.ContainsHash(h)
		}
		return
	}
	var p batchPlan
	chunks := (len(hashes) + filterChunk - 1) / filterChunk
	for t := -filterAhead1; t < chunks; t++ {
		if c := t + filterAhead1; c < chunks {
			f.locatePairs(&p, hashes, c)
		}
		if c := t + filterAhead2; c >= 0 && c < chunks {
			f.testPairs(&p, hashes, out, c)
		}
		if t >= 0 {
			f.testRest(&p, out, t)
		}
	}
}

// chunkOf returns the bounds of chunk c of n keys.
func chunkOf(c, n int) (lo, hi int) {
	lo = c * filterChunk
	return lo, min(lo+filterChunk, n)
}

// locatePairs is stage 1 for chunk c: the first two probes of each key
// (see Filter, "Probes" and "Word and bit"), recorded and prefetched.
func (f *Filter) locatePairs(p *batchPlan, hashes []uint64, c int) {
	lo, hi := chunkOf(c, len(hashes))
	w, l := uint64(len(f.words)), f.layout
	ring := &p.pairs[c%pairRing]
	offs := p.offs[:0]
	for j, h := range hashes[lo:hi] {
		d := step(h, l)
		w0, b0 := probeAt(h, w, l)
		w1, b1 := probeAt(h+d, w, l)
		ring[j] = firstPair{w0: w0, w1: w1, b0: b0, b1: b1, d: d}
		offs = append(offs, w0, w1)
	}
	prefetchLines(f.words, offs, false)
}

// testPairs is stage 2 for chunk c: it answers false for the keys whose
// first two probes are not both set, and records and prefetches the
// other probes of the rest.
func (f *Filter) testPairs(p *batchPlan, hashes []uint64, out []bool, c int) {
	lo, hi := chunkOf(c, len(hashes))
	w, l := uint64(len(f.words)), f.layout
	words := f.words
	ring := &p.pairs[c%pairRing]
	surv := &p.surv[c%survRing]
	pw, pb := &p.words[c%survRing], &p.bits[c%survRing]
	n, r := 0, 0
	for j := range hi - lo {
		fp := &ring[j]
		if (words[fp.w0]>>fp.b0)&(words[fp.w1]>>fp.b1)&1 == 0 {
			out[lo+j] = false
			continue
		}
		surv[n] = int32(lo + j)
		n++
		g := hashes[lo+j] + 2*fp.d
		for range f.k - 2 {
			x, b := probeAt(g, w, l)
			pw[r], pb[r] = x, uint8(b)
			r++
			g += fp.d
		}
	}
	p.nsurv[c%survRing] = n
	prefetchLines(f.words, pw[:r], false)
}

// testRest is stage 3 for chunk c: the survivors' probes from the third
// on, stopping at the first clear bit.
func (f *Filter) testRest(p *batchPlan, out []bool, c int) {
	words := f.words
	pw, pb := &p.words[c%survRing], &p.bits[c%survRing]
	rest := f.k - 2
	r := 0
next:
	for _, i := range p.surv[c%survRing][:p.nsurv[c%survRing]] {
		ws, bs := pw[r:r+rest], pb[r:r+rest]
		r += rest
		for j, x := range ws {
			if words[x]>>(bs[j]&63)&1 == 0 {
				out[i] = false
				continue next
			}
		}
		out[i] = true
	}
}
