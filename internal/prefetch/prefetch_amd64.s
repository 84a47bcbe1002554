//go:build !purego

#include "textflag.h"

// func Index8(base *uint8, idx *uint64, n int)
// Issues PREFETCHT0 for base[idx[0]], ..., base[idx[n-1]].
TEXT ·Index8(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done8
loop8:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, BX
	DECQ CX
	JNZ loop8
done8:
	RET

// func Index16(base *uint16, idx *uint64, n int)
// Issues PREFETCHT0 for base[idx[0]], ..., base[idx[n-1]].
TEXT ·Index16(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done16
loop16:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*2)
	ADDQ $8, BX
	DECQ CX
	JNZ loop16
done16:
	RET

// func Index64(base *uint64, idx *uint64, n int)
// Issues PREFETCHT0 for base[idx[0]], ..., base[idx[n-1]].
TEXT ·Index64(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done64
loop64:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*8)
	ADDQ $8, BX
	DECQ CX
	JNZ loop64
done64:
	RET

// func Index8L2(base *uint8, idx *uint64, n int)
// Issues PREFETCHT1 for base[idx[0]], ..., base[idx[n-1]].
TEXT ·Index8L2(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done8l2
loop8l2:
	MOVQ (BX), DX
	PREFETCHT1 (AX)(DX*1)
	ADDQ $8, BX
	DECQ CX
	JNZ loop8l2
done8l2:
	RET

// func Index16L2(base *uint16, idx *uint64, n int)
// Issues PREFETCHT1 for base[idx[0]], ..., base[idx[n-1]].
TEXT ·Index16L2(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ idx+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done16l2
loop16l2:
	MOVQ (BX), DX
	PREFETCHT1 (AX)(DX*2)
	ADDQ $8, BX
	DECQ CX
	JNZ loop16l2
done16l2:
	RET
