package xor

import (
	"math/bits"

	"github.com/bloomery/bloomery/internal/prefetch"
)

// peelLag is how many cells peelQueue keeps waiting: a cell is peeled only
// once peelLag later cells are queued, and the cells of its key were
// prefetched when it was queued. Measured at 10^7 keys, 32 and 128 do
// equally well.
const peelLag = 32

// queueLen returns the queue length peelQueue gets for an array of cells
// cells: a power of two of at least a quarter of the cells. The queue
// holds up to several hundred thousand cells at 10^7 keys (a random
// hypergraph near the peeling threshold ends in long cascades); should it
// still fill up, Build finishes with the depth-first peel.
func queueLen(cells int) int {
	return max(1<<12, 1<<bits.Len(uint(cells)>>2))
}

// peelQueue peels like peelPrefetch, in another order: a FIFO queue of
// cells, fed by a left-to-right scan and by the cells each peeled key
// leaves with one key. When a cell is queued, the three cells of the key
// it holds are prefetched; it is taken off the queue once peelLag more
// wait behind it (all of them at the end), by when they have arrived, and
// skipped if its key was meanwhile peeled through another cell. Depth
// first, the next key is known only once the previous key's cells have
// been read and updated, so at most a few misses overlap; from the queue,
// consecutive keys are independent. Any order that peels every key gives
// a valid filter (whether peeling succeeds does not depend on the order),
// so only the fingerprint values differ from peelPrefetch's.
//
// ring is the queue, a power of two of at least 2*peelLag cells. If it
// fills up (ok false) the walk stops with peeled keys recorded and the
// rest of the graph intact; the depth-first peel, whose scan finds every
// cell still holding one key, finishes it.
func peelQueue(count []uint8, xors, order []uint64, which []uint8, ring []uint32, blockLen uint64) (peeled int, ok bool) {
	xors = xors[:len(count)]
	mask, room := uint64(len(ring)-1), uint64(len(ring)-3)
	var head, tail uint64
	lag := uint64(peelLag)
	var pf [9]uint64
	for i, ci := range count {
		// After the inner loop at most lag cells wait, so there is
		// room for one more.
		if one(ci) == 1 {
			ring[tail&mask] = uint32(i)
			tail++
			p := positions(xors[i], blockLen)
			prefetch.Index8(&count[0], &p[0], 3)
			prefetch.Index64(&xors[0], &p[0], 3)
		}
		if i == len(count)-1 {
			lag = 0
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
			p := positions(x, blockLen)
			p0, p1, p2 := p[0], p[1], p[2]
			x0 := xors[p0] ^ x
			xors[p0] = x0
			c0 := count[p0] - 4
			count[p0] = c0
			x1 := xors[p1] ^ x
			xors[p1] = x1
			c1 := (count[p1] - 4) ^ 1
			count[p1] = c1
			x2 := xors[p2] ^ x
			xors[p2] = x2
			c2 := (count[p2] - 4) ^ 2
			count[p2] = c2
			// Queue the cells left with one key and prefetch the
			// cells of the keys they hold.
			k := 0
			if one(c0) == 1 {
				ring[tail&mask] = uint32(p0)
				tail++
				q := positions(x0, blockLen)
				pf[0], pf[1], pf[2] = q[0], q[1], q[2]
				k = 3
			}
			if one(c1) == 1 {
				ring[tail&mask] = uint32(p1)
				tail++
				q := positions(x1, blockLen)
				pf[k], pf[k+1], pf[k+2] = q[0], q[1], q[2]
				k += 3
			}
			if one(c2) == 1 {
				ring[tail&mask] = uint32(p2)
				tail++
				q := positions(x2, blockLen)
				pf[k], pf[k+1], pf[k+2] = q[0], q[1], q[2]
				k += 3
			}
			if k > 0 {
				prefetch.Index8(&count[0], &pf[0], k)
				prefetch.Index64(&xors[0], &pf[0], k)
			}
		}
	}
	return peeled, true
}
