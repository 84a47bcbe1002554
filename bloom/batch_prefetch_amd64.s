//go:build !purego

#include "textflag.h"

// Probe c (1 <= c <= 6) of the key in AX (x = Mix64(h)) on the line at
// R10, ANDed into R12: R11 = x rotated right by 9c, whose low 9 bits are
// bits 9c..9c+8 of x (9c+8 <= 62); BEXTR (control 0x0306 in R13) takes
// its bits 6-8, the word; SHRX shifts that word right by the low 6 bits,
// the bit. The same fields as ContainsHash's x>>9 steps.
#define PROBE(rot) \
	RORXQ $rot, AX, R11; \
	BEXTRQ R13, R11, CX; \
	SHRXQ R11, (R10)(CX*8), CX; \
	ANDQ CX, R12

// func containsBatchAsm(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int)
//
// For j < n: out[j] = whether all k probe bits of hashes[j] are set in
// its block, block Reduce(h, blocks) of the array at base (1 <= k <= 7,
// n >= 1, ahead >= 1). It first prefetches the lines of the first ahead
// keys; then, key by key, it prefetches the line of key j+ahead (while
// there is one) and checks key j, so one prefetch is issued per check
// instead of bursts of them. The block index is recomputed from the hash
// (one MULX) rather than stored.
// Registers: DI base, DX blocks (MULX's implicit operand), BX hashes,
// SI out, R8 &hashes[ahead], R9 j, AX x, R10 line, R12 acc, R13 BEXTR
// control, CX and R11 scratch. The argument slot of ahead is reused for
// n-ahead, the first key with no key to prefetch ahead of it.
TEXT ·containsBatchAsm(SB), NOSPLIT, $0-56
	MOVQ base+0(FP), DI
	MOVQ blocks+8(FP), DX
	MOVQ hashes+16(FP), BX
	MOVQ out+24(FP), SI
	MOVQ ahead+48(FP), R8
	MOVQ $0x0306, R13
	MOVQ n+32(FP), R12
	CMPQ R8, R12
	CMOVQLT R8, R12
	XORQ R9, R9
	TESTQ R12, R12
	JLE warmdone

warm:
	MULXQ (BX)(R9*8), CX, R11
	SHLQ $6, R11
	PREFETCHT0 (DI)(R11*1)
	INCQ R9
	CMPQ R9, R12
	JLT warm

warmdone:
	MOVQ n+32(FP), CX
	SUBQ R8, CX
	MOVQ CX, ahead+48(FP)
	LEAQ (BX)(R8*8), R8
	XORQ R9, R9
	CMPQ R9, n+32(FP)
	JGE bdone

bloop:
	CMPQ R9, ahead+48(FP)
	JGE noprefetch
	MULXQ (R8)(R9*8), CX, R11
	SHLQ $6, R11
	PREFETCHT0 (DI)(R11*1)

noprefetch:
	MOVQ (BX)(R9*8), AX
	MULXQ AX, CX, R10
	SHLQ $6, R10
	ADDQ DI, R10
	MOVQ AX, CX
	SHRQ $33, CX
	XORQ CX, AX
	MOVQ $0xff51afd7ed558ccd, CX
	IMULQ CX, AX
	MOVQ AX, CX
	SHRQ $33, CX
	XORQ CX, AX
	MOVQ $0xc4ceb9fe1a85ec53, CX
	IMULQ CX, AX
	MOVQ AX, CX
	SHRQ $33, CX
	XORQ CX, AX
	BEXTRQ R13, AX, CX
	SHRXQ AX, (R10)(CX*8), R12
	MOVQ k+40(FP), CX
	CMPQ CX, $6
	JEQ b5
	CMPQ CX, $7
	JEQ b6
	CMPQ CX, $5
	JEQ b4
	CMPQ CX, $4
	JEQ b3
	CMPQ CX, $3
	JEQ b2
	CMPQ CX, $2
	JEQ b1
	JMP bstore

b6:
	PROBE(54)
b5:
	PROBE(45)
b4:
	PROBE(36)
b3:
	PROBE(27)
b2:
	PROBE(18)
b1:
	PROBE(9)
bstore:
	ANDL $1, R12
	MOVB R12, (SI)(R9*1)
	INCQ R9
	CMPQ R9, n+32(FP)
	JLT bloop

bdone:
	RET
