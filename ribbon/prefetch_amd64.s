//go:build !purego

#include "textflag.h"

// func prefetchWords(base *uint64, offs *uint64, n int)
// Issues PREFETCHT0 for &base[offs[i]], i < n. A prefetch never faults
// and retires at once, so all n cache misses are in flight together
// without filling the reorder buffer.
TEXT ·prefetchWords(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ base+0(FP), AX
	MOVQ offs+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*8)
	ADDQ $8, BX
	DECQ CX
	JNE loop
done:
	RET
