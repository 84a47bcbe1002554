// XXH3-64 short-input hashing for the ribbon package's assembly key
// path (containsKey in query_amd64.s). Its twin is bloom/xxh3_amd64.h,
// with the same content: families never import each other, so each
// package carries its own copy, and tests in both packages
// (TestKeyHashMatches in bloom, TestContainsKeyMatchesHash in ribbon) pin
// their copy to hashing.XXH3 at every length from 0 to 256 and several
// seeds. The including file defines IH, the offset of the inlineHash
// field in the struct whose address is in R12, and includes go_asm.h and
// textflag.h first. Labels the macros define (xxhUpTo32, xxhDone, ...)
// are local to the TEXT block using them, so each function may use XXH3
// and XXH3_COLD once.

// XXH3 constants, read as memory operands (an IMULQ with a memory operand
// is one instruction, with a 64-bit immediate two). File-local: each
// including file gets its own copy of these 24 bytes.
DATA xxh3consts<>+0(SB)/8, $0x9e3779b185ebca87  // PRIME64_1
DATA xxh3consts<>+8(SB)/8, $0x165667919e3779f9  // avalanche multiplier
DATA xxh3consts<>+16(SB)/8, $0x9fb21c651e98df25 // rrmxmx multiplier
GLOBL xxh3consts<>(SB), RODATA|NOPTR, $24

// The keyed secret words of the filter at R12 (see inlineHash).
#define MIXKEY(i) IH+inlineHash_Mix+8*(i)(R12)
#define LO16 IH+inlineHash_Lo16(R12)
#define HI16 IH+inlineHash_Hi16(R12)
#define FLIP8 IH+inlineHash_Flip8(R12)

// MIX16 adds to R13 the folded 128-bit product of the input words at a
// and b XORed with the keyed secret words i and i+1. Clobbers AX, DX.
#define MIX16(a, b, i) \
	MOVQ a, AX; \
	XORQ MIXKEY(i), AX; \
	MOVQ b, DX; \
	XORQ MIXKEY(i+1), DX; \
	MULQ DX; \
	XORQ DX, AX; \
	ADDQ AX, R13;

// AVALANCHE is XXH3's final mix of R13. Clobbers AX.
#define AVALANCHE \
	MOVQ R13, AX; \
	SHRQ $37, AX; \
	XORQ AX, R13; \
	IMULQ xxh3consts<>+8(SB), R13; \
	MOVQ R13, AX; \
	SHRQ $32, AX; \
	XORQ AX, R13;

// XXH3 leaves in R13 the seeded XXH3-64 (xxHash 0.8) of the n bytes at
// SI, n in CX, for the filter at R12 (whose inlineHash holds the seeded
// secret words). It is the reference algorithm's short-input paths for
// 4 to 128 bytes, written out so that the filter's key methods hash and
// probe in one leaf function:
//
//   - 17-128 bytes: n*PRIME64_1 plus a MIX16 of 16-byte pairs taken from
//     both ends (1 to 4 pairs from each end by length), then avalanche.
//   - 9-16 bytes: lo = read64(p) ^ lo16, hi = read64(p+n-8) ^ hi16,
//     then avalanche(n + bswap64(lo) + hi + fold(lo*hi)).
//   - 4-8 bytes: x = (read32(p)<<32 + read32(p+n-4)) ^ flip8, then
//     rrmxmx(x, n).
//
// The 17-32 byte path falls straight through to XXH3_END; the others are
// out of line in XXH3_COLD, which the function places after its returns
// and which jumps back to XXH3_END, or to slow for lengths below 4 or
// above 128. TestContainsKeyMatchesHash checks the result against
// hashing.XXH3(seed).Sum64 at every length from 0 to 256 and several
// seeds. Clobbers AX, DX, R10, R11.
#define XXH3(cold) \
	LEAQ -17(CX), AX; \
	CMPQ AX, $(32-17); \
	JA   cold; \
	MOVQ CX, R13; \
	IMULQ xxh3consts<>+0(SB), R13; \
xxhUpTo32: \
	MIX16((SI), 8(SI), 0) \
	MIX16(-16(SI)(CX*1), -8(SI)(CX*1), 2); \
	AVALANCHE; \
xxhDone:

#define XXH3_COLD(slow) \
	LEAQ -9(CX), AX; \
	CMPQ AX, $(16-9); \
	JA   xxhNot9to16; \
	MOVQ (SI), AX; \
	XORQ LO16, AX; \
	MOVQ -8(SI)(CX*1), DX; \
	XORQ HI16, DX; \
	MOVQ AX, R13; \
	BSWAPQ R13; \
	ADDQ CX, R13; \
	ADDQ DX, R13; \
	MULQ DX; \
	XORQ DX, AX; \
	ADDQ AX, R13; \
	AVALANCHE; \
	JMP xxhDone; \
xxhNot9to16: \
	LEAQ -33(CX), AX; \
	CMPQ AX, $(128-33); \
	JA   xxhNot33to128; \
	MOVQ CX, R13; \
	IMULQ xxh3consts<>+0(SB), R13; \
	CMPQ CX, $64; \
	JBE  xxhUpTo64; \
	CMPQ CX, $96; \
	JBE  xxhUpTo96; \
	MIX16(48(SI), 56(SI), 12) \
	MIX16(-64(SI)(CX*1), -56(SI)(CX*1), 14); \
xxhUpTo96: \
	MIX16(32(SI), 40(SI), 8) \
	MIX16(-48(SI)(CX*1), -40(SI)(CX*1), 10); \
xxhUpTo64: \
	MIX16(16(SI), 24(SI), 4) \
	MIX16(-32(SI)(CX*1), -24(SI)(CX*1), 6); \
	JMP xxhUpTo32; \
xxhNot33to128: \
	LEAQ -4(CX), AX; \
	CMPQ AX, $(8-4); \
	JA   slow; \
	MOVL (SI), AX; \
	SHLQ $32, AX; \
	MOVL -4(SI)(CX*1), DX; \
	ADDQ DX, AX; \
	XORQ FLIP8, AX; \
	MOVQ AX, R10; \
	ROLQ $49, R10; \
	MOVQ AX, R11; \
	ROLQ $24, R11; \
	XORQ R11, R10; \
	XORQ R10, AX; \
	MOVQ xxh3consts<>+16(SB), R10; \
	IMULQ R10, AX; \
	MOVQ AX, R11; \
	SHRQ $35, R11; \
	ADDQ CX, R11; \
	XORQ R11, AX; \
	IMULQ R10, AX; \
	MOVQ AX, R13; \
	SHRQ $28, R13; \
	XORQ AX, R13; \
	JMP xxhDone
