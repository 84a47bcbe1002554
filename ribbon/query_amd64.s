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

// 0x11111111: the low bit of every nibble of a 32-bit word.
DATA nibbleOnes<>+0(SB)/4, $0x11111111
GLOBL nibbleOnes<>(SB), RODATA|NOPTR, $4

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

// The row multipliers (mulLo, mulHi, mulResult in ribbon.go) and
// hashing.Remix's multiplier, read as memory operands by containsAVX2.
DATA rowMul<>+0(SB)/8, $0xf1357aea2e62a9c5
DATA rowMul<>+8(SB)/8, $0xd1b54a32d192ed03
DATA rowMul<>+16(SB)/8, $0xaef17502108ef2d9
DATA rowMul<>+24(SB)/8, $0xd6e8feb86659fd93
GLOBL rowMul<>(SB), RODATA|NOPTR, $32

// Lane i of the parity vector checks column i (bit 0) and column i+4
// (bit 4): r >> i lines the result bits up with both.
DATA resultShift<>+0(SB)/8, $0
DATA resultShift<>+8(SB)/8, $1
DATA resultShift<>+16(SB)/8, $2
DATA resultShift<>+24(SB)/8, $3
GLOBL resultShift<>(SB), RODATA|NOPTR, $32

// func containsAVX2(k *kernel, h uint64) bool
//
// The whole query of a filter with at most 8 columns (see kernel in
// query_amd64.go for the layout of *k, and seg and containsGeneric in
// ribbon.go for the algorithm): 83 instructions and 24 loads, 6 of them
// the solution's. The parities and the comparison use no lookup table
// (containsBatchAVX2's nibble tables, result shifts and lane masks cost
// 5 more loads and 4 more instructions per key): a query out of the L2
// cache waits for its lines while the next queries issue theirs, as far
// as the reorder buffer and the load queue reach, so every instruction
// and load saved lets more queries overlap (5 % faster at 10^6 keys
// than the table version; in the L1 cache, where its shorter dependency
// chain counts instead, 4 % slower).
TEXT ·containsAVX2(SB), NOSPLIT, $0-17
	MOVQ k+0(FP), DI
	CMPB kernel_avx2(DI), $0
	JEQ  fallback
	MOVQ h+8(FP), DX

	// x = Remix(h, seed+1), in DX (MULX reads it there).
	MOVL $32, SI
	XORQ kernel_seedMix(DI), DX
	SHRXQ SI, DX, BX
	XORQ BX, DX
	IMULQ rowMul<>+24(SB), DX
	SHRXQ SI, DX, BX
	XORQ BX, DX
	IMULQ rowMul<>+24(SB), DX
	SHRXQ SI, DX, BX
	XORQ BX, DX

	// s = hi64(x * numStarts); half g = s>>6, t = s&63.
	MULXQ kernel_numStarts(DI), AX, CX
	MOVQ DX, R8 // x
	MOVQ CX, DX
	ANDL $63, CX // t
	SHRQ $6, DX  // g

	// Half g starts at word g·(L+1) - min(g, 2U), and its block has
	// cols = L+1 - [g < 2U] columns; half g+1 follows, with
	// cols1 = L+1 - [g+1 < 2U] columns, then half g+2.
	MOVQ kernel_upper2(DI), R11
	CMPQ DX, R11
	CMOVQCS DX, R11 // min(g, 2U)
	MOVQ kernel_lower1(DI), R13
	SBBQ $0, R13    // cols
	LEAQ 1(DX), R12
	CMPQ R12, kernel_upper2(DI)
	MOVQ kernel_lower1(DI), R12
	SBBQ $0, R12    // cols1
	IMULQ kernel_lower1(DI), DX
	SUBQ R11, DX
	MOVQ kernel_data(DI), R9
	LEAQ (R9)(DX*8), R9   // A: half g
	LEAQ (R9)(R13*8), R10 // B: half g+1
	LEAQ (R10)(R12*8), R12 // C: half g+2 (the zero padding after the last)

	// Row: lo = x*mulLo | 1, hi = (x ^ x>>31)*mulHi, r = (x*mulResult)>>32.
	MOVQ R8, AX
	IMULQ rowMul<>+0(SB), AX
	ORQ $1, AX
	MOVQ R8, BX
	SHRQ $31, BX
	XORQ R8, BX
	IMULQ rowMul<>+8(SB), BX
	IMULQ rowMul<>+16(SB), R8
	SHRQ $32, R8

	// m0 = lo<<t, m1 = hi<<t | lo>>(64-t), m2 = hi>>(64-t) (0 when t = 0).
	MOVQ BX, DX
	SHLQ CX, AX, BX // m1
	SHLQ CX, AX     // m0
	SHRQ $1, DX
	XORQ $63, CX
	SHRQ CX, DX     // m2
	VMOVQ AX, X0
	VPBROADCASTQ X0, Y0
	VMOVQ BX, X1
	VPBROADCASTQ X1, Y1
	VMOVQ DX, X2
	VPBROADCASTQ X2, Y2

	// Columns 0-3 (Y3) and 4-7 (Y4): A[j]&m0 ^ B[j]&m1 ^ C[j]&m2.
	VPAND (R9), Y0, Y3
	VPAND 32(R9), Y0, Y4
	VPAND (R10), Y1, Y5
	VPXOR Y5, Y3, Y3
	VPAND 32(R10), Y1, Y6
	VPXOR Y6, Y4, Y4
	VPAND (R12), Y2, Y5
	VPXOR Y5, Y3, Y3
	VPAND 32(R12), Y2, Y6
	VPXOR Y6, Y4, Y4

	// Parities: XOR each 64-bit word's two halves into one 32-bit word
	// (VSHUFPS gathers the low and the high halves of both registers;
	// 128-bit lane 0 then holds columns 0, 1, 4, 5 and lane 1 columns 2,
	// 3, 6, 7, which VPERMQ puts in order). Then x ^= x>>1, x ^= x>>2
	// leaves each nibble's parity in its bit 0; multiplying the masked
	// nibble bits by 0x11111111 adds all 8 of them into bits 28-31 (the
	// lower nibbles receive sums below 8, so no carry reaches bit 28),
	// and bit 28 is the word's parity.
	// Shifted to the sign, VMOVMSKPS gathers the 8 parities: bit j =
	// column j.
	VSHUFPS $0x88, Y4, Y3, Y5
	VSHUFPS $0xdd, Y4, Y3, Y6
	VPXOR Y6, Y5, Y5
	VPERMQ $0xd8, Y5, Y5
	VPSRLD $1, Y5, Y6
	VPXOR Y6, Y5, Y5
	VPSRLD $2, Y5, Y6
	VPXOR Y6, Y5, Y5
	VPBROADCASTD nibbleOnes<>(SB), Y6
	VPAND Y6, Y5, Y5
	VPMULLD Y6, Y5, Y5
	VPSLLD $3, Y5, Y5
	VMOVMSKPS Y5, AX

	// Compare with the result bits and keep only the block's columns
	// (BZHI clears the bits from cols up and sets ZF on a zero result).
	XORL R8, AX
	BZHIL R13, AX, AX
	SETEQ ret+16(FP)
	VZEROUPPER
	RET

