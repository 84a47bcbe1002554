package ribbon

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// Retry policy. A seed fails (an inconsistent equation) about 1 time in 20
// at the sizes of slotsFor, so seedsPerSize consecutive failures at one
// size mean the size itself is too tight (tiny or adversarial inputs): the
// builder then adds growStep of the slots and starts over with new seeds,
// up to maxGrowths times, before giving up with ErrBuildFailed. Keys are
// never dropped.
const (
	seedsPerSize = 16
	maxGrowths   = 8
	growStep     = 1.0 / 32
)

// MaxKeys bounds the number of distinct keys (slot indices and counts stay
// far from overflow; a filter this large needs about 60 GB to build).
const MaxKeys = 1 << 32

// band is the coefficient part of one row of the banding matrix: the 128
// coefficients starting at the row's slot (bit 0 of lo is that slot, and
// is 1 in every stored row; lo == 0 marks an empty slot). The row's
// result bits are kept apart (Builder.res), so that a row is 16 bytes,
// aligned, and never straddles two cache lines.
type band struct {
	lo, hi uint64
}

// Builder builds Ribbon filters and keeps its working memory (about 20
// bytes per slot of banding matrix and 8 bytes per key of grouped hashes)
// between builds, so building many filters does not churn the heap. The
// zero value is ready to use. A Builder is not safe for concurrent use;
// the filters it returns do not share its memory.
type Builder struct {
	rows   []band
	res    []uint32 // result bits of rows[i] (0 for an empty row)
	keys   []uint64
	hist   []uint32
	shift  uint // bucket of key x: x >> shift (see bucketKeys)
	hashes []uint64
	// Attempts is the number of banding attempts of the last build
	// (1 when the first seed succeeded).
	Attempts int
	// forceSlots, when set (by tests), replaces the initial slot count.
	forceSlots uint64
}

// Build builds a filter from key hashes made with p.Hasher. Duplicates are
// removed; hashes is not modified. It fails only for invalid parameters,
// more than MaxKeys distinct keys, or (with vanishing probability) when
// every seed and size in the retry policy fails, with an error wrapping
// bloomery.ErrBuildFailed.
func Build(hashes []uint64, p Params) (*Filter, error) {
	var b Builder
	return b.Build(hashes, p)
}

// BuildKeys hashes keys with p.Hasher and builds a filter from them.
func BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	var b Builder
	return b.BuildKeys(keys, p)
}

// BuildKeys hashes keys with p.Hasher (into a buffer the builder keeps)
// and builds a filter from them.
func (b *Builder) BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	if p.Hasher.Keyed() && !p.Hasher.HasKey() {
		return nil, fmt.Errorf("ribbon: build: %w", bloomery.ErrKeyRequired)
	}
	b.hashes = grow(b.hashes, len(keys))
	p.Hasher.Sum64Batch(keys, b.hashes)
	return b.Build(b.hashes, p)
}

