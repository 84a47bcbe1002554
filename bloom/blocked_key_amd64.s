//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// The XXH3 macro hashes with the inlineHash at IH(R12): Blocked's.
#define IH Blocked_inline
#include "xxh3_amd64.h"

// Multipliers of hashing.Mix64 and hashing.Remix, read as memory operands.
DATA bconsts<>+0(SB)/8, $0xff51afd7ed558ccd  // Mix64, first multiplier
DATA bconsts<>+8(SB)/8, $0xc4ceb9fe1a85ec53  // Mix64, second multiplier
DATA bconsts<>+16(SB)/8, $0x9e3779b97f4a7c15 // Remix, step multiplier
DATA bconsts<>+24(SB)/8, $0xd6e8feb86659fd93 // Remix, multiplier
GLOBL bconsts<>(SB), RODATA|NOPTR, $32

// BMIX64 sets DI = hashing.Mix64(h), h left as is. Clobbers AX.
#define BMIX64(h) \
	MOVQ h, DI; \
	SHRQ $33, DI; \
	XORQ h, DI; \
	IMULQ bconsts<>+0(SB), DI; \
	MOVQ DI, AX; \
	SHRQ $33, AX; \
	XORQ AX, DI; \
	IMULQ bconsts<>+8(SB), DI; \
	MOVQ DI, AX; \
	SHRQ $33, AX; \
	XORQ AX, DI;

// REMIX sets DI = hashing.Remix(h, r). Clobbers AX.
#define REMIX(h, r) \
	MOVQ r, DI; \
	IMULQ bconsts<>+16(SB), DI; \
	XORQ h, DI; \
	MOVQ DI, AX; \
	SHRQ $32, AX; \
	XORQ AX, DI; \
	IMULQ bconsts<>+24(SB), DI; \
	MOVQ DI, AX; \
	SHRQ $32, AX; \
	XORQ AX, DI; \
	IMULQ bconsts<>+24(SB), DI; \
	MOVQ DI, AX; \
	SHRQ $32, AX; \
	XORQ AX, DI;

// LINE sets SI to the address of the block of the hash in R13 in the
// Blocked at R12: words + Reduce(h, blocks)*64 (Blocked.line). Clobbers
// AX, DX.
#define LINE \
	MOVQ R13, AX; \
	MULQ Blocked_blocks(R12); \
	SHLQ $6, DX; \
	ADDQ Blocked_words(R12), DX; \
	MOVQ DX, SI;

// BPROBE tests the probe in the low 9 bits of DI (word bits 6-8, bit
// 0-5) of the line at SI: a clear bit jumps to no, else DI >>= 9 for the
// next probe. BTQ with a register operand takes the bit index mod 64, so
// DI serves as the bit index unmasked. Clobbers AX, R8.
#define BPROBE(no) \
	MOVQ DI, AX; \
	SHRQ $6, AX; \
	ANDL $7, AX; \
	MOVQ (SI)(AX*8), R8; \
	BTQ  DI, R8; \
	JCC  no; \
	SHRQ $9, DI;

// BBIT sets the byte register b to the probe bit in the low 9 bits of DI
// and shifts DI to the next probe, without a branch. Clobbers AX, R8.
#define BBIT(b) \
	MOVQ DI, AX; \
	SHRQ $6, AX; \
	ANDL $7, AX; \
	MOVQ (SI)(AX*8), R8; \
	BTQ  DI, R8; \
	SETCS b; \
	SHRQ $9, DI;

// BSET sets the probe in the low 9 bits of DI in the line at SI, adds the
// bit's old value to R10 and shifts DI to the next probe. Clobbers AX, R8.
#define BSET \
	MOVQ DI, AX; \
	SHRQ $6, AX; \
	ANDL $7, AX; \
	MOVQ (SI)(AX*8), R8; \
	BTSQ DI, R8; \
	ADCQ $0, R10; \
	MOVQ R8, (SI)(AX*8); \
	SHRQ $9, DI;