fallback:
	// Same arguments and result in the same frame: a tail call.
	JMP ·queryGeneric(SB)

// func containsBatchAVX2(k *kernel, hashes *uint64, out *bool, n int)
//
// out[i] = containsAVX2(k, hashes[i]) for i < n, in groups of 8 keys:
// first every key's remixed hash x and start s are computed and kept in
// the frame, and the 4 cache lines from its first word are prefetched
// (a query reads at most 24 words from there); then the keys are
// evaluated as in containsAVX2, with the constants kept in registers.
// Frame: x at 0-63, s at 64-127, hashes at 128, group size at 136, out at
// 144, keys left at 152.
TEXT ·containsBatchAVX2(SB), NOSPLIT, $160-32
	MOVQ k+0(FP), DI
	MOVQ hashes+8(FP), SI
	MOVQ out+16(FP), AX
	MOVQ AX, 144(SP)
	MOVQ n+24(FP), AX
	MOVQ AX, 152(SP)
	VMOVDQU nibbleMask<>(SB), Y8
	VPXOR Y9, Y9, Y9
	VMOVDQU parityLUT<>(SB), Y10
	VMOVDQU parity16LUT<>(SB), Y11
	VMOVDQU resultShift<>(SB), Y12

group:
	MOVQ 152(SP), AX
	TESTQ AX, AX
	JLE done
	MOVQ $8, BX
	CMPQ AX, BX
	CMOVQLT AX, BX
	MOVQ BX, 136(SP)
	XORL R10, R10

