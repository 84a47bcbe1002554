// Package xxh3secret holds the first 128 bytes of XXH3's default secret
// (the reference implementation's kSecret), the only part of it that
// seeded XXH3-64 of 4 to 128 bytes reads, for the code that hashes such
// keys itself: hashing.Hasher.Sum64 and the families' assembly key paths
// (through internal/xxh3key).
package xxh3secret

// S0 to S15 are the secret as little-endian words: Sn is bytes 8n..8n+7.
// They are constants so that the compiler folds the combinations of them
// that the short-input paths use.
const (
	S0  = 0xbe4ba423396cfeb8
	S1  = 0x1cad21f72c81017c
	S2  = 0xdb979083e96dd4de
	S3  = 0x1f67b3b7a4a44072
	S4  = 0x78e5c0cc4ee679cb
	S5  = 0x2172ffcc7dd05a82
	S6  = 0x8e2443f7744608b8
	S7  = 0x4c263a81e69035e0
	S8  = 0xcb00c391bb52283c
	S9  = 0xa32e531b8b65d088
	S10 = 0x4ef90da297486471
	S11 = 0xd8acdea946ef1938
	S12 = 0x3f349ce33f76faa8
	S13 = 0x1d4f0bc7c7bbdcf9
	S14 = 0x3159b4cd4be0518a
	S15 = 0x647378d9c97e9fc8
)

// Words is S0 to S15 as an array, for code that indexes them.
var Words = [16]uint64{S0, S1, S2, S3, S4, S5, S6, S7, S8, S9, S10, S11, S12, S13, S14, S15}
