//go:build !purego

package ribbon

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveBacksubAsm says whether the CPU has POPCNT, which the assembly
// back-substitution uses.
var haveBacksubAsm = cpu.X86.HasPOPCNT

// backsubBlock4 back-substitutes the 128 rows of one block (rows[0..127],
// from the last to the first) for lanes 0-3 of a group of columns whose
// first column is col, updating the group's state st (see
// backSubstituteAsm).
//
//go:noescape
func backsubBlock4(rows *band, res *uint32, st *[8]uint64, col uint64)

// backsubBlock3 is backsubBlock4 for lanes 0-2 only.
//
//go:noescape
func backsubBlock3(rows *band, res *uint32, st *[8]uint64, col uint64)

// Layout of band that the assembly relies on.
const (
	_ = -uint(unsafe.Sizeof(band{}) ^ 16)
	_ = -uint(unsafe.Offsetof(band{}.hi) ^ 8)
)

// backSubstitute solves the banded system into data (see
// backSubstituteGeneric for the equations and the layout it writes),
// with the assembly kernel when the CPU has POPCNT.
func (b *Builder) backSubstitute(l layout, data []uint64) {
	if !haveBacksubAsm {
		b.backSubstituteGeneric(l, data)
		return
	}
	b.backSubstituteAsm(l, data)
}

// backSubstituteAsm is back-substitution as RocksDB's interleaved
// solver does it: every column keeps a 128-bit window of the solution,
// bit k holding slot i+k's solution bit while row i is solved. Stepping
// from row i+1 down to row i shifts the window left by one (slot i+128
// falls out: no row reaches that far) and sets bit 0 to
//
//	S[i] = r_i XOR parity(c_i AND window)
//
// (bit 0 of the window is still 0, so c_i's leading 1 needs no mask; an
// empty slot has c = r = 0 and gets 0). After the block's row 0 the low
// word of the window is the block's first half and the high word its
// second half, in the bit order of the solution (bit o = slot 64h+o),
// so nothing is shifted or transposed afterwards.
//
// Columns are solved in groups of four lanes (group g holds columns
// 4g..4g+3) by an assembly loop over a block's rows that keeps the
// group's eight window words in registers; a group of at most three
// columns uses a three-lane loop. The windows carry over from block to
// block (blocks are solved from the last down). A column that exists only
// in upper blocks stops being solved below them, which is right: no key
// that starts in a lower block has it.
//
// Cost per slot and column about 12 instructions (shift, two ANDs, XOR,
// POPCNT, result bit, OR), four lanes' independent chains overlapping.
func (b *Builder) backSubstituteAsm(l layout, data []uint64) {
	var st [(maxCols + 3) / 4][8]uint64
	for blk := l.numBlocks; blk > 0; {
		blk--
		rows := &b.rows[blk*128 : blk*128+128][0]
		res := &b.res[blk*128 : blk*128+128][0]
		cols := l.cols(blk)
		first, _ := l.seg(2 * blk)
		out := data[first : first+2*uint64(cols)]
		for g := 0; 4*g < cols; g++ {
			j := 4 * g
			n := min(4, cols-j)
			s := &st[g]
			if n == 4 {
				backsubBlock4(rows, res, s, uint64(j))
			} else {
				backsubBlock3(rows, res, s, uint64(j))
			}
			for k := range n {
				out[j+k] = s[k]
				out[cols+j+k] = s[4+k]
			}
		}
	}
}
