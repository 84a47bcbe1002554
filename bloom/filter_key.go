package bloom

import (
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/xxh3key"
)

// inlineHash is what the amd64 key methods (addKey, containsKey in
// filter_add_amd64.s) need to hash a key with the filter's hasher
// themselves: xxh3 is set exactly when the hasher is XXH3, and then the
// other fields are the secret words of XXH3's short-input paths already
// combined with the seed, so that the assembly spends one XOR with a
// memory operand per input word instead of loading a constant and adding
// the seed. Every constructor sets it with inlineHashOf; a filter left
// with the zero value is still correct, only slower (every key takes the
// Go path through Hasher.Sum64).
type inlineHash struct {
	xxh3 bool
	seed uint64
	// mix[i] is the secret word at byte 8i plus the seed for even i,
	// minus the seed for odd i: the keys of the 17-128 byte path's
	// 16-byte mixes.
	mix [16]uint64
	// lo16 and hi16 key the 9-16 byte path: (S24^S32)+seed, (S40^S48)-seed.
	lo16, hi16 uint64
	// flip8 keys the 4-8 byte path: (S8^S16) - (seed ^ bswap32(seed)<<32).
	flip8 uint64
}

// inlineHashOf is the inlineHash of hasher h (words from package
// xxh3key): the zero value unless h is XXH3.
func inlineHashOf(h hashing.Hasher) inlineHash {
	if h.Alg() != hashing.AlgXXH3 {
		return inlineHash{}
	}
	seed := h.Seed()
	w := xxh3key.Of(seed)
	return inlineHash{xxh3: true, seed: seed, mix: w.Mix, lo16: w.Lo16, hi16: w.Hi16, flip8: w.Flip8}
}
