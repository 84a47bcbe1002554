//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// The row multipliers (mulLo, mulHi, mulResult in ribbon.go) and
// hashing.Remix's multiplier, read as memory operands.
DATA rowMul<>+0(SB)/8, $0xf1357aea2e62a9c5
DATA rowMul<>+8(SB)/8, $0xd1b54a32d192ed03
DATA rowMul<>+16(SB)/8, $0xaef17502108ef2d9
DATA rowMul<>+24(SB)/8, $0xd6e8feb86659fd93
GLOBL rowMul<>(SB), RODATA|NOPTR, $32

// 0x11111111: the low bit of every nibble of a 32-bit word.
DATA nibbleOnes<>+0(SB)/4, $0x11111111
GLOBL nibbleOnes<>(SB), RODATA|NOPTR, $4

// QUERY evaluates the hash in DX for the filter whose kernel is at DI
// and leaves ZF set exactly when the key may be in the set (then SETEQ
// stores the answer); a row whose quarters are not all in blocks with
// the same column count jumps to fallback instead. Steps:
//
//   - x = Remix(h, seed+1), in DX (MULX reads it there), with SHRX.
//   - s = hi64(x * numStarts); quarter Q = s>>5, t = s&31.
//   - Quarters Q..Q+4 cross into the upper blocks iff Q is one of the
//     four below the first upper quarter 4U: edge = 4U-4 (mod 2^64).
//   - Quarter Q starts at 32-bit word Q·(L+1) - min(Q, 4U), and all five
//     have cols = L+1 - [Q < 4U] words (R13).
//   - Row: lo = x*mulLo | 1, hi = (x ^ x>>31)*mulHi, r = (x*mulResult)>>32.
//   - c<<t as 64-bit words: w0 = lo<<t, w1 = hi<<t | lo>>(64-t),
//     w2 = hi>>(64-t) (0 when t = 0; at most t < 32 bits); the five 32-bit
//     masks, each broadcast to 8 lanes.
//   - Lane j: column j of the five quarters, masked and XORed.
//   - Parity of every lane: x ^= x>>1, x ^= x>>2 leaves each nibble's
//     parity in its bit 0; multiplying the masked nibble bits by
//     0x11111111 adds all 8 of them into bits 28-31 (the lower nibbles
//     receive sums below 8, so no carry reaches bit 28), and bit 28 is
//     the lane's parity. Shifted to the sign, VMOVMSKPS gathers the 8
//     parities: bit j = column j.
//   - Compare with the result bits and keep only the block's columns
//     (BZHI clears the bits from cols up and sets ZF when nothing is
//     left).
//
// Clobbers AX, BX, CX, DX, SI, R8-R13, Y0-Y9.
#define QUERY(fallback) \
	MOVL $32, SI; \
	XORQ kernel_seedMix(DI), DX; \
	SHRXQ SI, DX, BX; \
	XORQ BX, DX; \
	IMULQ rowMul<>+24(SB), DX; \
	SHRXQ SI, DX, BX; \
	XORQ BX, DX; \
	IMULQ rowMul<>+24(SB), DX; \
	SHRXQ SI, DX, BX; \
	XORQ BX, DX; \
	MULXQ kernel_numStarts(DI), AX, CX; \
	MOVQ DX, R8; \
	MOVQ CX, R10; \
	ANDL $31, CX; \
	SHRQ $5, R10; \
	MOVQ R10, R11; \
	SUBQ kernel_edge(DI), R11; \
	CMPQ R11, $4; \
	JCS  fallback; \
	MOVQ kernel_upper4(DI), R11; \
	MOVQ kernel_lower(DI), R13; \
	LEAQ 1(R13), R12; \
	CMPQ R10, R11; \
	CMOVQCS R10, R11; \
	SBBQ $-1, R13; \
	IMULQ R12, R10; \
	SUBQ R11, R10; \
	MOVQ kernel_data(DI), R9; \
	LEAQ (R9)(R10*4), R9; \
	LEAQ (R9)(R13*8), R11; \
	MOVQ R8, AX; \
	IMULQ rowMul<>+0(SB), AX; \
	ORQ $1, AX; \
	MOVQ R8, BX; \
	SHRQ $31, BX; \
	XORQ R8, BX; \
	IMULQ rowMul<>+8(SB), BX; \
	IMULQ rowMul<>+16(SB), R8; \
	SHRQ $32, R8; \
	MOVQ BX, DX; \
	SHLQ CX, AX, BX; \
	SHLQ CX, AX; \
	SHRQ $1, DX; \
	XORL $63, CX; \
	SHRQ CX, DX; \
	VMOVQ AX, X0; \
	VPSRLQ $32, X0, X5; \
	VPBROADCASTD X0, Y0; \
	VPBROADCASTD X5, Y5; \
	VMOVQ BX, X1; \
	VPSRLQ $32, X1, X6; \
	VPBROADCASTD X1, Y1; \
	VPBROADCASTD X6, Y6; \
	VMOVQ DX, X2; \
	VPBROADCASTD X2, Y2; \
	VPAND (R9), Y0, Y3; \
	VPAND (R9)(R13*4), Y5, Y4; \
	VPAND (R11), Y1, Y7; \
	VPAND (R11)(R13*4), Y6, Y8; \
	VPAND (R11)(R13*8), Y2, Y9; \
	VPXOR Y4, Y3, Y3; \
	VPXOR Y8, Y7, Y7; \
	VPXOR Y9, Y3, Y3; \
	VPXOR Y7, Y3, Y3; \
	VPSRLD $1, Y3, Y4; \
	VPXOR Y4, Y3, Y3; \
	VPSRLD $2, Y3, Y4; \
	VPXOR Y4, Y3, Y3; \
	VPBROADCASTD nibbleOnes<>(SB), Y4; \
	VPAND Y4, Y3, Y3; \
	VPMULLD Y4, Y3, Y3; \
	VPSLLD $3, Y3, Y3; \
	VMOVMSKPS Y3, AX; \
	XORL R8, AX; \
	BZHIL R13, AX, AX;

