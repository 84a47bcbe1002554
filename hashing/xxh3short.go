package hashing

import (
	"encoding/binary"
	"math/bits"
)

// XXH3's 64-bit prime 1 and the multipliers of its rrmxmx and avalanche
// finalizers.
const (
	prime64x1 = 0x9E3779B185EBCA87
	rrmxmxMul = 0x9FB21C651E98DF25
	avalMul   = 0x165667919E3779F9
)

// mix16 is XXH3's mix16B of b[0:16] keyed by secret words s0 and s1.
func mix16(b []byte, s0, s1, seed uint64) uint64 {
	return fold(binary.LittleEndian.Uint64(b)^(s0+seed), binary.LittleEndian.Uint64(b[8:])^(s1-seed))
}

// fold returns the high and low halves of the 128-bit product a*b XORed.
func fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// avalanche is XXH3's finalizer for inputs of 9 to 128 bytes.
func avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= avalMul
	return h ^ h>>32
}
