//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Byte-parity lookup tables for VPSHUFB (one copy per 128-bit lane):
// parityLUT[i] = parity(i), parity16LUT[i] = 16*parity(i), for i < 16.
DATA parityLUT<>+0(SB)/8, $0x0001010001000001
DATA parityLUT<>+8(SB)/8, $0x0100000100010100
DATA parityLUT<>+16(SB)/8, $0x0001010001000001
DATA parityLUT<>+24(SB)/8, $0x0100000100010100
GLOBL parityLUT<>(SB), RODATA|NOPTR, $32

DATA parity16LUT<>+0(SB)/8, $0x0010100010000010
DATA parity16LUT<>+8(SB)/8, $0x1000001000101000
DATA parity16LUT<>+16(SB)/8, $0x0010100010000010
DATA parity16LUT<>+24(SB)/8, $0x1000001000101000
GLOBL parity16LUT<>(SB), RODATA|NOPTR, $32

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

// Lane i of the parity vector checks columns perm[i] (bit 0) and
// perm[i]+4 (bit 4), perm = [0, 2, 1, 3]: r >> perm[i] lines the result
// bits up with both.
DATA resultShift<>+0(SB)/8, $0
DATA resultShift<>+8(SB)/8, $2
DATA resultShift<>+16(SB)/8, $1
DATA resultShift<>+24(SB)/8, $3
GLOBL resultShift<>(SB), RODATA|NOPTR, $32

