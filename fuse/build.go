package fuse

import (
	"fmt"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// MaxAttempts bounds the construction seeds Build tries before it gives up
// with an error wrapping bloomery.ErrBuildFailed. At the published sizes a
// single attempt succeeds with high probability (for large n almost
// always), so 100 failures in a row mean something other than bad luck.
const MaxAttempts = 100

// MaxKeys is the largest key set Build accepts: cell indices are 32-bit
// during construction.
const MaxKeys = 1 << 31

// Params configures Build.
type Params struct {
	// Arity is the number of cells per key: 3 (the default when zero) or
	// 4. Arity 4 needs about 4.5 % less space (8.6 instead of 9.0 bits
	// per key with 8-bit fingerprints) and reads one more cache line per
	// query.
	Arity int
	// Hasher is the hasher the key hashes were made with (the zero value
	// is XXH3 with seed 0). Build records it; Contains and BuildKeys use
	// it.
	Hasher hashing.Hasher
	// Seed starts the sequence of construction seeds. Construction is
	// deterministic: the same hashes and Params give the same bytes.
	Seed uint64
}

func (p Params) arity() (int, error) {
	switch p.Arity {
	case 0, 3:
		return 3, nil
	case 4:
		return 4, nil
	}
	return 0, fmt.Errorf("fuse: arity %d (want 3 or 4): %w", p.Arity, bloomery.ErrInvalidParams)
}

// Build builds a filter from key hashes made with p.Hasher. Duplicate
// hashes are allowed and removed; hashes is not modified. It returns an
// error wrapping bloomery.ErrInvalidParams for a bad p or more than MaxKeys
// hashes, and bloomery.ErrBuildFailed if MaxAttempts seeds all fail.
//
// Build allocates about 24 bytes of scratch per key (19 from about 1.9
// million keys, 8 more if it had to deduplicate); use a Builder to reuse
// them across builds.
func Build[T Fingerprint](hashes []uint64, p Params) (*Filter[T], error) {
	var b Builder[T]
	return b.Build(hashes, p)
}

// BuildKeys hashes keys with p.Hasher and builds a filter from them.
func BuildKeys[T Fingerprint](keys [][]byte, p Params) (*Filter[T], error) {
	var b Builder[T]
	return b.BuildKeys(keys, p)
}

// Builder builds filters and keeps its scratch buffers between builds, so
// that building many filters (one per SSTable, say) allocates only each
// result's fingerprint array. The zero value is ready to use.
//
// Ownership: a built Filter owns its array and never aliases the Builder,
// which may be reused (or dropped) right away. The Builder holds about 24
// bytes per key of the largest set it has built; Reset releases them.
//
// A Builder must not be used by more than one goroutine at a time.
type Builder[T Fingerprint] struct {
	hashes []uint64 // BuildKeys: the keys' hashes
	keys   []uint64 // the input, sorted and deduplicated (after a failure)
	order  []uint64 // mixed hashes bucketed by segment; then the peel order
	which  []uint8  // peel order: which of its positions each key was peeled from
	starts []uint32 // counting sort: bucket offsets
	count  []uint8  // per cell: 4*keys | XOR of the keys' position indices
	xors   []uint64 // per cell: XOR of the mixed hashes of its keys
	stack  []uint32 // depth-first peel: cells holding exactly one key
	ring   []uint32 // queue peel (large arrays): cells holding one key
}

// Reset releases the Builder's buffers.
func (b *Builder[T]) Reset() { *b = Builder[T]{} }

// BuildKeys hashes keys with p.Hasher (into a buffer the Builder keeps) and
// builds a filter from them.
func (b *Builder[T]) BuildKeys(keys [][]byte, p Params) (*Filter[T], error) {
	if uint64(len(keys)) > MaxKeys {
		return nil, fmt.Errorf("fuse: %d keys exceed MaxKeys: %w", len(keys), bloomery.ErrInvalidParams)
	}
	b.hashes = grow(b.hashes, len(keys))
	p.Hasher.Sum64Batch(keys, b.hashes)
	return b.Build(b.hashes, p)
}

// Build builds a filter from key hashes made with p.Hasher, like the
// package-level Build, reusing the Builder's buffers. hashes is not
// modified.
func (b *Builder[T]) Build(hashes []uint64, p Params) (*Filter[T], error) {
	return b.build(hashes, p, MaxAttempts)
}

func (b *Builder[T]) build(hashes []uint64, p Params, attempts int) (*Filter[T], error) {
	arity, err := p.arity()
	if err != nil {
		return nil, err
	}
	if uint64(len(hashes)) > MaxKeys {
		return nil, fmt.Errorf("fuse: %d keys exceed MaxKeys: %w", len(hashes), bloomery.ErrInvalidParams)
	}
	f := &Filter[T]{hasher: p.Hasher, geo: geometry{arity: arity}}
	if len(hashes) == 0 {
		return f, nil
	}
	keys := hashes
	geo := newGeometry(arity, len(keys))
	sm := hashing.Mix64(p.Seed ^ 0x5bd1e9955bd1e995) // start of the seed sequence
	deduped := false
	for range attempts {
		sm += 0x9e3779b97f4a7c15
		seed := hashing.Mix64(sm)
		peeled, ok := b.try(keys, geo, seed)
		if ok {
			f.seed = seed
			f.n = peeled
			f.geo = geo
			f.fps = b.assign(geo, peeled)
			f.probe = arity
			return f, nil
		}
		if !deduped {
			// A failure is far more often caused by duplicate keys
			// (which can never be peeled) than by bad luck, so sort
			// the keys once and drop them; the next attempts work on
			// distinct keys, sized for their number.
			deduped = true
			keys = b.dedup(hashes)
			if len(keys) != len(hashes) {
				geo = newGeometry(arity, len(keys))
			}
		}
		// Otherwise: bad luck. Distinct keys fail about one attempt in
		// a hundred at n >= 10^4 and at most about one in four for tiny
		// sets (4-wise, tens of keys), so MaxAttempts failures in a
		// row do not happen by chance. (Halving the segment length on
		// small sets, as some implementations do, made failures more
		// frequent with this derivation, so the size is always the
		// published one.)
	}
	return nil, fmt.Errorf("fuse: no peelable seed for %d keys in %d attempts: %w", len(keys), attempts, bloomery.ErrBuildFailed)
}

// dedup copies hashes into b.keys, sorted, without duplicates.
func (b *Builder[T]) dedup(hashes []uint64) []uint64 {
	b.keys = grow(b.keys, len(hashes))
	copy(b.keys, hashes)
	slices.Sort(b.keys)
	b.keys = slices.Compact(b.keys)
	return b.keys
}

// grow returns s resized to n, reallocated if its capacity is short.
func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// growScratch is grow (growZero if zero) for the large scratch arrays.
//
// They stay on ordinary pages. Construction reads and writes them within
// a window of a few segments, which the TLB covers, so huge pages buy
// nothing once they are mapped; and mapping them costs more: with the
// kernel's default THP defrag policy ("madvise"), a fault in an advised
// range compacts memory to find a 2 MiB page. On a fresh 10^7-key build
// (about 250 MB of scratch) on a busy machine, advising made faulting
// the scratch 2-4x slower (0.4-0.8 s instead of 0.2 s) and the build
// about 20 % slower in CPU time; on memory already mapped, it made no
// difference.
func growScratch[E uint8 | uint32 | uint64](s []E, n int, zero bool) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	if zero {
		clear(s)
	}
	return s
}

