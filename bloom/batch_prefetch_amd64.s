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

// WARMUP prefetches, with the instruction prefetch, the lines of the
// first min(ahead, n) keys: for j < that, block Reduce(hashes[j], blocks)
// of the array at DI (DX blocks, BX hashes, R8 ahead); it clobbers R9,
// R11, R12 and CX, and leaves at label done.
#define WARMUP(prefetch, warm, done) \
	MOVQ n+32(FP), R12; \
	CMPQ R8, R12; \
	CMOVQLT R8, R12; \
	XORQ R9, R9; \
	TESTQ R12, R12; \
	JLE done; \
warm: \
	MULXQ (BX)(R9*8), CX, R11; \
	SHLQ $6, R11; \
	prefetch (DI)(R11*1); \
	INCQ R9; \
	CMPQ R9, R12; \
	JLT warm

// KEYHEAD starts key j (R9) of a batch loop: unless j >= limit (no key
// j+ahead), it prefetches, with the instruction prefetch, the line of key
// j+ahead (R8 = &hashes[ahead]); then it leaves in R10 the byte offset of
// key j's line in the array at DI (Reduce(h, blocks)*64, DX blocks) and
// in AX x = Mix64(h), multiplying by R14 and R15 (Mix64's constants).
// skip is its label; it clobbers CX and R11.
#define KEYHEAD(prefetch, limit, skip) \
	CMPQ R9, limit; \
	JGE skip; \
	MULXQ (R8)(R9*8), CX, R11; \
	SHLQ $6, R11; \
	prefetch (DI)(R11*1); \
skip: \
	MOVQ (BX)(R9*8), AX; \
	MULXQ AX, CX, R10; \
	SHLQ $6, R10; \
	MOVQ AX, CX; \
	SHRQ $33, CX; \
	XORQ CX, AX; \
	IMULQ R14, AX; \
	MOVQ AX, CX; \
	SHRQ $33, CX; \
	XORQ CX, AX; \
	IMULQ R15, AX; \
	MOVQ AX, CX; \
	SHRQ $33, CX; \
	XORQ CX, AX

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
// control, R14/R15 the Mix64 multipliers, CX and R11 scratch. The
// argument slot of ahead is reused for n-ahead, the first key with no key
// to prefetch ahead of it.
TEXT ·containsBatchAsm(SB), NOSPLIT, $0-56
	MOVQ base+0(FP), DI
	MOVQ blocks+8(FP), DX
	MOVQ hashes+16(FP), BX
	MOVQ out+24(FP), SI
	MOVQ ahead+48(FP), R8
	MOVQ $0x0306, R13
	MOVQ $0xff51afd7ed558ccd, R14
	MOVQ $0xc4ceb9fe1a85ec53, R15
	WARMUP(PREFETCHT0, warm, warmdone)

warmdone:
	MOVQ n+32(FP), CX
	SUBQ R8, CX
	MOVQ CX, ahead+48(FP)
	LEAQ (BX)(R8*8), R8
	XORQ R9, R9
	CMPQ R9, n+32(FP)
	JGE bdone

bloop:
	KEYHEAD(PREFETCHT0, ahead+48(FP), noprefetch)
	ADDQ DI, R10
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

// probeShifts holds, in lane c, the shift 9c that brings probe c's nine
// bits (the bit in the word: bits 0-5; the word: bits 6-8) of x =
// Mix64(h) to the bottom of the lane: the fields ContainsHash reads with
// its x>>9 steps. Lane 7 is never tested (k <= 7).
DATA probeShifts<>+0(SB)/8, $0
DATA probeShifts<>+8(SB)/8, $9
DATA probeShifts<>+16(SB)/8, $18
DATA probeShifts<>+24(SB)/8, $27
DATA probeShifts<>+32(SB)/8, $36
DATA probeShifts<>+40(SB)/8, $45
DATA probeShifts<>+48(SB)/8, $54
DATA probeShifts<>+56(SB)/8, $63
GLOBL probeShifts<>(SB), RODATA|NOPTR, $64

// func containsBatchAVX512(base unsafe.Pointer, blocks uint64, hashes *uint64, out *bool, n int, k int, ahead int)
//
// containsBatchAsm's loop (same arguments, same answers) with the k
// probes of a key tested at once in the eight 64-bit lanes of a ZMM
// register instead of one by one:
//
//	Z1 = x>>9c in lane c         VPBROADCASTQ, VPSRLVQ by probeShifts
//	Z2 = Z1>>6                   lane c's low 3 bits: probe c's word
//	Z3 = line[Z2] in lane c      VPERMQ, the 64-byte line as its table
//	Z3 = Z3 rotated by Z1        VPRORVQ rotates by the count mod 64, so
//	                             bit 0 of lane c is probe c's bit
//	K2 = lanes c < k whose bit 0 is clear (VPTESTNMQ against ones,
//	     under K1 = the low k lanes); the key may be present iff K2 = 0.
//
// The scalar loop spends about 22 shift-port micro-operations per key
// (RORX, BEXTR, SHRX: ports 0 and 6 only on recent Intel cores); this
// one spends five, plus seven vector ones. Its prefetches are PREFETCHT1
// (into L2, not L1): once the check no longer bound the loop, that made
// it about 10% faster at 10^8 keys, while the scalar loop, bound by its
// instructions, was slower with T1 and keeps T0.
// Registers: DI base, DX blocks, BX hashes, SI out, R8 &hashes[ahead],
// R9 j, R13 n-ahead, R14/R15 the Mix64 multipliers, AX x, R10 the line's
// offset, CX and R11 scratch; Z30 probeShifts, Z31 ones in every lane,
// K1 the low k lanes. Z1-Z3 are scratch; X15 (zero in Go's internal ABI)
// is left alone, and VZEROUPPER ends the loop.
TEXT ·containsBatchAVX512(SB), NOSPLIT, $0-56
	MOVQ base+0(FP), DI
	MOVQ blocks+8(FP), DX
	MOVQ hashes+16(FP), BX
	MOVQ out+24(FP), SI
	MOVQ ahead+48(FP), R8
	VMOVDQU64 probeShifts<>(SB), Z30
	MOVQ $1, AX
	VPBROADCASTQ AX, Z31
	MOVQ k+40(FP), CX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	MOVQ $0xff51afd7ed558ccd, R14
	MOVQ $0xc4ceb9fe1a85ec53, R15
	WARMUP(PREFETCHT1, zwarm, zwarmdone)

zwarmdone:
	MOVQ n+32(FP), R13
	SUBQ R8, R13
	LEAQ (BX)(R8*8), R8
	XORQ R9, R9
	CMPQ R9, n+32(FP)
	JGE zdone

zloop:
	KEYHEAD(PREFETCHT1, R13, znoprefetch)
	VPBROADCASTQ AX, Z1
	VPSRLVQ Z30, Z1, Z1
	VPSRLQ $6, Z1, Z2
	VPERMQ (DI)(R10*1), Z2, Z3
	VPRORVQ Z1, Z3, Z3
	VPTESTNMQ Z31, Z3, K1, K2
	KORTESTW K2, K2
	SETEQ (SI)(R9*1)
	INCQ R9
	CMPQ R9, n+32(FP)
	JLT zloop

zdone:
	VZEROUPPER
	RET
