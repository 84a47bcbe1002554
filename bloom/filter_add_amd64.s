//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// The XXH3 macro hashes with the inlineHash at IH(R12): Filter's.
#define IH Filter_inline
#include "xxh3_amd64.h"

// STEP sets d = rotl(h, 32) | 1, the probe step of layout 2 (see Filter,
// "Probes"); h is left as is. Three instructions, none a multiply: layout
// 1's step, Mix64(h) | 1, took twelve, with two dependent multiplies
// ahead of every probe but the first. STEPX is STEP in two, with RORX
// (BMI2), for the query routines, which need BMI2 for MULX anyway.
#define STEP(h, d) \
	MOVQ h, d; \
	RORQ $32, d; \
	ORQ $1, d;

#define STEPX(h, d) \
	RORXQ $32, h, d; \
	ORQ $1, d;

// The assembly sets and tests layout 2's probes only: the add entries
// send a layout 1 filter (decoded from an older file) to the Go path
// (addHashGo, addKeyGo), as setProbes does its queries.
#define LAYOUT2(other) \
	CMPB Filter_layout(R12), $const_Layout2; \
	JNE  other;

// PROBES_SET sets the k probes of the hash in CX in the filter at R12 and
// stores the "was new" answer at ret: the body of (*Filter).AddHash.
// d = rotl(h, 32)|1, then for each probe g = h + i*d (mod 2^64): DX:AX =
// g*len(words), word DX; BTS sets bit g mod 64 (it reads the bit number
// from g's register as it is) and leaves the old one in CF, which ADC
// counts. Nine instructions per probe, none of them a
// branch on loaded data (the Go version needs about twice as many, mostly
// register moves around MULQ's fixed registers), so more consecutive adds
// fit in the reorder buffer and their cache misses overlap. Then
// ones += k - seen and count += (k - seen != 0), the result.
// Clobbers AX, BX, DX, SI, DI, R8-R11, R13.
#define PROBES_SET(ret) \
	STEP(CX, DI); \
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
	MOVQ (SI)(DX*8), R8; \
	BTSQ CX, R8; \
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

// PROBE tests one probe of containsKey: the hash g in DX, the step in
// DI, the words at SI, their count in BX; a clear bit jumps to no, else
// g += d. MULX (BMI2) leaves g in DX and writes the word index to a
// register of its choice (the low product, which layout 1 took its bit
// from, goes to AX unused), and BT takes bit g mod 64 from DX itself, so
// a probe is five instructions where MULQ, whose operand and results are
// fixed in AX and DX, needed two more (a copy of g, layout 1's shift of
// the bit): that many fewer per query in the reorder window, and more
// consecutive queries' cache misses in flight. With 16-32 byte keys at
// 10^7 keys that made queries 1.04-1.11x faster in five alternated
// same-process runs against bits-and-blooms (ratios 2.68-2.94 against
// 2.53-2.69 on present keys, 2.59-2.83 against 2.47-2.68 on absent ones).
// Clobbers AX, R8, R10.
#define PROBE(no) \
	MULXQ BX, AX, R10; \
	MOVQ (SI)(R10*8), R8; \
	BTQ  DX, R8; \
	JCC  no; \
	ADDQ DI, DX;

// probesK runs containsKey's K probes in a row and answers for it (its
// frame: the answer at 32(SP)). probes0 answers true, as no probes do
// (every Filter has k >= 1; the zero Filter takes probesGo).
#define ANSWER \
	MOVB $1, 32(SP); \
	RET; \
no: \
	MOVB $0, 32(SP); \
	RET

// SETPROBE sets one probe of addKey (PROBES_SET's loop body): the hash
// g in CX, the step in DI, the words at SI, their count in BX, the count
// of bits already set in R10. Clobbers AX, DX, R8.
#define SETPROBE \
	MOVQ CX, AX; \
	MULQ BX; \
	MOVQ (SI)(DX*8), R8; \
	BTSQ CX, R8; \
	ADCQ $0, R10; \
	MOVQ R8, (SI)(DX*8); \
	ADDQ DI, CX;