// BSETX is BSET with the probe's word index taken by one BEXTR (BMI1;
// control 0x0306, bits 6-8, in BX) instead of a move, a shift and a mask.
#define BSETX \
	BEXTRQ BX, DI, AX; \
	MOVQ (SI)(AX*8), R8; \
	BTSQ DI, R8; \
	ADCQ $0, R10; \
	MOVQ R8, (SI)(AX*8); \
	SHRQ $9, DI;

// func blockedContainsKey(f *Blocked, p *byte, n int) bool
//
// (*Blocked).Contains of the n bytes at p: the XXH3 macro, then
// ContainsHash's probes (the probe sequence of the type's doc: 9-bit
// fields of Mix64(h), 7 per word, then of Remix(h, 1), Remix(h, 2), ...).
// As ContainsHash, with k >= 3 the first three probes are read and tested
// with one branch, the rest stop at the first clear bit; the remaining
// four probes of a first word (k >= 7) run as a straight sequence, others
// in a loop. In concurrent mode too: on amd64 an atomic load is a plain
// load. A hasher other than XXH3 or a key length the macro does not cover
// goes to blockedContainsKeyGo.
TEXT ·blockedContainsKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	CMPB Blocked_inline+inlineHash_XXH3(R12), $0
	JEQ  bcSlow
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(bcCold)
	LINE
	BMIX64(R13)
	MOVQ Blocked_k(R12), R9
	CMPQ R9, $3
	JB   bcShort
	BBIT(R10)
	BBIT(R11)
	ANDB R11, R10
	BBIT(R11)
	ANDB R11, R10
	JZ   bcNo
	CMPQ R9, $7
	JB   bcFirstShort
	BPROBE(bcNo)
	BPROBE(bcNo)
	BPROBE(bcNo)
	BPROBE(bcNo)
	SUBQ $7, R9
	JNZ  bcRounds
bcYes:
	MOVB $1, ret+24(FP)
	RET
bcNo:
	MOVB $0, ret+24(FP)
	RET
bcFirstShort:
	SUBQ $3, R9
bcShort:
	// R9 probes left in DI (k < 7), one by one.
	TESTQ R9, R9
	JZ   bcYes
bcShortLoop:
	BPROBE(bcNo)
	DECQ R9
	JNZ  bcShortLoop
	JMP  bcYes
bcRounds:
	// R9 > 0 probes left after the first word: min(R9, 7) from each of
	// Remix(h, 1), Remix(h, 2), ... in BX.
	XORL BX, BX
bcRound:
	INCQ BX
	REMIX(R13, BX)
	MOVQ $7, CX
	CMPQ R9, CX
	CMOVQLT R9, CX
	SUBQ CX, R9
bcInner:
	BPROBE(bcNo)
	DECQ CX
	JNZ  bcInner
	TESTQ R9, R9
	JNZ  bcRound
	JMP  bcYes
bcCold:
	XXH3_COLD(bcSlow)
bcSlow:
	JMP ·blockedContainsKeyGo(SB)

// func blockedAddKey(f *Blocked, p *byte, n int) bool
//
// (*Blocked).Add of the n bytes at p: the XXH3 macro, then blockedSet.
// Other hashers and key lengths go to blockedAddKeyGo.
TEXT ·blockedAddKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	CMPB Blocked_inline+inlineHash_XXH3(R12), $0
	JEQ  baSlow
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(baCold)
	LEAQ ret+24(FP), R11
	JMP  blockedSet<>(SB)
baCold:
	XXH3_COLD(baSlow)
baSlow:
	JMP ·blockedAddKeyGo(SB)

// func blockedAddHash(f *Blocked, h uint64) bool
//
// (*Blocked).AddHash: blockedSet of h.
TEXT ·blockedAddHash(SB), NOSPLIT, $0-17
	MOVQ f+0(FP), R12
	MOVQ h+8(FP), R13
	LEAQ ret+16(FP), R11
	JMP  blockedSet<>(SB)

