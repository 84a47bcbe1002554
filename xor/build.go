package xor

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/prefetch"
)

// MaxAttempts bounds the construction seeds Build tries before it returns
// an error wrapping bloomery.ErrBuildFailed. One attempt at the published
// size fails with probability of a few percent (more for tiny sets), so
// 100 failures in a row do not happen by chance.
const MaxAttempts = 100

// MaxKeys is the largest key set Build accepts: cell indices are 32-bit
// during construction.
const MaxKeys = 1 << 31

// Params configures Build.
type Params struct {
	// Hasher is the hasher the key hashes were made with (the zero value
	// is XXH3 with seed 0). Build records it; Contains and BuildKeys use
	// it.
	Hasher hashing.Hasher
	// Seed starts the sequence of construction seeds. Construction is
	// deterministic: the same hashes and Params give the same bytes.
	Seed uint64
}

// Build builds a filter from key hashes made with p.Hasher. Duplicate
// hashes are allowed and removed; hashes is not modified. It returns an
// error wrapping bloomery.ErrInvalidParams for more than MaxKeys hashes,
// and bloomery.ErrBuildFailed if MaxAttempts seeds all fail. It allocates
// about 25 bytes of scratch per key (about 22 from 2^20 cells, where it
// peels with a queue instead of a stack); use a Builder to reuse them.
func Build(hashes []uint64, p Params) (*Filter, error) {
	var b Builder
	return b.Build(hashes, p)
}

// BuildKeys hashes keys with p.Hasher and builds a filter from them.
func BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	var b Builder
	return b.BuildKeys(keys, p)
}

// Builder builds filters and keeps its scratch buffers between builds. The
// zero value is ready to use. A built Filter owns its array and never
// aliases the Builder, which may be reused right away; Reset releases the
// buffers. A Builder must not be used by more than one goroutine at a
// time.
type Builder struct {
	hashes []uint64 // BuildKeys: the keys' hashes
	keys   []uint64 // the input, sorted and deduplicated (after a failure)
	order  []uint64 // mixed hashes sorted by first position; then the peel order
	which  []uint8  // peel order: which position (0..2) each key was peeled from
	count  []uint8  // per cell: 4*keys | XOR of the keys' position indices
	xors   []uint64 // per cell: XOR of the mixed hashes of its keys
	stack  []uint32 // depth-first peel: cells holding exactly one key
	ring   []uint32 // queue peel (large arrays): cells holding one key
	starts []uint32 // counting sort: bucket offsets
}

// Reset releases the Builder's buffers.
func (b *Builder) Reset() { *b = Builder{} }

// BuildKeys hashes keys with p.Hasher (into a buffer the Builder keeps) and
// builds a filter from them.
func (b *Builder) BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	if uint64(len(keys)) > MaxKeys {
		return nil, fmt.Errorf("xor: %d keys exceed MaxKeys: %w", len(keys), bloomery.ErrInvalidParams)
	}
	b.hashes = grow(b.hashes, len(keys))
	p.Hasher.Sum64Batch(keys, b.hashes)
	return b.Build(b.hashes, p)
}

// Build builds a filter from key hashes, like the package-level Build,
// reusing the Builder's buffers. hashes is not modified.
func (b *Builder) Build(hashes []uint64, p Params) (*Filter, error) {
	return b.build(hashes, p, MaxAttempts)
}

func (b *Builder) build(hashes []uint64, p Params, attempts int) (*Filter, error) {
	if uint64(len(hashes)) > MaxKeys {
		return nil, fmt.Errorf("xor: %d keys exceed MaxKeys: %w", len(hashes), bloomery.ErrInvalidParams)
	}
	f := &Filter{hasher: p.Hasher}
	if len(hashes) == 0 {
		return f, nil
	}
	keys := hashes
	sm := hashing.Mix64(p.Seed ^ 0x5bd1e9955bd1e995)
	deduped := false
	for range attempts {
		sm += 0x9e3779b97f4a7c15
		seed := hashing.Mix64(sm)
		blockLen := uint64(Cells(len(keys)) / 3)
		if peeled, ok := b.try(keys, blockLen, seed); ok {
			f.seed = seed
			f.n = peeled
			f.blockLen = blockLen
			f.fps = b.assign(blockLen, peeled)
			return f, nil
		}
		if !deduped {
			// Duplicates can never be peeled; drop them once, then
			// retry on the distinct keys (sized for their number).
			deduped = true
			b.keys = grow(b.keys, len(hashes))
			copy(b.keys, hashes)
			slices.Sort(b.keys)
			b.keys = slices.Compact(b.keys)
			keys = b.keys
		}
	}
	return nil, fmt.Errorf("xor: no peelable seed for %d keys in %d attempts: %w", len(keys), attempts, bloomery.ErrBuildFailed)
}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// growScratch is growZero for the large per-cell arrays: fresh ones are
// placed on transparent huge pages where the platform allows (see
// adviseHugePages), because construction updates cells all over them.
func growScratch[E uint8 | uint64](s []E, n int) []E {
	if cap(s) < n {
		s = make([]E, n)
		adviseScratch(s)
		return s
	}
	s = s[:n]
	clear(s)
	return s
}

