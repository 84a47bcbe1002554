//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func addHash(f *Filter, h uint64) bool
//
// The body of (*Filter).AddHash: d = Mix64(h)|1, then for each of the k
// probes g = h + i*d (mod 2^64): DX:AX = g*len(words), word DX, bit
// AX>>58; BTS sets the bit and leaves the old one in CF, which ADC counts.
// Ten instructions per probe, none of them a branch on loaded data (the
// Go version needs about twice as many, mostly register moves around
// MULQ's fixed registers), so more consecutive adds fit in the reorder
// buffer and their cache misses overlap. Then ones += k - seen and
// count += (k - seen != 0), the result.
TEXT ·addHash(SB), NOSPLIT, $0-17
	MOVQ f+0(FP), R12
	MOVQ h+8(FP), CX

	// DI = Mix64(h) | 1, as hashing.Mix64.
	MOVQ CX, DI
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
	ORQ $1, DI

	MOVQ Filter_words(R12), SI   // &words[0]
	MOVQ Filter_words+8(R12), BX // len(words)
	MOVQ Filter_k(R12), R9
	MOVQ R9, R13
	XORQ R10, R10                // probes already set
	TESTQ R9, R9
	JLE done

loop:
	MOVQ CX, AX
	MULQ BX
	SHRQ $58, AX
	MOVQ (SI)(DX*8), R8
	BTSQ AX, R8
	ADCQ $0, R10
	MOVQ R8, (SI)(DX*8)
	ADDQ DI, CX
	DECQ R9
	JNZ loop

done:
	SUBQ R10, R13 // bits newly set
	ADDQ R13, Filter_ones(R12)
	XORL AX, AX
	TESTQ R13, R13
	SETNE AX
	ADDQ AX, Filter_count(R12)
	MOVB AX, ret+16(FP)
	RET
