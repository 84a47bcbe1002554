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

// keyAsmFor reports whether containsKey's assembly may answer Contains for
// a Filter hashing with h: h is XXH3 and the CPU has MULX (BMI2), which
// its probes use.
func keyAsmFor(h hashing.Hasher) bool { return haveMULX && h.Alg() == hashing.AlgXXH3 }
