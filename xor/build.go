package xor

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
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
// about 25 bytes of scratch per key; use a Builder to reuse them.
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
	stack  []uint32 // cells holding exactly one key, to peel
	starts []uint32 // counting sort: bucket offsets
}

// Reset releases the Builder's buffers.
func (b *Builder) Reset() { *b = Builder{} }

// BuildKeys hashes keys with p.Hasher (into a buffer the Builder keeps) and
// builds a filter from them.
func (b *Builder) BuildKeys(keys [][]byte, p Params) (*Filter, error) {
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("xor: %d keys exceed MaxKeys: %w", len(keys), bloomery.ErrInvalidParams)
	}
	b.hashes = grow(b.hashes, len(keys))
	for i, k := range keys {
		b.hashes[i] = p.Hasher.Sum64(k)
	}
	return b.Build(b.hashes, p)
}

// Build builds a filter from key hashes, like the package-level Build,
// reusing the Builder's buffers. hashes is not modified.
func (b *Builder) Build(hashes []uint64, p Params) (*Filter, error) {
	return b.build(hashes, p, MaxAttempts)
}

func (b *Builder) build(hashes []uint64, p Params, attempts int) (*Filter, error) {
	if len(hashes) > MaxKeys {
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
	b.count = growZero(b.count, cells)
	b.xors = growZero(b.xors, cells)
	order, which, count, xors := b.order, b.which, b.count, b.xors

	// Counting sort of the mixed hashes by their top bits, which orders
	// them by first position (multiply-shift is monotone in x): the
	// updates of block 0 then sweep it in order and hit the cache, a
	// third of all cell updates.
	bbits := uint(max(0, min(16, bits.Len64(blockLen)-10)))
	b.starts = growZero(b.starts, 1<<bbits+1)
	starts := b.starts
	shift := 64 - bbits
	for _, k := range keys {
		starts[mix(k, seed)>>shift&(1<<bbits-1)]++
	}
	var sum uint32
	for i, c := range starts {
		starts[i] = sum
		sum += c
	}
	for _, k := range keys {
		x := mix(k, seed)
		s := x >> shift & (1<<bbits - 1)
		order[starts[s]] = x
		starts[s]++
	}

	// Add every key to its three cells. A count byte holds 4 times the
	// number of keys plus, in its low two bits, the XOR of the position
	// indices (0, 1, 2) by which they reach the cell: with one key left,
	// the low bits say which of its positions the cell is. A cell whose
	// hash XOR returns to 0 with two keys holds two equal hashes: the
	// duplicate is taken out again. More than 63 keys in a cell means
	// duplicates too; the attempt fails and Build deduplicates.
	dups := 0
	for _, x := range order {
		p := positions(x, blockLen)
		c0, c1, c2 := count[p[0]]+4, count[p[1]]+4, count[p[2]]+4
		if c0 < 4 || c1 < 4 || c2 < 4 {
			return 0, false
		}
		count[p[0]], count[p[1]], count[p[2]] = c0, c1^1, c2^2
		xors[p[0]] ^= x
		xors[p[1]] ^= x
		xors[p[2]] ^= x
		if (xors[p[0]] == 0 && c0>>2 == 2) || (xors[p[1]] == 0 && c1>>2 == 2) || (xors[p[2]] == 0 && c2>>2 == 2) {
			count[p[0]] -= 4
			count[p[1]] = (count[p[1]] - 4) ^ 1
			count[p[2]] = (count[p[2]] - 4) ^ 2
			xors[p[0]] ^= x
			xors[p[1]] ^= x
			xors[p[2]] ^= x
			dups++
		}
	}

	// Peel: scan the cells; from every cell with one key, peel depth-first
	// through the cells this leaves with one key. Each cell is pushed at
	// most once (a pushed cell has one key and counts only fall), so the
	// stack never holds more than cells entries. Pushes are branch-free
	// (write, then advance the top only if the cell qualifies), because
	// whether a cell drops to one key is unpredictable.
	if cap(b.stack) < cells+3 {
		b.stack = make([]uint32, cells+3)
	}
	stack := b.stack[:cells+3]
	peeled := 0
	for i := range cells {
		stack[0] = uint32(i)
		top := isOne(count[i])
		for top > 0 {
			top--
			c := stack[top]
			if count[c]>>2 != 1 {
				continue // its key was peeled through another cell
			}
			x := xors[c]
			order[peeled] = x
			which[peeled] = count[c] & 3
			peeled++
			for j, q := range positions(x, blockLen) {
				xors[q] ^= x
				cq := (count[q] - 4) ^ uint8(j)
				count[q] = cq
				stack[top] = uint32(q)
				top += isOne(cq)
			}
		}
	}
	return peeled, peeled+dups == n
}

// isOne returns 1 if the count byte c says one key, else 0, without a
// branch: (c>>2)^1 is 0 exactly then, and 0-1 wraps to set the top bit.
func isOne(c uint8) int { return int((uint64(c>>2^1) - 1) >> 63) }

// assign fills a new fingerprint array in reverse peel order: each key's
// peeled cell is still zero and belongs to no key assigned later, so
// setting it to fingerprint XOR (all three cells) settles the key for good.
func (b *Builder) assign(blockLen uint64, peeled int) []uint8 {
	fps := make([]uint8, 3*blockLen)
	adviseHugePages(fps)
	order, which := b.order[:peeled], b.which[:peeled]
	for k := peeled - 1; k >= 0; k-- {
		x := order[k]
		p := positions(x, blockLen)
		fps[p[which[k]%3]] = fingerprint(x) ^ fps[p[0]] ^ fps[p[1]] ^ fps[p[2]]
	}
	collapseHugePages(fps)
	return fps
}