func growZero[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// try makes one construction attempt with seed; see the package
// documentation. On success b.order[:peeled] and b.which[:peeled] hold the
// peel order.
func (b *Builder) try(keys []uint64, blockLen, seed uint64) (int, bool) {
	n := len(keys)
	cells := int(3 * blockLen)
	b.order = grow(b.order, n)
	b.which = grow(b.which, n)
	b.count = growScratch(b.count, cells)
	b.xors = growScratch(b.xors, cells)
	b.starts = sortByFirst(keys, blockLen, seed, b.starts, b.order)
	pf := prefetch.Enabled && cells >= prefetchMinCells
	var dups int
	var ok bool
	if pf {
		dups, ok = addPrefetch(b.order, b.count, b.xors, blockLen)
	} else {
		dups, ok = add(b.order, b.count, b.xors, blockLen)
	}
	if !ok {
		return 0, false
	}
	ringLen := 0
	if pf {
		ringLen = queueLen(cells)
	}
	peeled := b.peel(blockLen, ringLen)
	return peeled, peeled+dups == n
}

// peel peels the graph in b.count and b.xors into b.order and b.which and
// returns the number of keys peeled: depth first (peel) if ringLen is 0,
// else in queue order (peelQueue, a queue of ringLen cells, a power of
// two of at least 2*peelLag) and, should the queue fill up, finished
// depth first with prefetching (peelPrefetch).
func (b *Builder) peel(blockLen uint64, ringLen int) int {
	cells := int(3 * blockLen)
	peeled := 0
	if ringLen > 0 {
		b.ring = grow(b.ring, ringLen)
		var done bool
		if peeled, done = peelQueue(b.count, b.xors, b.order, b.which, b.ring, blockLen); done {
			return peeled
		}
	}
	if cap(b.stack) < cells+3 {
		b.stack = make([]uint32, cells+3)
	}
	if ringLen > 0 {
		return peeled + peelPrefetch(b.count, b.xors, b.order[peeled:], b.which[peeled:], b.stack[:cells+3], blockLen)
	}
	return peel(b.count, b.xors, b.order, b.which, b.stack[:cells+3], blockLen)
}

// sortByFirst writes the mixed hashes of keys into order, stably sorted
// by their top bits (counting sort), which orders them by first position
// (multiply-shift is monotone in x): the updates of block 0 then sweep it
// in order and hit the cache, a third of all cell updates. It returns the
// bucket array for reuse.
func sortByFirst(keys []uint64, blockLen, seed uint64, starts []uint32, order []uint64) []uint32 {
	bbits := uint(max(0, min(16, bits.Len64(blockLen)-10)))
	starts = growZero(starts, 1<<bbits+1)
	shift := 64 - bbits
	bmask := uint64(1)<<bbits - 1
	for _, k := range keys {
		starts[mix(k, seed)>>shift&bmask]++
	}
	var sum uint32
	for i, c := range starts {
		starts[i] = sum
		sum += c
	}
	order = order[:len(keys)]
	for _, k := range keys {
		x := mix(k, seed)
		s := x >> shift & bmask
		order[starts[s]] = x
		starts[s]++
	}
	return starts
}

// addPrefetch is add for large arrays. The keys go in groups of
// buildGroup: before a group is added, the block 1 and 2 cells of the next
// group (random over the array; block 0 is swept in order) are prefetched,
// so that about 2*buildGroup misses overlap instead of the few the reorder
// buffer holds. Prefetching changes no result.
func addPrefetch(order []uint64, count []uint8, xors []uint64, blockLen uint64) (dups int, ok bool) {
	xors = xors[:len(count)]
	var idx [2 * buildGroup]uint64
	for base := 0; base < len(order); base += buildGroup {
		if next := order[min(base+buildGroup, len(order)):]; len(next) > 0 {
			next = next[:min(len(next), buildGroup)]
			for i, x := range next {
				p := positions(x, blockLen)
				idx[2*i], idx[2*i+1] = p[1], p[2]
			}
			prefetch.Index8(&count[0], &idx[0], 2*len(next))
			prefetch.Index64(&xors[0], &idx[0], 2*len(next))
		}
		d, ok := add(order[base:min(base+buildGroup, len(order))], count, xors, blockLen)
		if !ok {
			return 0, false
		}
		dups += d
	}
	return dups, true
}

// prefetchMinCells is the array size from which construction prefetches
// (addPrefetch, peelPrefetch, assign): about 9 MiB of per-cell scratch,
// well past the L2 cache. Below it the arrays are mostly cached and the
// prefetches cost more than they save. Measured in CPU time per build
// against the plain loops: 10^5 keys 50 % more, 4*10^5 the same, 10^6
// about 14 % less, 3*10^6 and 10^7 about 20 % less.
const prefetchMinCells = 1 << 20

// buildGroup is the number of keys (add, assign) or cells (peel's scan)
// whose cells construction prefetches ahead of use. Measured at 10^7 keys,
// 16 to 64 give the same gain (add about 35 % faster); 16 keeps the index
// buffers small.
const buildGroup = 16

// peelPrefetch is peel for large arrays, with the same result. The walk
// is a chain of dependent random reads (the next key is known only once
// the previous key's cells are read), so it is latency bound once the
// arrays outgrow the cache. Two kinds of prefetch shorten it without
// changing the order: while scanning, the cells of the keys alone in the
// next buildGroup cells; and when a cell is pushed, the cells of the key
// left in it, which the walk reads when it pops the cell. At 10^7 keys
// they make the peel about 20 % faster.
func peelPrefetch(count []uint8, xors, order []uint64, which []uint8, stack []uint32, blockLen uint64) int {
	xors = xors[:len(count)]
	peeled := 0
	var ahead [3 * buildGroup]uint64
	for base := 0; base < len(count); base += buildGroup {
		if nb := base + buildGroup; nb < len(count) {
			k := 0
			for j := nb; j < min(nb+buildGroup, len(count)); j++ {
				if count[j]&^3 == 4 {
					p := positions(xors[j], blockLen)
					ahead[k], ahead[k+1], ahead[k+2] = p[0], p[1], p[2]
					k += 3
				}
			}
			if k > 0 {
				prefetch.Index8(&count[0], &ahead[0], k)
				prefetch.Index64(&xors[0], &ahead[0], k)
			}
		}
		for i := base; i < min(base+buildGroup, len(count)); i++ {
			if count[i]&^3 != 4 {
				continue
			}
			peeled = peelFrom(uint32(i), count, xors, order, which, stack, blockLen, peeled)
		}
	}
	return peeled
}

// peelFrom peels depth-first from cell start (see peel) and returns the
// new number of keys peeled.
func peelFrom(start uint32, count []uint8, xors, order []uint64, which []uint8, stack []uint32, blockLen uint64, peeled int) int {
	var pushed [9]uint64
	c, top := start, 0
	for {
		if cc := count[c]; cc&^3 == 4 {
			x := xors[c]
			order[peeled] = x
			which[peeled] = cc & 3
			peeled++
			p := positions(x, blockLen)
			p0, p1, p2 := p[0], p[1], p[2]
			x0 := xors[p0] ^ x
			xors[p0] = x0
			c0 := count[p0] - 4
			count[p0] = c0
			stack[top] = uint32(p0)
			top += one(c0)
			x1 := xors[p1] ^ x
			xors[p1] = x1
			c1 := (count[p1] - 4) ^ 1
			count[p1] = c1
			stack[top] = uint32(p1)
			top += one(c1)
			x2 := xors[p2] ^ x
			xors[p2] = x2
			c2 := (count[p2] - 4) ^ 2
			count[p2] = c2
			stack[top] = uint32(p2)
			top += one(c2)
			{
				k := 0
				if one(c0) == 1 {
					q := positions(x0, blockLen)
					pushed[0], pushed[1], pushed[2] = q[0], q[1], q[2]
					k = 3
				}
				if one(c1) == 1 {
					q := positions(x1, blockLen)
					pushed[k], pushed[k+1], pushed[k+2] = q[0], q[1], q[2]
					k += 3
				}
				if one(c2) == 1 {
					q := positions(x2, blockLen)
					pushed[k], pushed[k+1], pushed[k+2] = q[0], q[1], q[2]
					k += 3
				}
				if k > 0 {
					prefetch.Index8(&count[0], &pushed[0], k)
					prefetch.Index64(&xors[0], &pushed[0], k)
				}
			}
		}
		if top == 0 {
			return peeled
		}
		top--
		c = stack[top]
	}
}

// add adds every key of order to its three cells (see Builder). A count
// byte holds 4 times the number of keys plus, in its low two bits, the XOR
// of the position indices (0, 1, 2) by which they reach the cell: with one
// key left, the low bits say which of its positions the cell is. A cell
// whose hash XOR returns to 0 with two keys holds two equal hashes: the
// duplicate is taken out again and counted in dups. More than 63 keys in a
// cell means duplicates too; the attempt fails (ok false) and Build
// deduplicates.
func add(order []uint64, count []uint8, xors []uint64, blockLen uint64) (dups int, ok bool) {
	xors = xors[:len(count)]
	for _, x := range order {
		p := positions(x, blockLen)
		p0, p1, p2 := p[0], p[1], p[2]
		c0, c1, c2 := count[p0]+4, count[p1]+4, count[p2]+4
		if c0 < 4 || c1 < 4 || c2 < 4 {
			return 0, false
		}
		count[p0], count[p1], count[p2] = c0, c1^1, c2^2
		x0, x1, x2 := xors[p0]^x, xors[p1]^x, xors[p2]^x
		xors[p0], xors[p1], xors[p2] = x0, x1, x2
		if (x0 == 0 && c0>>2 == 2) || (x1 == 0 && c1>>2 == 2) || (x2 == 0 && c2>>2 == 2) {
			count[p0], count[p1], count[p2] = c0-4, c1-4, c2-4
			xors[p0], xors[p1], xors[p2] = x0^x, x1^x, x2^x
			dups++
		}
	}
	return dups, true
}

// peel scans the cells; from every cell with one key, it peels depth-first
// through the cells this leaves with one key, recording each peeled key in
// order and the position index of its cell in which. Each cell is pushed
// at most once (a pushed cell has one key and counts only fall), so stack
// needs at most len(count) entries, plus 3 for the writes of the
// branch-free pushes (whether a cell drops to one key is unpredictable).
// It returns the number of keys peeled.
func peel(count []uint8, xors, order []uint64, which []uint8, stack []uint32, blockLen uint64) int {
	xors = xors[:len(count)]
	peeled := 0
	for i, ci := range count {
		if ci&^3 != 4 {
			continue
		}
		c, top := uint32(i), 0
		for {
			if cc := count[c]; cc&^3 == 4 {
				x := xors[c]
				order[peeled] = x
				which[peeled] = cc & 3
				peeled++
				p := positions(x, blockLen)
				p0, p1, p2 := p[0], p[1], p[2]
				xors[p0] ^= x
				c0 := count[p0] - 4
				count[p0] = c0
				stack[top] = uint32(p0)
				top += one(c0)
				xors[p1] ^= x
				c1 := (count[p1] - 4) ^ 1
				count[p1] = c1
				stack[top] = uint32(p1)
				top += one(c1)
				xors[p2] ^= x
				c2 := (count[p2] - 4) ^ 2
				count[p2] = c2
				stack[top] = uint32(p2)
				top += one(c2)
			}
			if top == 0 {
				break
			}
			top--
			c = stack[top]
		}
	}
	return peeled
}

// one returns 1 if the count byte c says one key, else 0, without a
// branch.
func one(c uint8) int {
	var r int
	if c&^3 == 4 {
		r = 1
	}
	return r
}

// assign fills a new fingerprint array in reverse peel order: each key's
// peeled cell is still zero and belongs to no key assigned later, so
// setting it to fingerprint XOR (all three cells) settles the key for good.
// On large arrays the cells of the next buildGroup keys are prefetched
// while a group is assigned.
func (b *Builder) assign(blockLen uint64, peeled int) []uint8 {
	fps := make([]uint8, 3*blockLen)
	adviseHugePages(fps)
	order, which := b.order[:peeled], b.which[:peeled]
	if !prefetch.Enabled || len(fps) < prefetchMinCells {
		for k := peeled - 1; k >= 0; k-- {
			x := order[k]
			p := positions(x, blockLen)
			fps[p[which[k]%3]] = fingerprint(x) ^ fps[p[0]] ^ fps[p[1]] ^ fps[p[2]]
		}
		collapseHugePages(fps)
		return fps
	}
	var idx [3 * buildGroup]uint64
	for end := peeled; end > 0; end -= buildGroup {
		if next := order[:max(end-buildGroup, 0)]; len(next) > 0 {
			next = next[max(len(next)-buildGroup, 0):]
			for i, x := range next {
				p := positions(x, blockLen)
				idx[3*i], idx[3*i+1], idx[3*i+2] = p[0], p[1], p[2]
			}
			prefetch.Index8(&fps[0], &idx[0], 3*len(next))
		}
		for k := end - 1; k >= max(end-buildGroup, 0); k-- {
			x := order[k]
			p := positions(x, blockLen)
			fps[p[which[k]%3]] = fingerprint(x) ^ fps[p[0]] ^ fps[p[1]] ^ fps[p[2]]
		}
	}
	collapseHugePages(fps)
	return fps
}