// func containsAVX2(k *kernel, h uint64) bool
//
// The whole query of a filter with at most 8 columns (see kernel in
// query_amd64.go for the layout of *k, and quarter-major storage and
// containsGeneric in ribbon.go for the algorithm). A row with start s
// meets the five quarters Q = s>>5 .. Q+4 through the 32-bit words of
// c<<t (t = s&31, c the 128 coefficient bits); each quarter holds its
// cols columns as consecutive 32-bit words, so one 256-bit load per
// quarter brings columns 0-7, and column j's parity is that of lane j of
// the XOR of the five masked loads (the QUERY macro). The rare rows whose
// quarters are not all in blocks with the same column count (starts in
// the four quarters below the upper blocks) and the filters the kernel
// does not serve are answered by queryGeneric.
TEXT ·containsAVX2(SB), NOSPLIT, $0-17
	MOVQ k+0(FP), DI
	CMPB kernel_avx2(DI), $0
	JEQ  fallback
	MOVQ h+8(FP), DX
	QUERY(fallback)
	SETEQ ret+16(FP)
	VZEROUPPER
	RET

fallback:
	// Same arguments and result in the same frame: a tail call.
	JMP ·queryGeneric(SB)

// The XXH3 macro hashes with the inlineHash at IH(R12): the kernel's, in
// the Filter.
#define IH Filter_k+kernel_ih
#include "xxh3_amd64.h"

// func containsKey(f *Filter, p *byte, n int) bool
//
// (*Filter).Contains of the n bytes at p: when f.k.ih.XXH3 (the hasher
// is XXH3 and the kernel serves the filter), the XXH3 macro hashes keys
// of 4 to 128 bytes and QUERY evaluates the hash in the same function,
// no call in between. Other lengths, hashers and filters, and the rare
// rows next to the lower/upper boundary (QUERY's fallback), tail-jump to
// containsKeyGo with the frame as it came, which hashes again in Go and
// answers with ContainsHash.
TEXT ·containsKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	CMPB Filter_k+kernel_ih+inlineHash_XXH3(R12), $0
	JEQ  keySlow
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(keyCold)
	LEAQ Filter_k(R12), DI
	MOVQ R13, DX
	QUERY(keySlow)
	SETEQ ret+24(FP)
	VZEROUPPER
	RET

keyCold:
	XXH3_COLD(keySlow)

keySlow:
	JMP ·containsKeyGo(SB)

// func containsBatchAVX2(k *kernel, hashes *uint64, out *bool, n int) (done int)
//
// out[i] = containsAVX2(k, hashes[i]) for i < done, in groups of 8 keys:
// first every key's remixed hash x and start s are computed and kept in
// the frame, and the 3 cache lines from its first quarter's first byte
// and the one holding its last (a query reads at most 160 bytes from
// there) are prefetched; then the keys are evaluated as in containsAVX2.
// It stops before the first key whose row meets blocks with different
// column counts (done < n; ContainsBatch answers that key with
// ContainsHash and resumes) and otherwise returns n.
// Frame: x at 0-63, s at 64-127, hashes at 128, group size at 136, out at
// 144, keys left at 152.
TEXT ·containsBatchAVX2(SB), NOSPLIT, $160-40
	MOVQ k+0(FP), DI
	MOVQ hashes+8(FP), SI
	MOVQ out+16(FP), AX
	MOVQ AX, 144(SP)
	MOVQ n+24(FP), AX
	MOVQ AX, 152(SP)
	VPBROADCASTD nibbleOnes<>(SB), Y10

