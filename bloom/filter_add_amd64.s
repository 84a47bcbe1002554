//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// PROBES_SET sets the k probes of the hash in CX in the filter at R12 and
// stores the "was new" answer at ret: the body of (*Filter).AddHash.
// d = Mix64(h)|1, then for each probe g = h + i*d (mod 2^64): DX:AX =
// g*len(words), word DX, bit AX>>58; BTS sets the bit and leaves the old
// one in CF, which ADC counts. Ten instructions per probe, none of them a
// branch on loaded data (the Go version needs about twice as many, mostly
// register moves around MULQ's fixed registers), so more consecutive adds
// fit in the reorder buffer and their cache misses overlap. Then
// ones += k - seen and count += (k - seen != 0), the result.
// Clobbers AX, BX, DX, SI, DI, R8-R11, R13.
#define PROBES_SET(ret) \
	MOVQ CX, DI; \
	MOVQ DI, R11; \
	SHRQ $33, R11; \
	XORQ R11, DI; \
	MOVQ $0xff51afd7ed558ccd, R11; \
	IMULQ R11, DI; \
	MOVQ DI, R11; \
	SHRQ $33, R11; \
	XORQ R11, DI; \
	MOVQ $0xc4ceb9fe1a85ec53, R11; \
	IMULQ R11, DI; \
	MOVQ DI, R11; \
	SHRQ $33, R11; \
	XORQ R11, DI; \
	ORQ $1, DI; \
	MOVQ Filter_words(R12), SI; \
	MOVQ Filter_words+8(R12), BX; \
	MOVQ Filter_k(R12), R9; \
	MOVQ R9, R13; \
	XORQ R10, R10; \
	TESTQ R9, R9; \
	JLE addDone; \
addLoop: \
	MOVQ CX, AX; \
	MULQ BX; \
	SHRQ $58, AX; \
	MOVQ (SI)(DX*8), R8; \
	BTSQ AX, R8; \
	ADCQ $0, R10; \
	MOVQ R8, (SI)(DX*8); \
	ADDQ DI, CX; \
	DECQ R9; \
	JNZ addLoop; \
addDone: \
	SUBQ R10, R13; \
	ADDQ R13, Filter_ones(R12); \
	XORL AX, AX; \
	TESTQ R13, R13; \
	SETNE AX; \
	ADDQ AX, Filter_count(R12); \
	MOVB AX, ret; \
	RET;

// func addHash(f *Filter, h uint64) bool
TEXT ·addHash(SB), NOSPLIT, $0-17
	MOVQ f+0(FP), R12
	MOVQ h+8(FP), CX
	PROBES_SET(ret+16(FP))

// The XXH3-64 secret's words (the reference's default secret, read
// little-endian at the byte offset in the name) and the XXH3 constants.
#define S000 $0xbe4ba423396cfeb8
#define S008 $0x1cad21f72c81017c
#define S016 $0xdb979083e96dd4de
#define S024 $0x1f67b3b7a4a44072
#define S032 $0x78e5c0cc4ee679cb
#define S040 $0x2172ffcc7dd05a82
#define S048 $0x8e2443f7744608b8
#define S056 $0x4c263a81e69035e0
#define S064 $0xcb00c391bb52283c
#define S072 $0xa32e531b8b65d088
#define S080 $0x4ef90da297486471
#define S088 $0xd8acdea946ef1938
#define S096 $0x3f349ce33f76faa8
#define S104 $0x1d4f0bc7c7bbdcf9
#define S112 $0x3159b4cd4be0518a
#define S120 $0x647378d9c97e9fc8
#define S024X032 $0x6782737bea4239b9 // S024 ^ S032
#define S040X048 $0xaf56bc3b0996523a // S040 ^ S048
#define S008X016 $0xc73ab174c5ecd5a2 // S008 ^ S016
#define PRIME64_1 $0x9e3779b185ebca87
#define AVALANCHE_MUL $0x165667919e3779f9
#define RRMXMX_MUL $0x9fb21c651e98df25

