//go:build !purego

#include "textflag.h"

// Banding two equations at once; see bandLanes in band_amd64.go.
//
// Registers: SI &rows[0], DX &res[0], DI the next key to take, lane A's
// equation in R8 (slot i), R9 (lo), R10 (hi), R11 (r), lane B's in
// R12-R15; AX, BX, CX scratch (CX the shift count). A row is 16 bytes (lo
// at 0, hi at 8), its result 4 bytes at res[i]. The cleared limit (slots
// below it may be read) is the local lim.
//
// laneState offsets: rows 0, limit 8, next 16, end 24, numStarts 32,
// mask 40, lane A 48 (i, lo, hi, r, key), lane B 88, pending 128, res 136.

// TAKE loads the key at DI into a lane: records its address at KEY(z),
// start = high word of x·numStarts, lo = x·mulLo | 1,
// hi = (x ^ x>>31)·mulHi, r = (x·mulResult >> 32) & mask (see row in
// ribbon.go), and advances DI. It clobbers AX, BX, CX, DX.
#define TAKE(I, LO, HI, R, KEY) \
	MOVQ z+0(FP), CX \
	MOVQ DI, KEY(CX) \
	MOVQ 0(DI), BX \
	ADDQ $8, DI \
	MOVQ BX, AX \
	MULQ 32(CX) \
	MOVQ DX, I \
	MOVQ $0xf1357aea2e62a9c5, AX \
	IMULQ BX, AX \
	ORQ $1, AX \
	MOVQ AX, LO \
	MOVQ BX, AX \
	SHRQ $31, AX \
	XORQ BX, AX \
	MOVQ $0xd1b54a32d192ed03, DX \
	IMULQ DX, AX \
	MOVQ AX, HI \
	MOVQ $0xaef17502108ef2d9, AX \
	IMULQ BX, AX \
	SHRQ $32, AX \
	ANDQ 40(CX), AX \
	MOVQ AX, R \
	MOVQ 136(CX), DX

// STEP does one elimination step of a lane: jump to STORE (with AX =
// 2·i) when slot i is empty, to BAIL when i is not below the cleared
// limit or the low word would vanish (both left to Go, the lane's state
// untouched); otherwise XOR the row in and move to the next leading 1.
// TZCNT runs as BSF on processors without BMI1, which gives the same
// count here: LO is never 0.
#define STEP(I, LO, HI, R, STORE, BAIL) \
	CMPQ I, lim-8(SP) \
	JAE BAIL \
	LEAQ (I)(I*1), AX \
	MOVQ 0(SI)(AX*8), BX \
	TESTQ BX, BX \
	JZ STORE \
	XORQ LO, BX \
	JZ BAIL \
	MOVQ BX, LO \
	XORQ 8(SI)(AX*8), HI \
	XORL 0(DX)(I*4), R \
	TZCNTQ LO, CX \
	SHRQ CX, HI, LO \
	SHRQ CX, HI \
	ADDQ CX, I

// PUT stores a lane's equation into row i (AX = 2·i).
#define PUT(I, LO, HI, R) \
	MOVQ LO, 0(SI)(AX*8) \
	MOVQ HI, 8(SI)(AX*8) \
	MOVL R, 0(DX)(I*4)

// SAVEA and SAVEB write a lane's state to z (CX = z).
#define SAVEA \
	MOVQ R8, 48(CX) \
	MOVQ R9, 56(CX) \
	MOVQ R10, 64(CX) \
	MOVQ R11, 72(CX)

#define SAVEB \
	MOVQ R12, 88(CX) \
	MOVQ R13, 96(CX) \
	MOVQ R14, 104(CX) \
	MOVQ R15, 112(CX)

// func bandLanes(z *laneState)
TEXT ·bandLanes(SB), NOSPLIT, $8-8
	MOVQ z+0(FP), CX
	MOVQ 0(CX), SI
	MOVQ 16(CX), DI
	MOVQ 8(CX), AX
	MOVQ AX, lim-8(SP)
	TAKE(R8, R9, R10, R11, 80)
	TAKE(R12, R13, R14, R15, 120)

stepA:
	STEP(R8, R9, R10, R11, storeA, bail)
stepB:
	STEP(R12, R13, R14, R15, storeB, bail)
	JMP stepA

storeA:
	PUT(R8, R9, R10, R11)
	MOVQ z+0(FP), CX
	CMPQ DI, 24(CX)
	JAE  onlyB
	TAKE(R8, R9, R10, R11, 80)
	JMP  stepB

storeB:
	PUT(R12, R13, R14, R15)
	MOVQ z+0(FP), CX
	CMPQ DI, 24(CX)
	JAE  onlyA
	TAKE(R12, R13, R14, R15, 120)
	JMP  stepA

bail:
	MOVQ z+0(FP), CX
	SAVEA
	SAVEB
	MOVQ DI, 16(CX)
	MOVQ $3, 128(CX)
	RET

onlyB:
	SAVEB
	MOVQ DI, 16(CX)
	MOVQ $2, 128(CX)
	RET

onlyA:
	SAVEA
	MOVQ DI, 16(CX)
	MOVQ $1, 128(CX)
	RET
