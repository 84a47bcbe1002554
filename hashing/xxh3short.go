package hashing

import (
	"encoding/binary"
	"math/bits"
)

// as little-endian words: secretN is bytes 8N..8N+7. Seeded XXH3 of 4 to
// 128 bytes reads only these. Constants, so that the compiler folds the
// combinations of them that the short paths use.
const (
	secret0  = 0xbe4ba423396cfeb8
	secret1  = 0x1cad21f72c81017c
	secret2  = 0xdb979083e96dd4de
	secret3  = 0x1f67b3b7a4a44072
	secret4  = 0x78e5c0cc4ee679cb
	secret5  = 0x2172ffcc7dd05a82
	secret6  = 0x8e2443f7744608b8
	secret7  = 0x4c263a81e69035e0
	secret8  = 0xcb00c391bb52283c
	secret9  = 0xa32e531b8b65d088
	secret10 = 0x4ef90da297486471
	secret11 = 0xd8acdea946ef1938
	secret12 = 0x3f349ce33f76faa8
	secret13 = 0x1d4f0bc7c7bbdcf9
	secret14 = 0x3159b4cd4be0518a
	secret15 = 0x647378d9c97e9fc8
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