// SETANSWER ends addKey as PROBES_SET ends: k (in R13) minus the bits
// already set (R10) is the number newly set; the answer at 32(SP), the
// result slot of addKey's frame.
#define SETANSWER \
	SUBQ R10, R13; \
	ADDQ R13, Filter_ones(R12); \
	XORL AX, AX; \
	TESTQ R13, R13; \
	SETNE AX; \
	ADDQ AX, Filter_count(R12); \
	MOVB AX, 32(SP); \
	RET

// func addHash(f *Filter, h uint64) bool
TEXT ·addHash(SB), NOSPLIT, $0-17
	MOVQ f+0(FP), R12
	LAYOUT2(addHashSlow)
	MOVQ h+8(FP), CX
	PROBES_SET(ret+16(FP))
addHashSlow:
	JMP ·addHashGo(SB)

// func keyHash(f *Filter, p *byte, n int) (h uint64, ok bool)
//
// The XXH3 macro on its own, for tests: ok is false for the lengths it
// leaves to the Go path.
TEXT ·keyHash(SB), NOSPLIT, $0-33
	MOVQ f+0(FP), R12
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(keyHashCold)
	MOVQ R13, h+24(FP)
	MOVB $1, ok+32(FP)
	RET
keyHashCold:
	XXH3_COLD(keyHashNo)
keyHashNo:
	MOVQ $0, h+24(FP)
	MOVB $0, ok+32(FP)
	RET

// func addKey(f *Filter, p *byte, n int) bool
//
// (*Filter).Add: the XXH3 macro, then PROBES_SET's probes; a hasher
// other than XXH3 or a key length the macro does not cover goes to
// addKeyGo. As containsKey, for k <= 16 it jumps through setTab to a
// straight run of k probes (sets1..sets16, seven instructions a probe
// instead of nine).
TEXT ·addKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	CMPB Filter_inline+inlineHash_XXH3(R12), $0
	JEQ  addKeySlow
	LAYOUT2(addKeySlow)
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(addKeyCold)
	MOVQ R13, CX
	STEP(CX, DI)
	MOVQ Filter_words(R12), SI
	MOVQ Filter_words+8(R12), BX
	MOVQ Filter_k(R12), R9
	MOVQ R9, R13
	XORQ R10, R10
	CMPQ R9, $16
	JA   addKeyLoop
	LEAQ setTab<>(SB), AX
	JMP  (AX)(R9*8)
addKeyLoop:
	SETPROBE
	DECQ R9
	JNZ  addKeyLoop
	SETANSWER
addKeyCold:
	XXH3_COLD(addKeySlow)
addKeySlow:
	JMP ·addKeyGo(SB)

