//go:build !purego

#include "textflag.h"

// INDEX issues the instruction prefetch for base[idx[0]], ...,
// base[idx[n-1]], cells of scale bytes; loop and done are its labels.
#define INDEX(prefetch, scale, loop, done) \
	MOVQ base+0(FP), AX; \
	MOVQ idx+8(FP), BX; \
	MOVQ n+16(FP), CX; \
	TESTQ CX, CX; \
	JLE done; \
loop: \
	MOVQ (BX), DX; \
	prefetch (AX)(DX*scale); \
	ADDQ $8, BX; \
	DECQ CX; \
	JNZ loop; \
done: \
	RET

// func Index8(base *uint8, idx *uint64, n int)
TEXT ·Index8(SB), NOSPLIT, $0-24
	INDEX(PREFETCHT0, 1, loop, done)

// func Index16(base *uint16, idx *uint64, n int)
TEXT ·Index16(SB), NOSPLIT, $0-24
	INDEX(PREFETCHT0, 2, loop, done)

// func Index64(base *uint64, idx *uint64, n int)
TEXT ·Index64(SB), NOSPLIT, $0-24
	INDEX(PREFETCHT0, 8, loop, done)

// func Index8L2(base *uint8, idx *uint64, n int)
TEXT ·Index8L2(SB), NOSPLIT, $0-24
	INDEX(PREFETCHT1, 1, loop, done)

// func Index16L2(base *uint16, idx *uint64, n int)
TEXT ·Index16L2(SB), NOSPLIT, $0-24
	INDEX(PREFETCHT1, 2, loop, done)