// Build builds a filter from key hashes made with p.Hasher, reusing the
// builder's buffers. See the package-level Build.
//
// Cost: two passes over the hashes to group them by start (a counting
// sort on the top bits into buckets of about 1000 keys, see bucketKeys), one
// sequential banding pass (about seven 128-bit XOR-and-shift steps per
// key; it also finds duplicates, see band), and one back-substitution
// pass over the slots (per slot and column two ANDs and a popcount). A
// failed seed repeats all but the last; a first attempt that finds
// duplicates is repeated when they change the slot count. The returned filter's memory is
// its own; the builder's buffers are reused by the next build.
func (b *Builder) Build(hashes []uint64, p Params) (*Filter, error) {
	const ctx = "ribbon: build"
	fpr, err := p.targetFPR(ctx)
	if err != nil {
		return nil, err
	}
	b.Attempts = 0
	f := &Filter{target: fpr, hasher: p.Hasher}
	if len(hashes) == 0 {
		f.l.lower, _ = columnsFor(fpr)
		return f, nil
	}
	var l layout
	// n is the number of distinct keys once exact is set. Until then it
	// is len(hashes): duplicates are rare, and banding notices them
	// (see band), so the first attempt usually settles the count without
	// a pass of its own. Once duplicates are known to exist (dups), every
	// attempt removes them before banding.
	n, exact, dups := len(hashes), false, false
	var seed uint32
	slots, tried := uint64(0), uint64(0)
	for growth := 0; growth <= maxGrowths; growth++ {
		for i := 0; i < seedsPerSize; i++ {
			seed = uint32(growth*seedsPerSize + i)
			b.Attempts++
			b.bucketKeys(hashes, seed)
			if dups || (!exact && uint64(n) > MaxKeys) {
				n, exact = b.dedupe(), true
				dups = n < len(hashes)
			}
			if uint64(n) > MaxKeys {
				return nil, fmt.Errorf("%s: %d distinct keys, more than %d: %w", ctx, n, uint64(MaxKeys), bloomery.ErrInvalidParams)
			}
			if slots == 0 || !exact {
				slots = slotsFor(n)
				if b.forceSlots != 0 {
					slots = b.forceSlots
				}
			}
			l = newLayout(slots, fpr)
			tried = slots
			ok, copies := b.band(l, !exact)
			if !exact {
				// The count is exact after the first attempt: banding
				// shows that the keys are distinct (the usual case);
				// otherwise (a copy found, which stops banding, or a
				// failure) a pass of its own removes duplicates and
				// counts. Slots follow the exact count, and the
				// attempt is repeated (same seed) when banding stopped
				// early or the slots change.
				exact = true
				if !ok || copies {
					n = b.dedupe()
					dups = n < len(hashes)
					s := slotsFor(n)
					if b.forceSlots != 0 {
						s = slots
					}
					if copies || s != slots {
						slots = s
						l = newLayout(slots, fpr)
						tried = slots
						ok, _ = b.band(l, false)
					}
				}
			}
			if ok {
				f.l, f.n, f.seed = l, n, seed
				f.data = newSolution(l.words())
				b.backSubstitute(l, f.data)
				toQuarterMajor(&l, f.data)
				collapseHugePages(f.data)
				f.setKernel()
				return f, nil
			}
		}
		slots += (uint64(float64(slots)*growStep) + 127) / 128 * 128
	}
	return nil, fmt.Errorf("%s: %d keys: no solution in %d attempts up to %d slots: %w", ctx, n, b.Attempts, tried, bloomery.ErrBuildFailed)
}

// Bucket sizing of bucketKeys: at least about 2^bucketKeyBits keys per
// bucket and at most 2^maxBucketBits buckets. Few buckets make the
// scatter cheap (the histogram stays in L1 and the scatter writes to few
// places at once); big buckets cost banding little, as long as the rows
// a bucket's keys touch (about 20 bytes per key) stay in L2. Measured at
// 10^6 and 10^7 keys (thread CPU time, base = 16-key buckets with an
// insertion sort): 64-key buckets 0.51-0.59x, 256 0.46-0.47x, 1024
// 0.39-0.47x, 4096 0.39-0.46x.
const (
	bucketKeyBits = 10
	maxBucketBits = 13
)