// func containsKey(f *Filter, p *byte, n int) bool
//
// (*Filter).Contains: the XXH3 macro, then ContainsHash's probes (stop
// at the first clear bit). One indirect jump through probeTab, at the
// index the filter's probes field holds (probesFor), goes to the
// routine that answers: a straight run of k <= 16 probes
// (probes0..probes16, five instructions a probe), the loop for larger k
// (seven a probe), the paired start of small filters (probesPair), or
// containsKeyGo (probesGo: a hasher other than XXH3, a CPU without
// BMI2, the zero Filter). Key lengths the macro leaves out go to
// containsKeyGo too. The jump is predicted, since a filter's routine
// never changes, and it replaces the tests of the hasher, the array size
// and k that each query made before: six instructions fewer a query
// (callgrind: 130 instead of 136 for a present 16-32 byte key through a
// method value, 99 instead of 105 for an absent one), and string-key
// queries 1.04-1.07x faster against bits-and-blooms at 10^7 keys.
// The routines take the hash g in DX, the step in DI, the words at SI
// and their count in BX, and answer in containsKey's result slot,
// 32(SP) (they are reached by jumps, on containsKey's frame).
TEXT ·containsKey(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	XXH3(containsKeyCold)
	STEPX(R13, DI)
	MOVQ R13, DX
	MOVQ Filter_words(R12), SI
	MOVQ Filter_words+8(R12), BX
	MOVBQZX Filter_probes(R12), R9
	LEAQ probeTab<>(SB), AX
	JMP  (AX)(R9*8)
containsKeyCold:
	XXH3_COLD(containsKeySlow)
containsKeySlow:
	JMP ·containsKeyGo(SB)

// func containsHash(f *Filter, h uint64, _ uintptr) bool
//
// (*Filter).ContainsHash: containsKey without the hash, through
// hashProbeTab (probeTab but for its probesGo entry) at the filter's
// hprobes field. The third argument only puts the result where the
// probe routines write it, in the slot containsKey's has.
TEXT ·containsHash(SB), NOSPLIT, $0-25
	MOVQ f+0(FP), R12
	MOVQ h+8(FP), DX
	STEPX(DX, DI)
	MOVQ Filter_words(R12), SI
	MOVQ Filter_words+8(R12), BX
	MOVBQZX Filter_hprobes(R12), R9
	LEAQ hashProbeTab<>(SB), AX
	JMP  (AX)(R9*8)

// hashProbesGo answers containsHash through the Go path.
TEXT hashProbesGo<>(SB), NOSPLIT|NOFRAME, $0
	JMP ·containsHashGo(SB)

// probesGo answers through the Go path (probesGo): see containsKey.
TEXT probesGo<>(SB), NOSPLIT|NOFRAME, $0
	JMP ·containsKeyGo(SB)

// probesLoop runs k > 16 probes (probesLoop); probesLoopN runs R9 >= 1.
TEXT probesLoop<>(SB), NOSPLIT|NOFRAME, $0
	MOVQ Filter_k(R12), R9
	JMP  probesLoopN<>(SB)

TEXT probesLoopN<>(SB), NOSPLIT|NOFRAME, $0
loop:
	PROBE(no)
	DECQ R9
	JNZ  loop
	ANSWER

// probesPair serves filters of at most pairMaxBytes with k >= 2
// (probesPair): it reads the first two probes and tests them together,
// then runs the other k-2. Such a filter sits in the cache, where a
// query's time goes mostly to the early exit's mispredicted branch (an
// absent key clears it at a coin flip per probe at the design fill): one
// test for the first two probes exits with one branch for 3 absent keys
// in 4. In same-process runs with 16-32 byte keys that made absent-key
// queries 1.15-1.25x faster on filters of 1.2 to 6 MB, present keys
// unchanged; at 8 MB it was even and at 12 MB up to 1.05x slower (there
// the always-read second line costs memory parallelism), hence the
// bound.
TEXT probesPair<>(SB), NOSPLIT|NOFRAME, $0
	MULXQ BX, AX, R10
	MOVQ (SI)(R10*8), R8
	BTQ  DX, R8
	SETCS R11
	ADDQ DI, DX
	MULXQ BX, AX, R10
	MOVQ (SI)(R10*8), R8
	BTQ  DX, R8
	SETCS R10
	ANDB R11, R10
	JZ   no
	ADDQ DI, DX
	MOVQ Filter_k(R12), R9
	SUBQ $2, R9
	CMPQ R9, $16
	JA   more
	LEAQ probeTab<>+(const_probesRun0*8)(SB), AX
	JMP  (AX)(R9*8)
more:
	JMP  probesLoopN<>(SB)
no:
	MOVB $0, 32(SP)
	RET

TEXT probes0<>(SB), NOSPLIT|NOFRAME, $0
	MOVB $1, 32(SP)
	RET

TEXT probes1<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	ANSWER

TEXT probes2<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes3<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes4<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes5<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes6<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes7<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes8<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes9<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes10<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes11<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes12<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes13<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes14<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes15<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

TEXT probes16<>(SB), NOSPLIT|NOFRAME, $0
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	PROBE(no)
	ANSWER

// PROBETAB fills entries 1 on of a table of probe routines, those
// containsKey and containsHash share: probesLoop, probesPair, then the
// runs of 0 to 16 probes (see probesFor). Entry 0, the Go path, is each
// table's own.
#define PROBETAB(tab) \
	DATA tab+8(SB)/8, $probesLoop<>(SB); \
	DATA tab+16(SB)/8, $probesPair<>(SB); \
	DATA tab+24(SB)/8, $probes0<>(SB); \
	DATA tab+32(SB)/8, $probes1<>(SB); \
	DATA tab+40(SB)/8, $probes2<>(SB); \
	DATA tab+48(SB)/8, $probes3<>(SB); \
	DATA tab+56(SB)/8, $probes4<>(SB); \
	DATA tab+64(SB)/8, $probes5<>(SB); \
	DATA tab+72(SB)/8, $probes6<>(SB); \
	DATA tab+80(SB)/8, $probes7<>(SB); \
	DATA tab+88(SB)/8, $probes8<>(SB); \
	DATA tab+96(SB)/8, $probes9<>(SB); \
	DATA tab+104(SB)/8, $probes10<>(SB); \
	DATA tab+112(SB)/8, $probes11<>(SB); \
	DATA tab+120(SB)/8, $probes12<>(SB); \
	DATA tab+128(SB)/8, $probes13<>(SB); \
	DATA tab+136(SB)/8, $probes14<>(SB); \
	DATA tab+144(SB)/8, $probes15<>(SB); \
	DATA tab+152(SB)/8, $probes16<>(SB)

// probeTab is the table of containsKey's routines, indexed by a
// Filter's probes field (probesGo, probesLoop, probesPair, then
// probesRun0+k for the run of k probes).
DATA probeTab<>+0(SB)/8, $probesGo<>(SB)
PROBETAB(probeTab<>)
GLOBL probeTab<>(SB), RODATA|NOPTR, $160

// hashProbeTab is probeTab for containsHash, at a Filter's hprobes.
DATA hashProbeTab<>+0(SB)/8, $hashProbesGo<>(SB)
PROBETAB(hashProbeTab<>)
GLOBL hashProbeTab<>(SB), RODATA|NOPTR, $160

// setsK runs addKey's K probes in a row and answers for it.

TEXT sets0<>(SB), NOSPLIT|NOFRAME, $0
	SETANSWER

TEXT sets1<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETANSWER

TEXT sets2<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets3<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets4<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets5<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets6<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets7<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets8<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets9<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets10<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets11<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets12<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets13<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets14<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets15<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

TEXT sets16<>(SB), NOSPLIT|NOFRAME, $0
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETPROBE
	SETANSWER

// setTab[k] is the run of k probes addKey jumps to.
DATA setTab<>+0(SB)/8, $sets0<>(SB)
DATA setTab<>+8(SB)/8, $sets1<>(SB)
DATA setTab<>+16(SB)/8, $sets2<>(SB)
DATA setTab<>+24(SB)/8, $sets3<>(SB)
DATA setTab<>+32(SB)/8, $sets4<>(SB)
DATA setTab<>+40(SB)/8, $sets5<>(SB)
DATA setTab<>+48(SB)/8, $sets6<>(SB)
DATA setTab<>+56(SB)/8, $sets7<>(SB)
DATA setTab<>+64(SB)/8, $sets8<>(SB)
DATA setTab<>+72(SB)/8, $sets9<>(SB)
DATA setTab<>+80(SB)/8, $sets10<>(SB)
DATA setTab<>+88(SB)/8, $sets11<>(SB)
DATA setTab<>+96(SB)/8, $sets12<>(SB)
DATA setTab<>+104(SB)/8, $sets13<>(SB)
DATA setTab<>+112(SB)/8, $sets14<>(SB)
DATA setTab<>+120(SB)/8, $sets15<>(SB)
DATA setTab<>+128(SB)/8, $sets16<>(SB)
GLOBL setTab<>(SB), RODATA|NOPTR, $136