locate:
	MOVQ (SI)(R10*8), AX
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
	MOVQ AX, (SP)(R10*8)
	MULQ kernel_numStarts(DI)
	MOVQ DX, 64(SP)(R10*8)
	SHRQ $6, DX
	MOVQ kernel_upper2(DI), R11
	CMPQ DX, R11
	CMOVQCS DX, R11
	IMULQ kernel_lower1(DI), DX
	SUBQ R11, DX
	MOVQ kernel_data(DI), R9
	LEAQ (R9)(DX*8), R9
	PREFETCHT0 (R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 128(R9)
	PREFETCHT0 191(R9)
	INCQ R10
	CMPQ R10, 136(SP)
	JLT locate

	MOVQ 136(SP), AX
	LEAQ (SI)(AX*8), SI
	MOVQ SI, 128(SP)
	XORL SI, SI

evaluate:
	MOVQ (SP)(SI*8), R8
	MOVQ 64(SP)(SI*8), DX
	MOVQ DX, CX
	ANDQ $63, CX
	SHRQ $6, DX
	MOVQ kernel_upper2(DI), R11
	CMPQ DX, R11
	CMOVQCS DX, R11
	MOVQ kernel_lower1(DI), R13
	SBBQ $0, R13
	LEAQ 1(DX), R12
	CMPQ R12, kernel_upper2(DI)
	MOVQ kernel_lower1(DI), R12
	SBBQ $0, R12
	IMULQ kernel_lower1(DI), DX
	SUBQ R11, DX
	MOVQ kernel_data(DI), R9
	LEAQ (R9)(DX*8), R9
	LEAQ (R9)(R13*8), R10
	LEAQ (R10)(R12*8), R12
	SHLQ $5, R13

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

	MOVQ BX, DX
	SHLQ CX, AX, BX
	SHLQ CX, AX
	SHRQ $1, DX
	XORQ $63, CX
	SHRQ CX, DX
	VMOVQ AX, X0
	VPBROADCASTQ X0, Y0
	VMOVQ BX, X1
	VPBROADCASTQ X1, Y1
	VMOVQ DX, X2
	VPBROADCASTQ X2, Y2

	VPAND (R9), Y0, Y3
	VPAND 32(R9), Y0, Y4
	VPAND (R10), Y1, Y5
	VPXOR Y5, Y3, Y3
	VPAND 32(R10), Y1, Y6
	VPXOR Y6, Y4, Y4
	VPAND (R12), Y2, Y5
	VPXOR Y5, Y3, Y3
	VPAND 32(R12), Y2, Y6
	VPXOR Y6, Y4, Y4

	VPSRLQ $4, Y3, Y6
	VPXOR Y3, Y6, Y3
	VPAND Y8, Y3, Y3
	VPSHUFB Y3, Y10, Y3
	VPSRLQ $4, Y4, Y7
	VPXOR Y4, Y7, Y4
	VPAND Y8, Y4, Y4
	VPSHUFB Y4, Y11, Y4
	VPOR Y3, Y4, Y3
	VPSADBW Y9, Y3, Y3

	VMOVQ R8, X4
	VPBROADCASTQ X4, Y4
	VPSRLVQ Y12, Y4, Y4
	VPXOR Y3, Y4, Y3
	VPTEST kernel_masks(DI)(R13*1), Y3
	MOVQ 144(SP), R11
	SETEQ (R11)(SI*1)
	INCQ SI
	CMPQ SI, 136(SP)
	JLT evaluate

	MOVQ 136(SP), AX
	ADDQ AX, 144(SP)
	SUBQ AX, 152(SP)
	MOVQ 128(SP), SI
	JMP group

done:
	VZEROUPPER
	RET
