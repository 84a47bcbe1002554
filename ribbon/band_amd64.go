//go:build !purego

package ribbon

import (
	"runtime"
	"unsafe"
)

// laneState is what bandLanes reads and writes (offsets in
// band_amd64.s).
type laneState struct {
	rows      uintptr // &rows[0]
	limit     uint64  // rows below it are cleared and may be read
	next      uintptr // in: first key to take; out: first key not taken
	end       uintptr // end of the keys
	numStarts uint64
	mask      uint64  // result bits in use
	lanes     [2]lane // out: the pending equations
	pending   uint64  // out: bit j set when lanes[j] is pending
	res       uintptr // &res[0]
}

// lane is one pending equation: (lo, hi, r) with its leading 1 at slot i,
// not yet applied to that slot, of the key at address key.
type lane struct {
	i, lo, hi, r uint64
	key          uintptr
}

// Layout of laneState that the assembly relies on.
const (
	_ = -uint(unsafe.Offsetof(laneState{}.lanes) ^ 48)
	_ = -uint(unsafe.Offsetof(laneState{}.pending) ^ 128)
	_ = -uint(unsafe.Offsetof(laneState{}.res) ^ 136)
	_ = -uint(unsafe.Sizeof(band{}) ^ 16)
	_ = -uint(unsafe.Sizeof(lane{}) ^ 40)
)

// bandLanes adds the equations of the keys from next to end (at least
// two) to the rows, two at a time in lanes A and B: their elimination
// steps alternate, so that the processor overlaps their chains of
// dependent operations (load the row at the leading 1, XOR, find the
// next leading 1), which bound banding's speed; a lane whose equation
// finds an empty slot stores it there and takes the next key. It stops
// and leaves to Go, as pending lanes, whatever is not the common case: a
// lane whose low coefficient word would vanish (its leading 1 moves to
// the high word, or the equation vanishes) or that reaches the cleared
// limit, and at the end of the keys the lane still working.
//
// Interleaving two eliminations changes nothing: stored rows never
// change, so it is the same as adding one of the two keys wholly before
// the other, and the order of the keys does not matter (see band).
//
//go:noescape
func bandLanes(z *laneState)

// useBandLanes selects bandLanes; tests turn it off to compare with the
// portable loop.
var useBandLanes = true

// bucket adds the equations of one bucket's keys (see bandLanes, and
// bucketGeneric for the portable loop). It reports false when the system
// became inconsistent.
func (z *bander) bucket(keys []uint64) bool {
	if len(keys) < 2 || !useBandLanes {
		return z.bucketGeneric(keys, 0)
	}
	rows, res := z.rows[:z.limit], z.res[:z.limit]
	base := uintptr(unsafe.Pointer(unsafe.SliceData(keys)))
	st := laneState{
		rows:      uintptr(unsafe.Pointer(unsafe.SliceData(rows))),
		res:       uintptr(unsafe.Pointer(unsafe.SliceData(res))),
		limit:     z.limit,
		next:      base,
		end:       base + 8*uintptr(len(keys)),
		numStarts: z.numStarts,
		mask:      uint64(z.mask),
	}
	ok := true
	for ok {
		st.pending = 0
		bandLanes(&st)
		for j := range st.lanes {
			if st.pending>>j&1 != 0 {
				p := &st.lanes[j]
				if !z.finish(p.i, p.lo, p.hi, uint32(p.r), keys, int((p.key-base)/8)) {
					ok = false
					break
				}
			}
		}
		next := int((st.next - base) / 8)
		if ok && len(keys)-next < 2 {
			ok = z.bucketGeneric(keys, next)
			break
		}
		st.next = base + 8*uintptr(next)
	}
	runtime.KeepAlive(keys)
	runtime.KeepAlive(rows)
	runtime.KeepAlive(res)
	return ok
}
