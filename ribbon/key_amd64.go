//go:build !purego

package ribbon

import (
	"math/bits"

	"github.com/bloomery/bloomery/hashing"
)

// inlineHash is what containsKey (query_amd64.s) needs to hash a key with
// the filter's hasher itself: xxh3 is set exactly when the hasher is XXH3
// and the assembly kernel serves the filter (kernel.avx2), and then the
// other fields are the secret words of XXH3's short-input paths already
// combined with the seed, so that the assembly spends one XOR with a
// memory operand per input word instead of loading a constant and adding
// the seed. setKernel sets it, and every constructor (Build, Decode and
// so UnmarshalBinary) calls setKernel after setting the hasher; a filter
// left with the zero value is still correct, only slower (every key
// takes the Go path through Hasher.Sum64).
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

// xxh3Secret holds the first 128 bytes of XXH3's default secret (the
// reference's kSecret) as little-endian words: word i is bytes 8i..8i+7.
// TestContainsKeyMatchesHash checks the assembly built on them against
// hashing.XXH3 at every length from 0 to 256.
var xxh3Secret = [16]uint64{
	0xbe4ba423396cfeb8, 0x1cad21f72c81017c, 0xdb979083e96dd4de, 0x1f67b3b7a4a44072,
	0x78e5c0cc4ee679cb, 0x2172ffcc7dd05a82, 0x8e2443f7744608b8, 0x4c263a81e69035e0,
	0xcb00c391bb52283c, 0xa32e531b8b65d088, 0x4ef90da297486471, 0xd8acdea946ef1938,
	0x3f349ce33f76faa8, 0x1d4f0bc7c7bbdcf9, 0x3159b4cd4be0518a, 0x647378d9c97e9fc8,
}

// inlineHashOf is the inlineHash of hasher h: the zero value unless h is
// XXH3.
func inlineHashOf(h hashing.Hasher) inlineHash {
	if h.Alg() != hashing.AlgXXH3 {
		return inlineHash{}
	}
	seed := h.Seed()
	ih := inlineHash{xxh3: true, seed: seed}
	for i, w := range xxh3Secret {
		if i%2 == 0 {
			ih.mix[i] = w + seed
		} else {
			ih.mix[i] = w - seed
		}
	}
	ih.lo16 = (xxh3Secret[3] ^ xxh3Secret[4]) + seed
	ih.hi16 = (xxh3Secret[5] ^ xxh3Secret[6]) - seed
	ih.flip8 = (xxh3Secret[1] ^ xxh3Secret[2]) - (seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32)
	return ih
}

// containsKey is (*Filter).Contains of the n bytes at p. When f.k.ih.xxh3
// (XXH3 hasher, assembly kernel) and 4 <= n <= 128 it hashes them with
// the XXH3 macro of xxh3_amd64.h and evaluates the hash with the kernel
// of containsAVX2 in the same function, with no call in between; other
// hashers, other lengths, filters the kernel does not serve and the rare
// rows next to the lower/upper boundary tail-jump to containsKeyGo.
//
//go:noescape
func containsKey(f *Filter, p *byte, n int) bool