// bucketKeys fills b.keys with the remixed hashes for seed (duplicates
// included), grouped by their top bits into buckets (see bucketKeyBits)
// in ascending bucket order, by one counting sort. Ascending remixed hash
// means ascending start (start = Reduce(x, numStarts) is monotone in x),
// so banding walks the matrix front to back and the rows that the keys of
// one bucket touch stay in the cache; the order inside a bucket does not
// matter (see band). Equal keys share a bucket. Afterwards b.hist[k] is
// the end of bucket k in b.keys.
func (b *Builder) bucketKeys(hashes []uint64, seed uint32) {
	n := len(hashes)
	b.keys = grow(b.keys, n)
	keys := b.keys[:n]
	bb := max(0, min(bits.Len(uint(n))-bucketKeyBits, maxBucketBits))
	shift := uint(64 - bb) // 64 when bb == 0: x >> 64 is 0 in Go
	b.shift = shift
	b.hist = grow32(b.hist, 1<<bb+1)
	hist := b.hist[:1<<bb+1]
	clear(hist)
	for _, h := range hashes {
		hist[remix(h, seed)>>shift+1]++
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	for _, h := range hashes {
		x := remix(h, seed)
		bk := x >> shift
		keys[hist[bk]] = x
		hist[bk]++
	}
}

// dedupe removes duplicate keys from b.keys (after bucketKeys), sorting
// each bucket in place (the order inside a bucket changes nothing the
// build depends on) and closing the gaps, updates b.hist to the new
// bucket ends, and returns the number of distinct keys.
func (b *Builder) dedupe() int {
	keys := b.keys
	w := 0
	start := uint32(0)
	for bk, end := range b.hist[:len(b.hist)-1] {
		bucket := keys[start:end]
		slices.Sort(bucket)
		for i, x := range bucket {
			if i == 0 || x != bucket[i-1] {
				keys[w] = x
				w++
			}
		}
		start = end
		b.hist[bk] = uint32(w)
	}
	b.hist[len(b.hist)-1] = uint32(w)
	b.keys = keys[:w]
	return w
}

// band adds every key's equation to an empty banding matrix of the
// layout's slots by on-the-fly Gaussian elimination and reports whether
// the system stayed consistent. The invariant: every stored row has its
// leading 1 at bit 0 (its own slot), so the stored rows form an
// upper-triangular matrix with a unit diagonal wherever a row exists.
//
// Adding an equation (s, c, r): if slot s is empty the row is stored
// there. Otherwise subtracting (XOR) the stored row clears bit 0 of c;
// c is shifted right by its trailing zeros, moving to the slot of its new
// leading 1, and the step repeats. If c vanishes the equation was a linear
// combination of stored rows: consistent (kept implicitly) when r vanished
// too, otherwise the system has no solution for this seed.
//
// The order in which equations are added does not change the outcome:
// the set of occupied slots is that of any echelon basis of the span of
// the equations (a position is a leading one iff some combination of the
// equations starts there), consistency is a property of the system, and
// back-substitution, with the free slots set to 0, then finds the one
// solution with zeros there, whatever the stored rows are. So the keys of
// a bucket need not be sorted.
//
// A duplicate key always ends as a consistent linear combination (its
// other copy is in the span), and so, rarely, does a distinct key. With
// count set, band looks for a copy of every key that ends so in its
// bucket, and stops at the first it finds (or when it gives up looking,
// after about four comparisons per key) with ok false and copies true:
// copies is false only when the keys are distinct (or banding failed
// before it found a copy).
func (b *Builder) band(l layout, count bool) (ok, copies bool) {
	slots := l.numBlocks * 128
	fresh := cap(b.rows) < int(slots) || cap(b.res) < int(slots)
	if fresh {
		b.rows = make([]band, slots)
		b.res = make([]uint32, slots)
	}
	b.rows, b.res = b.rows[:slots], b.res[:slots]
	z := bander{rows: b.rows, res: b.res, numStarts: l.numStarts, count: count, budget: 4*len(b.keys) + 1024}
	if fresh {
		z.limit = slots // a new array is zero already
	}
	z.mask = uint32(1)<<(l.lower+1) - 1
	if l.lower+1 >= 32 {
		z.mask = ^uint32(0)
	}
	// Rows are cleared just ahead of the bucket being banded rather than
	// in a pass of their own, so that the zeroed lines are still in the
	// cache when the bucket's keys first read them. Up to the bucket's
	// largest start plus 128 is enough: every key added so far has a
	// start <= T, the bucket's largest, so its coefficients lie below
	// T+128, and so do those of every stored row and every XOR of them;
	// an equation's leading 1, the only row it reads, stays below T+128.
	// (An equation can drift more than 128 slots past its own start, up
	// to T+127, because rows of keys that start after it in the same
	// bucket may already be stored.)
	start := uint32(0)
	for bk, end := range b.hist[:len(b.hist)-1] {
		if start == end {
			continue
		}
		// The largest start in this bucket is that of its largest
		// possible key, (bk+1)<<shift - 1; with shift 64 there is a
		// single bucket, the whole key range.
		top := ^uint64(0)
		if b.shift < 64 {
			top = uint64(bk+1)<<b.shift - 1
		}
		z.extend(hashing.Reduce(top, l.numStarts) + 128)
		if !z.bucket(b.keys[start:end]) {
			return false, z.copies
		}
		start = end
	}
	z.extend(slots)
	return true, false
}

// bander is the state of one banding pass (see band).
type bander struct {
	rows      []band
	res       []uint32 // same length as rows
	limit     uint64   // rows[:limit] are cleared
	numStarts uint64
	mask      uint32 // result bits in use
	count     bool   // look for copies of keys that vanish
	copies    bool   // found one (or gave up looking)
	budget    int    // comparisons left for looking
}

// extend clears rows (and their results) up to min(to, len(rows)).
func (z *bander) extend(to uint64) {
	to = min(to, uint64(len(z.rows)))
	if to > z.limit {
		clear(z.rows[z.limit:to])
		clear(z.res[z.limit:to])
		z.limit = to
	}
}

// bucketGeneric adds the equations of keys[from:], keys being one
// bucket's keys, one at a time. It reports false when the system became
// inconsistent.
func (z *bander) bucketGeneric(keys []uint64, from int) bool {
	rows, res, ns, mask := z.rows[:z.limit], z.res[:z.limit], z.numStarts, z.mask
	for k := from; k < len(keys); k++ {
		x := keys[k]
		i := hashing.Reduce(x, ns)
		lo, hi, r := row(x)
		r &= mask
		for {
			p := &rows[i]
			if p.lo == 0 {
				p.lo, p.hi, res[i] = lo, hi, r
				break
			}
			lo ^= p.lo
			hi ^= p.hi
			r ^= res[i]
			if lo == 0 {
				if hi == 0 {
					if !z.vanished(r, keys, k) {
						return false
					}
					break
				}
				lo, hi, i = hi, 0, i+64
			}
			// tz >= 1 unless the high word moved down (then hi is 0);
			// the masks tell the compiler tz < 64 and save its
			// oversized-shift code.
			tz := uint(bits.TrailingZeros64(lo)) & 63
			lo = lo>>tz | hi<<((64-tz)&63)
			hi >>= tz
			i += uint64(tz)
		}
	}
	return true
}

// finish completes the elimination of keys[k]'s equation, now (lo, hi,
// r) with its leading 1 at slot i, and reports false when it showed the
// system inconsistent.
func (z *bander) finish(i, lo, hi uint64, r uint32, keys []uint64, k int) bool {
	rows, res := z.rows[:z.limit], z.res[:z.limit]
	for {
		p := &rows[i]
		if p.lo == 0 {
			p.lo, p.hi, res[i] = lo, hi, r
			return true
		}
		lo ^= p.lo
		hi ^= p.hi
		r ^= res[i]
		if lo == 0 {
			if hi == 0 {
				return z.vanished(r, keys, k)
			}
			lo, hi, i = hi, 0, i+64
		}
		tz := uint(bits.TrailingZeros64(lo)) & 63
		lo = lo>>tz | hi<<((64-tz)&63)
		hi >>= tz
		i += uint64(tz)
	}
}

// vanished handles keys[k] (of a bucket) whose coefficients vanished with
// result bits r left: false (stop banding) when r != 0 (inconsistent)
// or, when counting, the key has a copy in the bucket (z.copies is then
// set), otherwise true.
func (z *bander) vanished(r uint32, keys []uint64, k int) bool {
	if r != 0 {
		return false
	}
	if z.count {
		z.budget -= len(keys)
		x := keys[k]
		if z.budget < 0 || slices.Contains(keys[:k], x) || slices.Contains(keys[k+1:], x) {
			z.copies = true
			return false
		}
	}
	return true
}

// backSubstituteGeneric solves the banded system from the last slot to the first
// and writes the solution into data in the half-major layout (see seg):
// block k holds, for each of its columns j, word j of its first half and
// word j of its second half, bit o of word h·cols+j = solution bit j of
// slot 128k+64h+o.
//
// Row i's equation is parity(c AND S[i..i+127]) = r with c's bit 0 = 1,
// so S[i] = r XOR parity(c's other bits AND S[i+1..i+127]). Those slots
// are already solved and lie in block i/128 above offset o = i mod 128
// and in the next block below o: the query's own shift-and-AND evaluates
// exactly that, and bit o of the word being built is still 0, so bit 0 of
// c needs no masking. Empty slots (free variables) get 0 (their
// precomputed words and result are 0). A column that exists only in upper
// blocks is computed only there: no key with a start in an upper block
// reaches a lower one.
//
// Work is organised per block: the 128 rows' shifted coefficients are
// computed once, then each column's two words are built bit by bit in
// registers, four columns at a time so that their independent dependency
// chains (AND, popcount, OR into the word) overlap.
func (b *Builder) backSubstituteGeneric(l layout, data []uint64) {
	// For rows in the upper half of a block (o >= 64) the row meets word
	// 1 of its block and words 0-1 of the next; in the lower half, words
	// 0-1 of its block and word 0 of the next.
	var pre [128][3]uint64
	var rs [128]uint32
	for blk := l.numBlocks; blk > 0; {
		blk--
		rows := b.rows[blk*128 : blk*128+128]
		res := b.res[blk*128 : blk*128+128]
		for o := range 128 {
			p := &rows[o]
			a0, a1, b0, b1 := shift128(p.lo, p.hi, uint(o))
			if o >= 64 {
				pre[o] = [3]uint64{a1, b0, b1}
			} else {
				pre[o] = [3]uint64{a0, a1, b0}
			}
			rs[o] = res[o]
		}
		off := l.offset(blk)
		cols := l.cols(blk)
		cur := data[off : off+2*uint64(cols)]
		var nxt []uint64
		ncols := 0
		if blk+1 < l.numBlocks {
			ncols = l.cols(blk + 1)
			nxt = data[off+2*uint64(cols) : off+2*uint64(cols+ncols)]
		}
		for j := 0; j < cols; j += 4 {
			var n0, n1 [4]uint64
			for k := 0; k < 4 && j+k < cols && nxt != nil; k++ {
				n0[k], n1[k] = nxt[j+k], nxt[ncols+j+k]
			}
			sh := uint(j)
			var h0, h1, h2, h3 uint64 // word 1 of columns j..j+3
			for o := 127; o >= 64; o-- {
				q := &pre[o]
				r := uint64(rs[o] >> sh)
				t := uint(o - 64)
				h0 |= ((uint64(bits.OnesCount64(h0&q[0]^n0[0]&q[1]^n1[0]&q[2])) ^ r) & 1) << t
				h1 |= ((uint64(bits.OnesCount64(h1&q[0]^n0[1]&q[1]^n1[1]&q[2])) ^ r>>1) & 1) << t
				h2 |= ((uint64(bits.OnesCount64(h2&q[0]^n0[2]&q[1]^n1[2]&q[2])) ^ r>>2) & 1) << t
				h3 |= ((uint64(bits.OnesCount64(h3&q[0]^n0[3]&q[1]^n1[3]&q[2])) ^ r>>3) & 1) << t
			}
			var l0, l1, l2, l3 uint64 // word 0 of columns j..j+3
			for o := 63; o >= 0; o-- {
				q := &pre[o]
				r := uint64(rs[o] >> sh)
				t := uint(o)
				l0 |= ((uint64(bits.OnesCount64(l0&q[0]^h0&q[1]^n0[0]&q[2])) ^ r) & 1) << t
				l1 |= ((uint64(bits.OnesCount64(l1&q[0]^h1&q[1]^n0[1]&q[2])) ^ r>>1) & 1) << t
				l2 |= ((uint64(bits.OnesCount64(l2&q[0]^h2&q[1]^n0[2]&q[2])) ^ r>>2) & 1) << t
				l3 |= ((uint64(bits.OnesCount64(l3&q[0]^h3&q[1]^n0[3]&q[2])) ^ r>>3) & 1) << t
			}
			w := [4][2]uint64{{l0, h0}, {l1, h1}, {l2, h2}, {l3, h3}}
			for k := 0; k < 4 && j+k < cols; k++ {
				cur[j+k], cur[cols+j+k] = w[k][0], w[k][1]
			}
		}
	}
}

func grow(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

func grow32(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}
