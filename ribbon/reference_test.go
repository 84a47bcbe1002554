package ribbon

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// persisted holds, per filter, the solution words in the persisted order
// (AppendRaw), which refContains reads.
var persisted = map[*Filter][]uint64{}

func persistedWords(f *Filter) []uint64 {
	if w, ok := persisted[f]; ok {
		return w
	}
	raw := f.AppendRaw(nil)
	w := make([]uint64, len(raw)/8)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	persisted[f] = w
	return w
}

// refContains is the query of docs/format/ribbon.md written as plainly as
// possible on the persisted words: read solution bits one at a time and
// XOR those selected by the coefficients. It shares no code with
// ContainsHash but Remix and Reduce.
func refContains(f *Filter, h uint64) bool {
	if f.l.numBlocks == 0 {
		return false
	}
	data := persistedWords(f)
	L, U := uint64(f.l.lower), f.l.upperStart
	x := remixRef(h, uint64(f.seed)+1)
	numStarts := f.l.numBlocks*128 - 127
	s, _ := bits.Mul64(x, numStarts)
	lo := x*0xf1357aea2e62a9c5 | 1
	hi := (x ^ x>>31) * 0xd1b54a32d192ed03
	r := (x * 0xaef17502108ef2d9) >> 32
	cols := L
	if s/128 >= U {
		cols = L + 1
	}
	off := func(k uint64) uint64 { return 2 * (k*L + subFloor0(k, U)) }
	bit := func(slot, j uint64) uint64 { // solution bit of column j at slot
		k, o := slot/128, slot%128
		w := data[off(k)+2*j+o/64]
		return w >> (o % 64) & 1
	}
	for j := uint64(0); j < cols; j++ {
		v := uint64(0)
		for k := uint64(0); k < 128; k++ {
			var c uint64
			if k < 64 {
				c = lo >> k & 1
			} else {
				c = hi >> (k - 64) & 1
			}
			if c == 1 {
				v ^= bit(s+k, j)
			}
		}
		if v != r>>j&1 {
			return false
		}
	}
	return true
}

func subFloor0(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return 0
}

// remixRef is hashing.Remix as docs/format/ribbon.md spells it.
func remixRef(h, step uint64) uint64 {
	h ^= step * 0x9e3779b97f4a7c15
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	return h
}

// The fast query (shifted rows, interleaved words, early exit) agrees with
// the plain definition on members and non-members, across column counts,
// both sides of the lower/upper boundary, and a grown filter.
func TestReferenceQuery(t *testing.T) {
	var b Builder
	for _, c := range []struct {
		n   int
		fpr float64
	}{{1, 0.25}, {300, 0.01}, {5000, 0.3}, {20000, 0.01}, {20000, 1e-9}} {
		keys := filtertest.Hashes(c.n, 91)
		f := mustBuild(t, &b, keys, Params{FPR: c.fpr})
		probes := append(filtertest.Hashes(5000, 92), keys[:min(len(keys), 5000)]...)
		for _, h := range probes {
			if got, want := f.ContainsHash(h), refContains(f, h); got != want {
				t.Fatalf("n=%d fpr=%v: ContainsHash(%#x) = %v, reference %v", c.n, c.fpr, h, got, want)
			}
		}
	}
}