group:
	MOVQ 152(SP), AX
	TESTQ AX, AX
	JLE finished
	MOVQ $8, BX
	CMPQ AX, BX
	CMOVQLT AX, BX
	MOVQ BX, 136(SP)
	XORL R10, R10
	MOVQ $0xd6e8feb86659fd93, CX

locate:
	MOVQ (SI)(R10*8), AX
	XORQ kernel_seedMix(DI), AX
	MOVQ AX, BX
	SHRQ $32, BX
	XORQ BX, AX
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
	SHRQ $5, DX
	MOVQ kernel_upper4(DI), R11
	CMPQ DX, R11
	CMOVQCS DX, R11
	MOVQ kernel_lower(DI), R12
	INCQ R12
	IMULQ R12, DX
	SUBQ R11, DX
	MOVQ kernel_data(DI), R9
	LEAQ (R9)(DX*4), R9
	PREFETCHT0 (R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 128(R9)
	PREFETCHT0 159(R9)
	INCQ R10
	CMPQ R10, 136(SP)
	JLT locate

	MOVQ 136(SP), AX
	LEAQ (SI)(AX*8), SI
	MOVQ SI, 128(SP)
	XORL SI, SI

evaluate:
	MOVQ (SP)(SI*8), R8   // x
	MOVQ 64(SP)(SI*8), CX // s
	MOVQ CX, R10
	ANDL $31, CX
	SHRQ $5, R10
	MOVQ R10, R11
	SUBQ kernel_edge(DI), R11
	CMPQ R11, $4
	JCS  edge
	MOVQ kernel_upper4(DI), R11
	MOVQ kernel_lower(DI), R13
	LEAQ 1(R13), R12
	CMPQ R10, R11
	CMOVQCS R10, R11
	SBBQ $-1, R13
	IMULQ R12, R10
	SUBQ R11, R10
	MOVQ kernel_data(DI), R9
	LEAQ (R9)(R10*4), R9
	LEAQ (R9)(R13*8), R11

	MOVQ R8, AX
	IMULQ rowMul<>+0(SB), AX
	ORQ $1, AX
	MOVQ R8, BX
	SHRQ $31, BX
	XORQ R8, BX
	IMULQ rowMul<>+8(SB), BX
	IMULQ rowMul<>+16(SB), R8
	SHRQ $32, R8

	MOVQ BX, DX
	SHLQ CX, AX, BX
	SHLQ CX, AX
	SHRQ $1, DX
	XORL $63, CX
	SHRQ CX, DX

	VMOVQ AX, X0
	VPSRLQ $32, X0, X5
	VPBROADCASTD X0, Y0
	VPBROADCASTD X5, Y5
	VMOVQ BX, X1
	VPSRLQ $32, X1, X6
	VPBROADCASTD X1, Y1
	VPBROADCASTD X6, Y6
	VMOVQ DX, X2
	VPBROADCASTD X2, Y2

	VPAND (R9), Y0, Y3
	VPAND (R9)(R13*4), Y5, Y4
	VPAND (R11), Y1, Y7
	VPAND (R11)(R13*4), Y6, Y8
	VPAND (R11)(R13*8), Y2, Y9
	VPXOR Y4, Y3, Y3
	VPXOR Y8, Y7, Y7
	VPXOR Y9, Y3, Y3
	VPXOR Y7, Y3, Y3

	VPSRLD $1, Y3, Y4
	VPXOR Y4, Y3, Y3
	VPSRLD $2, Y3, Y4
	VPXOR Y4, Y3, Y3
	VPAND Y10, Y3, Y3
	VPMULLD Y10, Y3, Y3
	VPSLLD $3, Y3, Y3
	VMOVMSKPS Y3, AX

	XORL R8, AX
	BZHIL R13, AX, AX
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

edge:
	// Keys answered: n - keys left + index in the group.
	SUBQ 152(SP), SI
	ADDQ n+24(FP), SI
	MOVQ SI, done+32(FP)
	VZEROUPPER
	RET

finished:
	MOVQ n+24(FP), AX
	MOVQ AX, done+32(FP)
	VZEROUPPER
	RET