// blockedSet sets the probes of the hash in R13 in the Blocked at R12 and
// writes the answer (whether a bit was clear) to the bool at R11: the
// body of blockedAddKey and blockedAddHash, which jump to it with their
// frame (so its RET returns to their caller). add's probes without a
// branch on loaded data (BTS sets each bit and leaves its old value in
// CF, which ADC counts): for k <= 7 on a CPU with BMI1 a straight run of
// k BSETXs (six instructions a probe), else a loop of words of BSETs;
// then ones += k - already set and count += (that != 0). In concurrent
// mode each bit is set with LOCK BTSQ instead (see baAtomic).
TEXT blockedSet<>(SB), NOSPLIT|NOFRAME, $0
	LINE
	BMIX64(R13)
	MOVQ Blocked_k(R12), R9
	MOVQ R9, CX
	XORQ R10, R10
	CMPB Blocked_concurrent(R12), $0
	JNE  baAtomic
	// k <= 7 with BMI1: a straight run of the last k of seven BSETXs.
	CMPQ R9, $7
	JA   baGeneral
	CMPB ·haveProbeAsm(SB), $0
	JEQ  baGeneral
	MOVL $0x0306, BX
	CMPQ R9, $6
	JEQ  bx6
	JA   bx7
	CMPQ R9, $4
	JEQ  bx4
	JA   bx5
	CMPQ R9, $2
	JEQ  bx2
	JA   bx3
	CMPQ R9, $1
	JNE  baDone
	JMP  bx1
bx7:
	BSETX
bx6:
	BSETX
bx5:
	BSETX
bx4:
	BSETX
bx3:
	BSETX
bx2:
	BSETX
bx1:
	BSETX
baDone:
	SUBQ R10, CX
	ADDQ CX, Blocked_ones(R12)
	XORL AX, AX
	TESTQ CX, CX
	SETNE AX
	ADDQ AX, Blocked_count(R12)
	MOVB AX, (R11)
	RET
baGeneral:
	// min(R9, 7) probes from DI, then from Remix(h, 1), Remix(h, 2), ...
	XORL BX, BX
	TESTQ R9, R9
	JZ   baDone
baRound:
	MOVQ $7, DX
	CMPQ R9, DX
	CMOVQLT R9, DX
	SUBQ DX, R9
baInner:
	BSET
	DECQ DX
	JNZ  baInner
	TESTQ R9, R9
	JZ   baDone
	INCQ BX
	REMIX(R13, BX)
	JMP  baRound
baAtomic:
	// Concurrent mode: min(R9, 7) probes from each word as above, each
	// set with LOCK BTSQ on the line: with a register offset in [0, 512)
	// it addresses bit offset%64 of word offset/64 from SI, the probe's
	// bit, and leaves the bit's old value in CF. The key was new if some
	// bit was clear (as addAtomic's OR results); count is then
	// incremented with LOCK INCQ; ones is not kept in this mode.
	XORL BX, BX
	TESTQ R9, R9
	JZ   baAtomicDone
baAtomicRound:
	MOVQ $7, DX
	CMPQ R9, DX
	CMOVQLT R9, DX
	SUBQ DX, R9
baAtomicInner:
	MOVL DI, AX
	ANDL $511, AX
	LOCK
	BTSQ AX, (SI)
	ADCQ $0, R10
	SHRQ $9, DI
	DECQ DX
	JNZ  baAtomicInner
	TESTQ R9, R9
	JZ   baAtomicDone
	INCQ BX
	REMIX(R13, BX)
	JMP  baAtomicRound
baAtomicDone:
	CMPQ R10, CX
	JEQ  baAtomicOld
	LOCK
	INCQ Blocked_count(R12)
	MOVB $1, (R11)
	RET
baAtomicOld:
	MOVB $0, (R11)
	RET
