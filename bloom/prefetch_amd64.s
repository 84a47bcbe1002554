#include "textflag.h"

// func prefetchLines(base *uint64, offs *uint64, n int)
// Issues PREFETCHT0 for &base[offs[i]], i < n. Prefetches never fault and
// retire at once, so all n cache misses are in flight together without
// holding up the reorder buffer.
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-24
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
