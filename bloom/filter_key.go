package bloom

import (
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/xxh3key"
)

// inlineHash is what the amd64 key methods (addKey, containsKey in
// filter_add_amd64.s; blockedAddKey, blockedContainsKey) read to hash a
// key with the filter's hasher themselves (see xxh3key.Key). Every
// constructor sets it with inlineHashOf.
type inlineHash xxh3key.Key

// inlineHashOf is the inlineHash of hasher h: the zero value unless h is
// XXH3.
func inlineHashOf(h hashing.Hasher) inlineHash { return inlineHash(xxh3key.For(h)) }

// The routines containsKey's assembly jumps to once it has hashed a key:
// a Filter's probes field indexes its table (probeTab in
// filter_add_amd64.s), so the one indirect jump, predicted since a
// filter's routine never changes, replaces tests of the hasher, the array
// size and k on every query.
const (
	probesGo   = 0 // the Go path, containsKeyGo: not XXH3, no BMI2, or layout 1; the zero Filter's
	probesLoop = 1 // k > 16 probes in a loop
	probesPair = 2 // the first two probes tested together, then the rest (small arrays)
	probesRun0 = 3 // probesRun0+k: a straight run of k <= 16 probes
)

// pairMaxBytes bounds the arrays whose queries test their first two
// probes together (see probesPair in filter_add_amd64.s).
const pairMaxBytes = 4 << 20

// setProbes sets f's probes and hprobes from its hasher, array, k and
// layout: every constructor calls it once the Filter holds them.
func (f *Filter) setProbes() {
	f.probes = probesFor(f.hasher, f.layout, uint64(len(f.words)), f.k)
	f.hprobes = hashProbesFor(f.layout, uint64(len(f.words)), f.k)
}

// probesFor returns the probes routine of containsKey for a Filter of the
// given layout, number of words and probes hashing with h: probesGo
// unless h is XXH3 (the hash the assembly computes), the layout is 2 (the
// assembly probes are layout 2's; the Go path serves both) and the CPU
// has MULX (BMI2), which the assembly probes use.
func probesFor(h hashing.Hasher, layout uint8, words uint64, k int) uint8 {
	return routineFor(h.Alg() == hashing.AlgXXH3 && layout == Layout2, words, k)
}

// hashProbesFor returns the probes routine of containsHash, which takes
// a hash of any hasher: probesGo only for layout 1 or without MULX.
func hashProbesFor(layout uint8, words uint64, k int) uint8 {
	return routineFor(layout == Layout2, words, k)
}

// routineFor is the routine for k probes over the given number of words,
// probesGo when asm is false (the assembly cannot serve the filter) or
// the CPU lacks MULX.
func routineFor(asm bool, words uint64, k int) uint8 {
	switch {
	case !asm || !haveMULX:
		return probesGo
	case k >= 2 && words <= pairMaxBytes/8:
		return probesPair
	case k > 16:
		return probesLoop
	}
	return probesRun0 + uint8(k)
}