// func containsAVX2(k *kernel, h uint64) bool
//
// The whole query of a filter with at most 8 columns (see kernel in
// query_amd64.go for the layout of *k and for the algorithm).
TEXT ·containsAVX2(SB), NOSPLIT, $0-17
	MOVQ k+0(FP), DI
	MOVQ h+8(FP), AX

	// x = Remix(h, seed+1)
	XORQ kernel_seedMix(DI), AX
	MOVQ AX, BX
	SHRQ $32, BX
	XORQ BX, AX
	MOVQ $0xd6e8feb86659fd93, CX
	IMULQ CX, AX
	MOVQ AX, BX
	SHRQ $32, BX
	XORQ BX, AX
	IMULQ CX, AX
	MOVQ AX, BX
	SHRQ $32, BX
	XORQ BX, AX
	MOVQ AX, R8 // x

	// s = hi64(x * numStarts), block s>>7, offset o = s&127
	MULQ kernel_numStarts(DI)
	MOVQ DX, SI
	ANDQ $127, SI // o
	SHRQ $7, DX   // blk

	// d = blk - upperStart; s63 = d>>63 (arithmetic: -1 for a lower
	// block, 0 for an upper one); cols = lower + 1 + s63;
	// first word = 2*(blk*lower + max(d, 0)).
	MOVQ kernel_lower(DI), R10
	MOVQ DX, R11
	SUBQ kernel_upper(DI), R11
	MOVQ R11, R12
	SARQ $63, R12
	LEAQ 1(R10)(R12*1), R13 // cols
	NOTQ R12
	ANDQ R12, R11 // max(d, 0)
	ANDQ $32, R12 // 32 for an upper block: offset of its lane masks
	IMULQ R10, DX
	ADDQ R11, DX
	SHLQ $4, DX
	MOVQ kernel_data(DI), R9
	ADDQ DX, R9 // P: start block

	// Q: the next block. When o == 0 the row lies in P alone, its masks
	// for Q are zero, and after the last block Q is the zero padding.
	SHLQ $4, R13
	LEAQ (R9)(R13*1), R10 // Q
	LEAQ kernel_masks(DI)(R12*1), R13 // lane masks for this block's columns

	// Row: lo = x*mulLo | 1, hi = (x ^ x>>31)*mulHi, r = (x*mulResult)>>32.
	MOVQ $0xf1357aea2e62a9c5, AX
	IMULQ R8, AX
	ORQ $1, AX
	MOVQ R8, BX
	SHRQ $31, BX
	XORQ R8, BX
	MOVQ $0xd1b54a32d192ed03, DX
	IMULQ DX, BX
	MOVQ $0xaef17502108ef2d9, DX
	IMULQ DX, R8
	SHRQ $32, R8

	// With t = o&63: m0 = lo<<t, m1 = hi<<t | lo>>(64-t),
	// m2 = hi>>(64-t) (0 when t = 0).
	MOVQ SI, CX
	ANDQ $63, CX
	MOVQ BX, DX
	SHLQ CX, AX, BX // m1
	SHLQ CX, AX     // m0
	SHRQ $1, DX
	XORQ $63, CX
	SHRQ CX, DX     // m2

	// Word masks of a column's two words in P (x0, x1) and in Q (y0, y1):
	// (m0, m1 | m2, 0) when the row starts in P's first half,
	// (0, m0 | m1, m2) when it starts in its second half (bit 6 of o).
	XORL R11, R11
	MOVQ AX, R12
	MOVQ BX, CX
	MOVQ DX, DI
	BTQ $6, SI
	MOVQ R11, SI
	CMOVQCS R11, R12 // x0
	CMOVQCS AX, CX   // x1
	CMOVQCS BX, DI   // y0
	CMOVQCS DX, SI   // y1
	VMOVQ R12, X0
	VPINSRQ $1, CX, X0, X0
	VINSERTI128 $1, X0, Y0, Y0 // [x0 x1 x0 x1]
	VMOVQ DI, X1
	VPINSRQ $1, SI, X1, X1
	VINSERTI128 $1, X1, Y1, Y1 // [y0 y1 y0 y1]

	// V_k = P[4k..4k+3]&X ^ Q[4k..4k+3]&Y: columns 2k and 2k+1, each
	// still split in two words.
	VPAND (R9), Y0, Y2
	VPAND (R10), Y1, Y3
	VPXOR Y2, Y3, Y2
	VPAND 32(R9), Y0, Y3
	VPAND 32(R10), Y1, Y4
	VPXOR Y3, Y4, Y3
	VPAND 64(R9), Y0, Y4
	VPAND 64(R10), Y1, Y5
	VPXOR Y4, Y5, Y4
	VPAND 96(R9), Y0, Y5
	VPAND 96(R10), Y1, Y6
	VPXOR Y5, Y6, Y5

	// Fold each column's two words: U0 = columns [0 2 1 3],
	// U1 = columns [4 6 5 7].
	VPUNPCKLQDQ Y3, Y2, Y6
	VPUNPCKHQDQ Y3, Y2, Y7
	VPXOR Y6, Y7, Y2
	VPUNPCKLQDQ Y5, Y4, Y6
	VPUNPCKHQDQ Y5, Y4, Y7
	VPXOR Y6, Y7, Y3

	// Parity of every 64-bit lane: per byte, XOR its nibbles and look the
	// parity up (U0 as 0/1, U1 as 0/16), then add the 8 bytes of a lane:
	// bit 0 of the sum is U0's lane parity, bit 4 U1's.
	VMOVDQU nibbleMask<>(SB), Y8
	VPSRLQ $4, Y2, Y6
	VPXOR Y2, Y6, Y2
	VPAND Y8, Y2, Y2
	VMOVDQU parityLUT<>(SB), Y6
	VPSHUFB Y2, Y6, Y2
	VPSRLQ $4, Y3, Y7
	VPXOR Y3, Y7, Y3
	VPAND Y8, Y3, Y3
	VMOVDQU parity16LUT<>(SB), Y7
	VPSHUFB Y3, Y7, Y3
	VPOR Y2, Y3, Y2
	VPXOR Y9, Y9, Y9
	VPSADBW Y9, Y2, Y2

	// Compare with the result bits and test only the bits of columns the
	// block has.
	VMOVQ R8, X4
	VPBROADCASTQ X4, Y4
	VPSRLVQ resultShift<>(SB), Y4, Y4
	VPXOR Y2, Y4, Y2
	VPTEST (R13), Y2
	SETEQ ret+16(FP)
	VZEROUPPER
	RET
