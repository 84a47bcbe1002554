package fuse

import (
	"encoding/binary"
	"math/bits"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/prefetch"
)

// The phases of one construction attempt (see Builder.try), as plain
// functions of the scratch slices: small bodies keep the loop state in
// registers. 3-wise and 4-wise variants are written out separately, with
// the position arithmetic of positions3 and positions4 inlined by hand
// (any difference would make the no-false-negative and golden tests
// fail). Below fifoMinCells the peel order they produce, and so the bytes
// Build writes, are the same as before the split; from there on the queue
// peel's order gives other, equally valid, fingerprint values.

// bySegment writes mix(k, seed) for every key into order, stably sorted by
// the segment of the key's first position: floor(x*segCount/2^64), which
// equals Reduce(x, span)>>segLog because span = segCount*segLen. starts
// must hold segCount zeros; it is left holding each bucket's end.
func bySegment(keys []uint64, seed, segCount uint64, starts []uint32, order []uint64) {
	starts = starts[:segCount]
	for _, k := range keys {
		starts[hashing.Reduce(mix(k, seed), segCount)]++
	}
	var sum uint32
	for i, c := range starts {
		starts[i] = sum
		sum += c
	}
	order = order[:len(keys)]
	for _, k := range keys {
		x := mix(k, seed)
		s := hashing.Reduce(x, segCount)
		order[starts[s]] = x
		starts[s]++
	}
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

// add3 adds every key of order (mixed hashes) to its three cells. A
// cell's count byte holds 4 times its number of keys plus, in its low two
// bits, the XOR of the position indices (0, 1, 2) by which those keys reach
// it: when one key is left, the low bits say which of its positions the
// cell is. xors holds the XOR of the cell's keys. The positions of a key
// lie in three different segments, so they are distinct.
//
// A key whose last cell's XOR returns to 0 with two keys there is equal to
// the other one (two distinct mixed hashes never XOR to 0): the duplicate
// is taken out again and counted in dups. Duplicates that slip through
// make the peel fail, and Build then deduplicates. It fails (ok false) if
// a cell would hold more than 63 keys, which only duplicates can cause.
func add3(order []uint64, count []uint8, xors []uint64, span, segLen uint64) (dups int, ok bool) {
	xors = xors[:len(count)]
	m, s2 := segLen-1, 2*segLen
	for _, x := range order {
		h0 := hashing.Reduce(x, span)
		h1 := (h0 + segLen) ^ (x >> 18 & m)
		h2 := (h0 + s2) ^ (x & m)
		c0, c1, c2 := count[h0]+4, count[h1]+4, count[h2]+4
		if c0 < 4 || c1 < 4 || c2 < 4 {
			return 0, false
		}
		count[h0], count[h1], count[h2] = c0, c1^1, c2^2
		xors[h0] ^= x
		xors[h1] ^= x
		v2 := xors[h2] ^ x
		xors[h2] = v2
		if v2 == 0 && c2>>2 == 2 {
			count[h0], count[h1], count[h2] = c0-4, c1-4, c2-4
			xors[h0] ^= x
			xors[h1] ^= x
			xors[h2] = x
			dups++
		}
	}
	return dups, true
}

// add4 is add3 for 4-wise arrays (position indices 0..3).
func add4(order []uint64, count []uint8, xors []uint64, span, segLen uint64) (dups int, ok bool) {
	xors = xors[:len(count)]
	m, s2, s3 := segLen-1, 2*segLen, 3*segLen
	for _, x := range order {
		h0 := hashing.Reduce(x, span)
		h1 := (h0 + segLen) ^ (x & m)
		h2 := (h0 + s2) ^ (x >> 16 & m)
		h3 := (h0 + s3) ^ (x >> 32 & m)
		c0, c1, c2, c3 := count[h0]+4, count[h1]+4, count[h2]+4, count[h3]+4
		if c0 < 4 || c1 < 4 || c2 < 4 || c3 < 4 {
			return 0, false
		}
		count[h0], count[h1], count[h2], count[h3] = c0, c1^1, c2^2, c3^3
		xors[h0] ^= x
		xors[h1] ^= x
		xors[h2] ^= x
		v3 := xors[h3] ^ x
		xors[h3] = v3
		if v3 == 0 && c3>>2 == 2 {
			count[h0], count[h1], count[h2], count[h3] = c0-4, c1-4, c2-4, c3-4
			xors[h0] ^= x
			xors[h1] ^= x
			xors[h2] ^= x
			xors[h3] = x
			dups++
		}
	}
	return dups, true
}

// addAhead is add3 (arity 3) or add4 for arrays of aheadMinCells or more,
// with the same result, plus a sequential prefetch of the cells arity
// segments ahead of the keys' first positions. The keys come sorted by
// the segment of their first position, so while those of segment s are
// added the cells updated lie in segments s to s+arity-1, at random
// offsets: the lines of the leading segment are touched for the first
// time since the arrays were cleared, each a miss to DRAM that the
// hardware prefetcher cannot predict. Reading segment s+arity in order
// meanwhile (a cursor that advances with the keys, 64 cells per step)
// brings it in before the random updates reach it. The lead was measured
// at 10^7 keys (3-wise): 3 segments made the add about 30 % faster, 2
// slower than none (the prefetches then compete with the updates of
// the same segment), 4 and 6 in between.
func addAhead(arity int, order []uint64, count []uint8, xors []uint64, span, segLen uint64) (dups int, ok bool) {
	n := uint64(len(order))
	cells := uint64(len(count))
	xors = xors[:cells]
	lead := uint64(arity) * segLen
	var idx [8]uint64
	next := lead // the next 64 cells to prefetch (segLen is a multiple of 64)
	for base := uint64(0); base < n; base += aheadGroup {
		end := min(base+aheadGroup, n)
		// The first positions of the keys before end lie about
		// end*span/n cells in (no overflow: n <= 2^31, span < 2^33).
		to := min(end*span/n+lead, cells)
		for ; next+64 <= to; next += 64 {
			for j := range idx {
				idx[j] = next + uint64(j)*8
			}
			prefetch.Index64(&xors[0], &idx[0], len(idx))
			prefetch.Index8(&count[0], &idx[0], 1)
		}
		var d int
		if arity == 3 {
			d, ok = add3(order[base:end], count, xors, span, segLen)
		} else {
			d, ok = add4(order[base:end], count, xors, span, segLen)
		}
		if !ok {
			return 0, false
		}
		dups += d
	}
	return dups, true
}

// aheadGroup is the number of keys addAhead adds between prefetch steps.
const aheadGroup = 64

// aheadMinCells is the array size from which Build adds with addAhead:
// about 2.3 MB of count and xors. Measured (CPU time of the add, same
// process, alternated): 3*10^5 keys (3.4*10^5 cells) 5.8-8.2 instead of
// 9.6-10.5 ns/key, 10^6 keys 9 instead of 14-15; at 10^5 keys the two
// were even.
const aheadMinCells = 1 << 18

// peel3 peels a 3-wise hypergraph: it scans the cells left to right and,
// from every cell with one key, peels depth-first through the cells this
// leaves with one key. A peeled key is removed from all its cells (its
// own cell drops to zero keys) and recorded in order and which (the
// position index of the cell it was peeled from). Each cell is pushed at
// most once (a pushed cell has one key and counts only fall), so stack
// needs no more than len(count) entries, plus 3 for the writes of the
// branch-free pushes; a popped cell whose key was meanwhile peeled through
// another cell is skipped. It returns the number of keys peeled.
func peel3(count []uint8, xors, order []uint64, which []uint8, stack []uint32, span, segLen uint64) int {
	xors = xors[:len(count)]
	m, s2 := segLen-1, 2*segLen
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
				h0 := hashing.Reduce(x, span)
				h1 := (h0 + segLen) ^ (x >> 18 & m)
				h2 := (h0 + s2) ^ (x & m)
				xors[h0] ^= x
				c0 := count[h0] - 4
				count[h0] = c0
				stack[top] = uint32(h0)
				top += one(c0)
				xors[h1] ^= x
				c1 := (count[h1] - 4) ^ 1
				count[h1] = c1
				stack[top] = uint32(h1)
				top += one(c1)
				xors[h2] ^= x
				c2 := (count[h2] - 4) ^ 2
				count[h2] = c2
				stack[top] = uint32(h2)
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

// peel4 is peel3 for 4-wise arrays.
func peel4(count []uint8, xors, order []uint64, which []uint8, stack []uint32, span, segLen uint64) int {
	xors = xors[:len(count)]
	m, s2, s3 := segLen-1, 2*segLen, 3*segLen
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
				h0 := hashing.Reduce(x, span)
				h1 := (h0 + segLen) ^ (x & m)
				h2 := (h0 + s2) ^ (x >> 16 & m)
				h3 := (h0 + s3) ^ (x >> 32 & m)
				xors[h0] ^= x
				c0 := count[h0] - 4
				count[h0] = c0
				stack[top] = uint32(h0)
				top += one(c0)
				xors[h1] ^= x
				c1 := (count[h1] - 4) ^ 1
				count[h1] = c1
				stack[top] = uint32(h1)
				top += one(c1)
				xors[h2] ^= x
				c2 := (count[h2] - 4) ^ 2
				count[h2] = c2
				stack[top] = uint32(h2)
				top += one(c2)
				xors[h3] ^= x
				c3 := (count[h3] - 4) ^ 3
				count[h3] = c3
				stack[top] = uint32(h3)
				top += one(c3)
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

// fifoMinCells is the array size from which construction peels in queue
// order (peel3Queue, peel4Queue) instead of depth first. In same-process
// phase timings (CPU time, reused buffers) the queue peeled 3*10^6 keys
// (3.4 M cells) about 19 % faster and 10^7 keys 0-16 % faster depending
// on the machine's load; whole fresh builds gained 3-7 %. At 10^6 keys
// (1.1 M cells) the two were even, so smaller arrays keep the depth-first
// walk, and with it the bytes earlier versions wrote.
const fifoMinCells = 1 << 21

// peelLag is how many cells the queue peel keeps waiting: a cell is peeled
// only once peelLag later cells are queued. The lag is what lets the
// core work on several keys at once: the cells of a queued cell's key
// were located when it was queued, so the loads of consecutive keys do
// not depend on each other. Measured at 10^7 keys, 4 to 32 do about
// equally well.
const peelLag = 8

// peel3Queue peels a 3-wise hypergraph like peel3, in another order: a
// FIFO queue of cells, fed by a left-to-right scan and by the cells each
// peeled key leaves with one key. A cell is taken off the queue once
// peelLag more are waiting behind it (all of them at the end), and skipped
// if its key was meanwhile peeled through another cell. Depth first, the
// next key to peel is known only once the previous key's cells have been
// read and updated, a chain of dependent cache misses on large arrays;
// from the queue, consecutive keys are independent and their misses
// overlap. Any order that peels every key gives a valid filter (whether
// peeling succeeds does not depend on the order), so only the fingerprint
// values differ from peel3's.
//
// ring is the queue, a power of two of at least 2*peelLag cells. A few
// thousand cells wait at a time at 10^7 keys; should the queue ever fill
// (ok false), the walk stops with peeled keys recorded and the rest of
// the graph intact, and the caller finishes it with peel3, which finds
// every cell still holding one key by its scan.
//
// Two things speed it up without changing the order. The scan reads the
// count bytes eight at a time and goes straight to the next cell holding
// one key (singles): cells it passes over would have been neither queued
// nor peeled from, and the queue is drained after every queued cell as
// before, so the bytes it tests are current. And it prefetches the cells
// arity segments ahead of it in order, 64 at a time: the keys peeled
// near the scan reach up to arity-1 segments ahead, cells last touched by
// the add and long evicted, and their first touches were misses to DRAM
// at random offsets. Measured at 10^7 keys, the peel took about 20 % less
// time (the scan alone about 10 % less on cached arrays).
func peel3Queue(count []uint8, xors, order []uint64, which []uint8, ring []uint32, span, segLen uint64) (peeled int, ok bool) {
	xors = xors[:len(count)]
	m, s2 := segLen-1, 2*segLen
	mask, room := uint64(len(ring)-1), uint64(len(ring)-3)
	var head, tail uint64
	lag := uint64(peelLag)
	lead := 3 * segLen
	var idx [8]uint64
	next := lead &^ 63 // the next 64 cells to prefetch
	last := len(count) - 1
	for i := 0; i <= last; i++ {
		for uint64(i)+lead >= next && next+64 <= uint64(len(count)) {
			for j := range idx {
				idx[j] = next + uint64(j)*8
			}
			prefetch.Index64(&xors[0], &idx[0], len(idx))
			prefetch.Index8(&count[0], &idx[0], 1)
			next += 64
		}
		// Queue cell i if it holds one key, skipping eight cells at a
		// time up to the last eight. After the inner loop at most lag
		// cells wait, so there is room for one more.
		if i+8 <= last {
			w := singles(binary.LittleEndian.Uint64(count[i:]))
			if w == 0 {
				i += 7
				continue
			}
			i += bits.TrailingZeros64(w) >> 3
			ring[tail&mask] = uint32(i)
			tail++
		} else {
			ring[tail&mask] = uint32(i)
			tail += uint64(one(count[i]))
			if i == last {
				lag = 0
			}
		}
		for tail-head > lag {
			if tail-head > room {
				return peeled, false
			}
			c := ring[head&mask]
			head++
			cc := count[c]
			if cc&^3 != 4 {
				continue
			}
			x := xors[c]
			order[peeled] = x
			which[peeled] = cc & 3
			peeled++
			h0 := hashing.Reduce(x, span)
			h1 := (h0 + segLen) ^ (x >> 18 & m)
			h2 := (h0 + s2) ^ (x & m)
			xors[h0] ^= x
			c0 := count[h0] - 4
			count[h0] = c0
			ring[tail&mask] = uint32(h0)
			tail += uint64(one(c0))
			xors[h1] ^= x
			c1 := (count[h1] - 4) ^ 1
			count[h1] = c1
			ring[tail&mask] = uint32(h1)
			tail += uint64(one(c1))
			xors[h2] ^= x
			c2 := (count[h2] - 4) ^ 2
			count[h2] = c2
			ring[tail&mask] = uint32(h2)
			tail += uint64(one(c2))
		}
	}
	return peeled, true
}

// peel4Queue is peel3Queue for 4-wise arrays; ring needs at least
// 2*peelLag cells.
func peel4Queue(count []uint8, xors, order []uint64, which []uint8, ring []uint32, span, segLen uint64) (peeled int, ok bool) {
	xors = xors[:len(count)]
	m, s2, s3 := segLen-1, 2*segLen, 3*segLen
	mask, room := uint64(len(ring)-1), uint64(len(ring)-4)
	var head, tail uint64
	lag := uint64(peelLag)
	lead := 4 * segLen
	var idx [8]uint64
	next := lead &^ 63 // the next 64 cells to prefetch
	last := len(count) - 1
	for i := 0; i <= last; i++ {
		for uint64(i)+lead >= next && next+64 <= uint64(len(count)) {
			for j := range idx {
				idx[j] = next + uint64(j)*8
			}
			prefetch.Index64(&xors[0], &idx[0], len(idx))
			prefetch.Index8(&count[0], &idx[0], 1)
			next += 64
		}
		if i+8 <= last {
			w := singles(binary.LittleEndian.Uint64(count[i:]))
			if w == 0 {
				i += 7
				continue
			}
			i += bits.TrailingZeros64(w) >> 3
			ring[tail&mask] = uint32(i)
			tail++
		} else {
			ring[tail&mask] = uint32(i)
			tail += uint64(one(count[i]))
			if i == last {
				lag = 0
			}
		}
		for tail-head > lag {
			if tail-head > room {
				return peeled, false
			}
			c := ring[head&mask]
			head++
			cc := count[c]
			if cc&^3 != 4 {
				continue
			}
			x := xors[c]
			order[peeled] = x
			which[peeled] = cc & 3
			peeled++
			h0 := hashing.Reduce(x, span)
			h1 := (h0 + segLen) ^ (x & m)
			h2 := (h0 + s2) ^ (x >> 16 & m)
			h3 := (h0 + s3) ^ (x >> 32 & m)
			xors[h0] ^= x
			c0 := count[h0] - 4
			count[h0] = c0
			ring[tail&mask] = uint32(h0)
			tail += uint64(one(c0))
			xors[h1] ^= x
			c1 := (count[h1] - 4) ^ 1
			count[h1] = c1
			ring[tail&mask] = uint32(h1)
			tail += uint64(one(c1))
			xors[h2] ^= x
			c2 := (count[h2] - 4) ^ 2
			count[h2] = c2
			ring[tail&mask] = uint32(h2)
			tail += uint64(one(c2))
			xors[h3] ^= x
			c3 := (count[h3] - 4) ^ 3
			count[h3] = c3
			ring[tail&mask] = uint32(h3)
			tail += uint64(one(c3))
		}
	}
	return peeled, true
}

// singles returns a word with bit 8j+7 set for each byte j of w (eight
// count bytes, little endian) that says one key (c&^3 == 4), and no other
// bits. With t the bytes XOR 4 after masking the low two bits, a byte
// says one key iff its t byte is zero; adding 0x7f to the low seven bits
// of a t byte carries into bit 7 iff they are not all zero, and OR-ing
// t's own bit 7 covers the rest, with no carry between bytes.
func singles(w uint64) uint64 {
	const low7, high = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	t := (w & 0xfcfcfcfcfcfcfcfc) ^ 0x0404040404040404
	return ^((t&low7 + low7) | t) & high
}
