package hashing

import (
	"encoding/binary"
	"math/bits"

	"github.com/bloomery/bloomery/internal/xxh3secret"
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

// The XXH3-64 paths for keys of 4 to 8 and 9 to 16 bytes with a seed, as
// in the reference XXH3_64bits_withSeed: small enough for the compiler to
// inline into Sum64 and Sum64Batch.

// xxh3Len4To8 hashes 4 <= len(b) <= 8 bytes: both 32-bit halves
// (overlapping below 8 bytes), keyed, then the rrmxmx finalizer.
func xxh3Len4To8(b []byte, seed uint64) uint64 {
	n := len(b)
	s := seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32
	x := uint64(binary.LittleEndian.Uint32(b[n-4:])) + uint64(binary.LittleEndian.Uint32(b))<<32
	x ^= (xxh3secret.S1 ^ xxh3secret.S2) - s
	x ^= bits.RotateLeft64(x, 49) ^ bits.RotateLeft64(x, 24)
	x *= rrmxmxMul
	x ^= x>>35 + uint64(n)
	x *= rrmxmxMul
	return x ^ x>>28
}

// xxh3Len9To16 hashes 9 <= len(b) <= 16 bytes: the first and last 8
// bytes, keyed, folded by a 128-bit product.
func xxh3Len9To16(b []byte, seed uint64) uint64 {
	n := len(b)
	lo := binary.LittleEndian.Uint64(b) ^ ((xxh3secret.S3 ^ xxh3secret.S4) + seed)
	hi := binary.LittleEndian.Uint64(b[n-8:]) ^ ((xxh3secret.S5 ^ xxh3secret.S6) - seed)
	return avalanche(uint64(n) + bits.ReverseBytes64(lo) + hi + fold(lo, hi))
}