// MIX16 adds to R13 the folded 128-bit product of the 16 input bytes at
// a and b, keyed with the secret words s0+seed and s1-seed (seed in R9).
// Clobbers AX, DX.
#define MIX16(a, b, s0, s1) \
	MOVQ s0, AX; \
	ADDQ R9, AX; \
	XORQ a, AX; \
	MOVQ s1, DX; \
	SUBQ R9, DX; \
	XORQ b, DX; \
	MULQ DX; \
	XORQ DX, AX; \
	ADDQ AX, R13;

// AVALANCHE is XXH3's final mix of R13. Clobbers AX.
#define AVALANCHE \
	MOVQ R13, AX; \
	SHRQ $37, AX; \
	XORQ AX, R13; \
	MOVQ AVALANCHE_MUL, AX; \
	IMULQ AX, R13; \
	MOVQ R13, AX; \
	SHRQ $32, AX; \
	XORQ AX, R13;

// XXH3 leaves in R13 the seeded XXH3-64 (xxHash 0.8) of the n bytes at
// SI, n in CX (4 <= n <= 128), seed in R9; other lengths jump to slow.
// It is the reference algorithm's short-input paths, written out so that
// the filter's key methods hash and probe in one leaf function:
//
//   - 4-8 bytes: s' = seed ^ bswap32(low half of seed)<<32,
//     x = (read32(p)<<32 + read32(p+n-4)) ^ ((S008^S016) - s'), then
//     rrmxmx(x, n).
//   - 9-16 bytes: lo = read64(p) ^ ((S024^S032) + seed),
//     hi = read64(p+n-8) ^ ((S040^S048) - seed), then
//     avalanche(n + bswap64(lo) + hi + fold(lo*hi)).
//   - 17-128 bytes: n*PRIME64_1 plus a MIX16 of 16-byte pairs taken from
//     both ends (1 to 4 pairs from each end by length), then avalanche.
//
// TestKeyHashMatches checks it against hashing.XXH3(seed).Sum64 at every
// length from 0 to 256 and several seeds. Clobbers AX, DX, R10, R11.
#define XXH3(slow) \
	LEAQ -17(CX), AX; \
	CMPQ AX, $(128-17); \
	JBE  xxh17to128; \
	LEAQ -4(CX), AX; \
	CMPQ AX, $(16-4); \
	JA   slow; \
	CMPQ CX, $8; \
	JBE  xxh4to8; \
	MOVQ S024X032, AX; \
	ADDQ R9, AX; \
	XORQ (SI), AX; \
	MOVQ S040X048, DX; \
	SUBQ R9, DX; \
	XORQ -8(SI)(CX*1), DX; \
	MOVQ AX, R13; \
	BSWAPQ R13; \
	ADDQ CX, R13; \
	ADDQ DX, R13; \
	MULQ DX; \
	XORQ DX, AX; \
	ADDQ AX, R13; \
	AVALANCHE; \
	JMP xxhDone; \
xxh4to8: \
	MOVL R9, R10; \
	BSWAPL R10; \
	SHLQ $32, R10; \
	XORQ R9, R10; \
	MOVQ S008X016, R11; \
	SUBQ R10, R11; \
	MOVL (SI), AX; \
	SHLQ $32, AX; \
	MOVL -4(SI)(CX*1), DX; \
	ADDQ DX, AX; \
	XORQ R11, AX; \
	MOVQ AX, R10; \
	ROLQ $49, R10; \
	MOVQ AX, R11; \
	ROLQ $24, R11; \
	XORQ R11, R10; \
	XORQ R10, AX; \
	MOVQ RRMXMX_MUL, R10; \
	IMULQ R10, AX; \
	MOVQ AX, R11; \
	SHRQ $35, R11; \
	ADDQ CX, R11; \
	XORQ R11, AX; \
	IMULQ R10, AX; \
	MOVQ AX, R13; \
	SHRQ $28, R13; \
	XORQ AX, R13; \
	JMP xxhDone; \
