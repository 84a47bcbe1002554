//go:build !purego

#include "textflag.h"

// Back-substitution of one 128-slot block for a group of columns; see
// backSubstituteAsm in backsub_amd64.go for the algorithm and the state.
//
// Registers: DX the current row (from row 127 down to row 0; a row is 16
// bytes, lo at 0 and hi at 8), SI its result bits (4 bytes each), CX the
// group's first column (shift of the result bits), BX the row's result
// bits, AX and DI scratch, R8-R11 the low state words of lanes 0-3,
// R12-R15 the high ones.

// LANE advances one lane's 128-bit window by one slot (ADD/ADC shift it
// left by one, leaving bit 0 clear), then sets bit 0 to the parity of
// window AND coefficients, XOR the lane's result bit, and moves the next
// lane's result bit into bit 0 of BX.
#define LANE(lo, hi) \
	ADDQ lo, lo \
	ADCQ hi, hi \
	MOVQ lo, AX \
	ANDQ 0(DX), AX \
	MOVQ hi, DI \
	ANDQ 8(DX), DI \
	XORQ DI, AX \
	POPCNTQ AX, AX \
	XORQ BX, AX \
	ANDQ $1, AX \
	ORQ AX, lo \
	SHRQ $1, BX

// func backsubBlock4(rows *band, res *uint32, st *[8]uint64, col uint64)
TEXT ·backsubBlock4(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), DX
	MOVQ res+8(FP), SI
	MOVQ st+16(FP), DI
	MOVQ col+24(FP), CX
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	MOVQ 24(DI), R11
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 48(DI), R14
	MOVQ 56(DI), R15
	ADDQ $(127*16), DX
	ADDQ $(127*4), SI

loop4:
	MOVLQZX 0(SI), BX
	SHRQ CX, BX
	LANE(R8, R12)
	LANE(R9, R13)
	LANE(R10, R14)
	LANE(R11, R15)
	SUBQ $16, DX
	SUBQ $4, SI
	CMPQ SI, res+8(FP)
	JAE  loop4

	MOVQ st+16(FP), DI
	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	MOVQ R10, 16(DI)
	MOVQ R11, 24(DI)
	MOVQ R12, 32(DI)
	MOVQ R13, 40(DI)
	MOVQ R14, 48(DI)
	MOVQ R15, 56(DI)
	RET

// func backsubBlock3(rows *band, res *uint32, st *[8]uint64, col uint64)
//
// backsubBlock4 for lanes 0-2 only (lane 3 of *st is left alone).
TEXT ·backsubBlock3(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), DX
	MOVQ res+8(FP), SI
	MOVQ st+16(FP), DI
	MOVQ col+24(FP), CX
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	MOVQ 32(DI), R12
	MOVQ 40(DI), R13
	MOVQ 48(DI), R14
	ADDQ $(127*16), DX
	ADDQ $(127*4), SI

loop3:
	MOVLQZX 0(SI), BX
	SHRQ CX, BX
	LANE(R8, R12)
	LANE(R9, R13)
	LANE(R10, R14)
	SUBQ $16, DX
	SUBQ $4, SI
	CMPQ SI, res+8(FP)
	JAE  loop3

	MOVQ st+16(FP), DI
	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	MOVQ R10, 16(DI)
	MOVQ R12, 32(DI)
	MOVQ R13, 40(DI)
	MOVQ R14, 48(DI)
	RET