// growWritten is growScratch for the arrays every attempt writes all over
// (order, which, count, xors): a freshly allocated one has its pages
// mapped up front (populate). Not for the depth-first stack, of which a
// peel uses only a little.
func growWritten[E uint8 | uint32 | uint64](s []E, n int, zero bool) []E {
	if cap(s) < n {
		s = make([]E, n)
		populate(s)
		return s
	}
	return growScratch(s, n, zero)
}

// growZero is grow with all n elements zero (fresh memory is not cleared
// twice).
func growZero[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// try makes one construction attempt with seed. It returns the number of
// distinct keys peeled and whether every key was peeled or recognised as a
// duplicate; on success b.order[:peeled] and b.which[:peeled] hold the
// peel order for assign.
//
// The hypergraph has a vertex per cell and an edge (arity cells) per key.
// A cell touched by exactly one key can be given any value, so that key is
// "peeled": removed from the graph and pushed on the peel order; removing
// it may leave other cells with a single key. The attempt succeeds if the
// whole graph peels away.
func (b *Builder[T]) try(keys []uint64, g geometry, seed uint64) (int, bool) {
	n := len(keys)
	cells := int(g.cells)
	b.order = growWritten(b.order, n, false)
	b.which = growWritten(b.which, n, false)
	b.count = growWritten(b.count, cells, true)
	b.xors = growWritten(b.xors, cells, true)
	b.starts = growZero(b.starts, int(g.segCount))
	// 1. Sort the mixed hashes by the segment of their first position,
	// so that adding them sweeps the array from left to right within a
	// few segments' worth of cache. 2. Add every key to its cells. 3.
	// Peel. (See the functions for the details.)
	bySegment(keys, seed, g.segCount, b.starts, b.order)
	var dups int
	var ok bool
	switch {
	case g.cells >= aheadMinCells:
		dups, ok = addAhead(g.arity, b.order, b.count, b.xors, g.span, g.segLen)
	case g.arity == 3:
		dups, ok = add3(b.order, b.count, b.xors, g.span, g.segLen)
	default:
		dups, ok = add4(b.order, b.count, b.xors, g.span, g.segLen)
	}
	if !ok {
		return 0, false
	}
	ringLen := 0
	if g.cells >= fifoMinCells {
		// At most a few thousand cells wait at 10^7 keys (segments of
		// 2^15 cells); the queue holds two segments' worth.
		ringLen = max(minRing, 2*int(g.segLen))
	}
	peeled := b.peel(g, ringLen)
	return peeled, peeled+dups == n
}

// minRing is the smallest queue peel3Queue and peel4Queue get from peel.
const minRing = 1 << 12

// peel peels the graph in b.count and b.xors into b.order and b.which,
// depth first if ringLen is 0, else in queue order with a queue of
// ringLen cells (a power of two of at least 2*peelLag), finishing depth
// first should the queue fill up. It returns the number of keys peeled.
func (b *Builder[T]) peel(g geometry, ringLen int) int {
	cells := int(g.cells)
	peeled := 0
	if ringLen > 0 {
		b.ring = growScratch(b.ring, ringLen, false)
		var done bool
		if g.arity == 3 {
			peeled, done = peel3Queue(b.count, b.xors, b.order, b.which, b.ring, g.span, g.segLen)
		} else {
			peeled, done = peel4Queue(b.count, b.xors, b.order, b.which, b.ring, g.span, g.segLen)
		}
		if done {
			return peeled
		}
	}
	// Depth first, from scratch or to finish a queue peel that ran out
	// of room: the scan finds every cell still holding one key.
	b.stack = growScratch(b.stack, cells+4, false)
	if g.arity == 3 {
		return peeled + peel3(b.count, b.xors, b.order[peeled:], b.which[peeled:], b.stack[:cells+4], g.span, g.segLen)
	}
	return peeled + peel4(b.count, b.xors, b.order[peeled:], b.which[peeled:], b.stack[:cells+4], g.span, g.segLen)
}

// assign fills a new fingerprint array from the peel order. Going
// backwards, each key's peeled cell is still zero and no key assigned
// later touches it, so setting it to fingerprint XOR (the other cells)
// makes the key's cells XOR to its fingerprint for good.
func (b *Builder[T]) assign(g geometry, peeled int) []T {
	fps := make([]T, g.cells)
	adviseHugePages(fps)
	order, which := b.order[:peeled], b.which[:peeled]
	if g.arity == 3 {
		for k := peeled - 1; k >= 0; k-- {
			x := order[k]
			p := g.positions3(x)
			v := T(x^x>>32) ^ fps[p[0]] ^ fps[p[1]] ^ fps[p[2]]
			fps[p[which[k]]] = v
		}
		collapseHugePages(fps)
		return fps
	}
	for k := peeled - 1; k >= 0; k-- {
		x := order[k]
		p := g.positions4(x)
		v := T(x^x>>32) ^ fps[p[0]] ^ fps[p[1]] ^ fps[p[2]] ^ fps[p[3]]
		fps[p[which[k]&3]] = v
	}
	collapseHugePages(fps)
	return fps
}

// positions3 returns the cells of mixed hash x in a 3-wise array: h0 from
// the high bits by multiply-shift onto the first segCount segments, then
// one cell in each of the next two segments, at offsets taken from bits
// 18.. and 0.. of x (XOR within the segment keeps the cell inside it, as
// h0+i*segLen lies in the i-th segment after h0's).
func (g *geometry) positions3(x uint64) [3]uint64 {
	h0 := hashing.Reduce(x, g.span)
	s, m := g.segLen, g.segLen-1
	return [3]uint64{h0, (h0 + s) ^ (x >> 18 & m), (h0 + 2*s) ^ (x & m)}
}

// positions4 is positions3 for arity 4, with offsets from bits 0.., 16..
// and 32.. of x.
func (g *geometry) positions4(x uint64) [4]uint64 {
	h0 := hashing.Reduce(x, g.span)
	s, m := g.segLen, g.segLen-1
	return [4]uint64{h0, (h0 + s) ^ (x & m), (h0 + 2*s) ^ (x >> 16 & m), (h0 + 3*s) ^ (x >> 32 & m)}
}