xxh17to128: \
	MOVQ PRIME64_1, R13; \
	IMULQ CX, R13; \
	CMPQ CX, $32; \
	JBE  xxhUpTo32; \
	CMPQ CX, $64; \
	JBE  xxhUpTo64; \
	CMPQ CX, $96; \
	JBE  xxhUpTo96; \
	MIX16(48(SI), 56(SI), S096, S104) \
	MIX16(-64(SI)(CX*1), -56(SI)(CX*1), S112, S120) \
xxhUpTo96: \
	MIX16(32(SI), 40(SI), S064, S072) \
	MIX16(-48(SI)(CX*1), -40(SI)(CX*1), S080, S088) \
xxhUpTo64: \
	MIX16(16(SI), 24(SI), S032, S040) \
	MIX16(-32(SI)(CX*1), -24(SI)(CX*1), S048, S056) \
xxhUpTo32: \
	MIX16((SI), 8(SI), S000, S008) \
	MIX16(-16(SI)(CX*1), -8(SI)(CX*1), S016, S024) \
	AVALANCHE; \
xxhDone:

// func keyHash(p *byte, n int, seed uint64) (h uint64, ok bool)
//
// The XXH3 macro on its own, for tests: ok is false for the lengths it
// leaves to the Go path.
TEXT ·keyHash(SB), NOSPLIT, $0-33
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ seed+16(FP), R9
	XXH3(keyHashNo)
	MOVQ R13, h+24(FP)
	MOVB $1, ok+32(FP)
	RET
keyHashNo:
	MOVQ $0, h+24(FP)
	MOVB $0, ok+32(FP)
	RET

// func addKey(f *Filter, p *byte, n int) bool
//
// (*Filter).Add: the XXH3 macro, then PROBES_SET; a hasher other than
// XXH3 or a key length the macro does not cover goes to addKeyGo.
TEXT ·addKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	MOVBLZX Filter_inline+inlineHash_xxh3(R12), AX
	TESTB AL, AL
	JZ   addKeySlow
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ Filter_inline+inlineHash_seed(R12), R9
	XXH3(addKeySlow)
	MOVQ R13, CX
	PROBES_SET(ret+24(FP))
addKeySlow:
	JMP ·addKeyGo(SB)

// func containsKey(f *Filter, p *byte, n int) bool
//
// (*Filter).Contains: the XXH3 macro, then ContainsHash's probe loop
// (stop at the first clear bit), nine instructions a probe; as addKey,
// other hashers and lengths go to containsKeyGo.
TEXT ·containsKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	MOVBLZX Filter_inline+inlineHash_xxh3(R12), AX
	TESTB AL, AL
	JZ   containsKeySlow
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ Filter_inline+inlineHash_seed(R12), R9
	XXH3(containsKeySlow)
	// DI = Mix64(h) | 1, as hashing.Mix64.
	MOVQ R13, DI
	MOVQ DI, R11
	SHRQ $33, R11
	XORQ R11, DI
	MOVQ $0xff51afd7ed558ccd, R11
	IMULQ R11, DI
	MOVQ DI, R11
	SHRQ $33, R11
	XORQ R11, DI
	MOVQ $0xc4ceb9fe1a85ec53, R11
	IMULQ R11, DI
	MOVQ DI, R11
	SHRQ $33, R11
	XORQ R11, DI
	ORQ  $1, DI
	MOVQ Filter_words(R12), SI
	MOVQ Filter_words+8(R12), BX
	MOVQ Filter_k(R12), R9
	TESTQ R9, R9
	JLE  containsYes
containsLoop:
	MOVQ R13, AX
	MULQ BX
	SHRQ $58, AX
	MOVQ (SI)(DX*8), R8
	BTQ  AX, R8
	JCC  containsNo
	ADDQ DI, R13
	DECQ R9
	JNZ  containsLoop
containsYes:
	MOVB $1, ret+24(FP)
	RET
containsNo:
	MOVB $0, ret+24(FP)
	RET
containsKeySlow:
	JMP ·containsKeyGo(SB)
