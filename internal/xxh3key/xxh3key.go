// Package xxh3key precomputes, for one seed, the words with which the
// families' assembly key paths (bloom's and ribbon's xxh3_amd64.h) hash a
// short key with seeded XXH3-64 themselves, so that each input word costs
// one XOR with a memory operand instead of loading a secret word and
// adding or subtracting the seed.
//
// The words follow the reference XXH3 (XXH3_64bits_withSeed) for inputs of
// 4 to 128 bytes; the families' tests pin their assembly to
// hashing.XXH3 at every length from 0 to 256.
package xxh3key

import (
	"math/bits"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/xxh3secret"
)

// Key is what an assembly key path reads to hash a key with a filter's
// hasher itself. XXH3 is set exactly when the hasher is XXH3, and then
// the other fields are the secret words of XXH3's short-input paths
// already combined with the seed. A filter embeds it as a defined type of
// its own package (type inlineHash xxh3key.Key), so that its go_asm.h
// names the field offsets (inlineHash_Mix...); a filter left with the
// zero Key is still correct, only slower (every key takes the Go path
// through Hasher.Sum64).
type Key struct {
	XXH3 bool
	Seed uint64
	// Mix[i] is the secret word at byte 8i plus the seed for even i,
	// minus the seed for odd i: the keys of the 17-128 byte path's 16-byte
	// mixes.
	Mix [16]uint64
	// Lo16 and Hi16 key the 9-16 byte path: (S24^S32)+seed, (S40^S48)-seed.
	Lo16, Hi16 uint64
	// Flip8 keys the 4-8 byte path: (S8^S16) - (seed ^ bswap32(seed)<<32).
	Flip8 uint64
}

// For returns the Key of hasher h: the zero value unless h is XXH3.
func For(h hashing.Hasher) Key {
	if h.Alg() != hashing.AlgXXH3 {
		return Key{}
	}
	seed := h.Seed()
	k := Key{XXH3: true, Seed: seed}
	for i, s := range xxh3secret.Words {
		if i%2 == 0 {
			k.Mix[i] = s + seed
		} else {
			k.Mix[i] = s - seed
		}
	}
	k.Lo16 = (xxh3secret.S3 ^ xxh3secret.S4) + seed
	k.Hi16 = (xxh3secret.S5 ^ xxh3secret.S6) - seed
	k.Flip8 = (xxh3secret.S1 ^ xxh3secret.S2) - (seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32)
	return k
}
