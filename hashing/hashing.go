// Package hashing is Bloomery's one hashing layer: every family turns a key
// into one 64-bit hash here and derives all its indices from that hash.
//
// # Algorithms
//
//   - [XXH3] (the default): XXH3-64 with a 64-bit seed, bit-exact with the
//     reference implementation (xxHash 0.8). Fast (about 6-10 ns for keys
//     of up to 32 bytes) and of excellent quality, but public: anyone who
//     knows the seed can compute which keys collide in a filter.
//   - [SipHash]: SipHash-2-4 keyed with a 128-bit secret. Use it when an
//     attacker may choose keys: without the key they cannot find keys that
//     are false positives, nor pollute a filter on purpose. Costs roughly
//     3-5x XXH3 on keys of 8 to 64 bytes (23-55 against 7-11 ns,
//     BenchmarkSum64).
//   - [XXH64]: XXH64 with a seed. Only formats that mandate it use it (the
//     Parquet split-block filter hashes with XXH64, seed 0).
//
// A persisted filter records the algorithm and the seed; for SipHash it
// records [Hasher.Fingerprint], a one-way fingerprint of the key, never the
// key itself. [hash/maphash] and any other per-process seed never feed a
// persisted filter: their hashes cannot be reproduced by another process.
//
// # Index derivation
//
// Families map hashes onto ranges with [Reduce] (Lemire's multiply-shift:
// the high 64 bits of the 128-bit product), never with a modulo, and derive
// further independent words with [Remix]. Everything is 64-bit: there is no
// 32-bit hash anywhere, so no FPR floor near n/2^32.
package hashing

import (
	"fmt"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/xxh3secret"
	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// Alg identifies a hash algorithm. Its value is persisted in the container
// header; append only.
type Alg uint8

// The algorithms.
const (
	AlgNone    Alg = 0
	AlgXXH3    Alg = 1 // XXH3-64, seeded
	AlgSipHash Alg = 2 // SipHash-2-4, 128-bit key
	AlgXXH64   Alg = 3 // XXH64, seeded
)

// String returns the algorithm's name as shown by `bloomery inspect`.
func (a Alg) String() string {
	switch a {
	case AlgXXH3:
		return "xxh3-64"
	case AlgSipHash:
		return "siphash-2-4"
	case AlgXXH64:
		return "xxh64"
	}
	return fmt.Sprintf("alg(%d)", uint8(a))
}

// Valid reports whether a is a known algorithm.
func (a Alg) Valid() bool { return a >= AlgXXH3 && a <= AlgXXH64 }

// Hasher hashes keys to 64 bits with one algorithm and one seed or key. It
// is a small value, safe to copy and to use from many goroutines.
//
// The zero Hasher is XXH3 with seed 0, the default of every family.
type Hasher struct {
	alg     Alg
	seed    uint64 // XXH3/XXH64 seed; SipHash key fingerprint
	k0, k1  uint64 // SipHash key halves
	keyless bool   // SipHash filter loaded without its key: Sum64 panics
}

// XXH3 returns a hasher that computes XXH3-64 with the given seed.
func XXH3(seed uint64) Hasher { return Hasher{alg: AlgXXH3, seed: seed} }

// XXH64 returns a hasher that computes XXH64 with the given seed.
func XXH64(seed uint64) Hasher { return Hasher{alg: AlgXXH64, seed: seed} }

// SipHash returns a hasher that computes SipHash-2-4 keyed with key. The key
// halves are read little-endian (k0 = key[0:8], k1 = key[8:16]), as in the
// reference implementation and BIP-158.
func SipHash(key [16]byte) Hasher {
	k0 := le64(key[0:8])
	k1 := le64(key[8:16])
	h := Hasher{alg: AlgSipHash, k0: k0, k1: k1}
	h.seed = fingerprint(k0, k1)
	return h
}

// SipHashKeys returns a SipHash-2-4 hasher from the two 64-bit key halves.
func SipHashKeys(k0, k1 uint64) Hasher {
	return Hasher{alg: AlgSipHash, k0: k0, k1: k1, seed: fingerprint(k0, k1)}
}

// fingerprintDomain is hashed under the secret key to identify it. SipHash
// is a PRF, so the fingerprint reveals nothing usable about the key.
const fingerprintDomain = "bloomery/key-fingerprint/v1"

func fingerprint(k0, k1 uint64) uint64 {
	return sipHash24(k0, k1, []byte(fingerprintDomain))
}

// Alg returns the hasher's algorithm.
func (h Hasher) Alg() Alg {
	if h.alg == AlgNone {
		return AlgXXH3
	}
	return h.alg
}

// Seed returns what a persisted filter records to pin the hasher: the seed
// for XXH3 and XXH64, the key fingerprint for SipHash.
func (h Hasher) Seed() uint64 { return h.seed }

// Keyed reports whether the hasher uses a secret key.
func (h Hasher) Keyed() bool { return h.alg == AlgSipHash }

// HasKey reports whether a keyed hasher holds its key. A keyed filter
// loaded for inspection without its key answers only the *Hash methods.
func (h Hasher) HasKey() bool { return h.alg == AlgSipHash && !h.keyless }

// Fingerprint returns the key fingerprint of a keyed hasher (0 otherwise).
func (h Hasher) Fingerprint() uint64 {
	if h.alg == AlgSipHash {
		return h.seed
	}
	return 0
}

// Equal reports whether two hashers compute the same function (for keyed
// hashers: whether their key fingerprints match).
func (h Hasher) Equal(o Hasher) bool { return h.Alg() == o.Alg() && h.seed == o.seed }

// String describes the hasher without revealing a key.
func (h Hasher) String() string {
	if h.Keyed() {
		return fmt.Sprintf("%s key-fingerprint=%016x", h.Alg(), h.seed)
	}
	return fmt.Sprintf("%s seed=%d", h.Alg(), h.seed)
}

// Sum64 hashes b. It does not allocate.
//
// XXH3 keys of 4 to 128 bytes, the usual lengths of filter keys, are
// hashed in Sum64's own body, bit-exact with the reference
// XXH3_64bits_withSeed (its len_4to8, len_9to16 and len_17to128 paths;
// tests compare every length from 0 to 300 under many seeds with
// github.com/zeebo/xxh3, which hashes the other lengths). Written out
// here, not called, because Go does not inline a function this large
// and the call was a quarter of the cost: 16-32 byte keys took 11.1 ns
// through the call, 8.0 ns here, 6.1 ns calling zeebo/xxh3 directly
// (medians of 10, BenchmarkSum64Layer: sum64, Sum64, zeebo). To hash
// many keys, [Hasher.Sum64Batch] is faster still.
func (h Hasher) Sum64(b []byte) uint64 {
	n := len(b)
	if h.alg > AlgXXH3 || uint(n-4) > 124 {
		return h.sum64(b)
	}
	if n <= 8 {
		return xxh3Len4To8(b, h.seed)
	}
	if n <= 16 {
		return xxh3Len9To16(b, h.seed)
	}
	// 16-byte pieces from both ends inwards, each keyed by two secret
	// words and folded.
	acc := uint64(n) * prime64x1
	if n > 32 {
		if n > 64 {
			if n > 96 {
				acc += mix16(b[48:], xxh3secret.S12, xxh3secret.S13, h.seed)
				acc += mix16(b[n-64:], xxh3secret.S14, xxh3secret.S15, h.seed)
			}
			acc += mix16(b[32:], xxh3secret.S8, xxh3secret.S9, h.seed)
			acc += mix16(b[n-48:], xxh3secret.S10, xxh3secret.S11, h.seed)
		}
		acc += mix16(b[16:], xxh3secret.S4, xxh3secret.S5, h.seed)
		acc += mix16(b[n-32:], xxh3secret.S6, xxh3secret.S7, h.seed)
	}
	acc += mix16(b, xxh3secret.S0, xxh3secret.S1, h.seed)
	acc += mix16(b[n-16:], xxh3secret.S2, xxh3secret.S3, h.seed)
	return avalanche(acc)
}

// Sum64Batch sets out[i] = Sum64(keys[i]) for every key; it panics if
// len(out) < len(keys). It does not allocate.
//
// It is the way to hash the keys of a batch query or of a static
// filter's construction: with XXH3 and keys of 4 to 32 bytes the whole
// hash is written out in its loop, with no call per key, so consecutive
// keys' hashes overlap in the core; other keys go through Sum64. On
// 1024 keys of 16-32 bytes in cache it took 4.7-6.1 ns a key against
// 8.2-9.5 for a loop calling Sum64 (BenchmarkSum64Batch, five runs).
// In benchreport at 10^8 string keys, blocked Bloom's batch query
// (hashing included) went from 4.18x and 4.27x blobloom's per-key query
// to 4.64x and 4.74x, alternated runs.
func (h Hasher) Sum64Batch(keys [][]byte, out []uint64) {
	out = out[:len(keys)]
	if h.alg > AlgXXH3 {
		for i, b := range keys {
			out[i] = h.sum64(b)
		}
		return
	}
	seed := h.seed
	for i, b := range keys {
		n := len(b)
		switch {
		case uint(n-4) > 28:
			out[i] = h.Sum64(b)
		case n <= 8:
			out[i] = xxh3Len4To8(b, seed)
		case n <= 16:
			out[i] = xxh3Len9To16(b, seed)
		default:
			// Sum64's last two mixes, all of the 17-32 byte path.
			out[i] = avalanche(uint64(n)*prime64x1 + mix16(b, xxh3secret.S0, xxh3secret.S1, seed) + mix16(b[n-16:], xxh3secret.S2, xxh3secret.S3, seed))
		}
	}
}

// sum64 is Sum64 for the keys its own body does not hash.
func (h Hasher) sum64(b []byte) uint64 {
	switch h.alg {
	case AlgNone, AlgXXH3:
		return xxh3.HashSeed(b, h.seed)
	case AlgSipHash:
		if h.keyless {
			panic("hashing: keyed filter was loaded without its key; supply the key or use the *Hash methods")
		}
		return sipHash24(h.k0, h.k1, b)
	case AlgXXH64:
		if h.seed == 0 {
			return xxhash.Sum64(b)
		}
		d := xxhash.NewWithSeed(h.seed)
		d.Write(b)
		return d.Sum64()
	}
	panic("hashing: invalid algorithm")
}

// Sum64String hashes s without copying it.
func (h Hasher) Sum64String(s string) uint64 { return h.Sum64(stringBytes(s)) }

// Restore rebuilds the hasher recorded in a persisted filter's header (alg
// and seed). want says what the caller expects:
//
//   - want.Hasher set: the record must name the same algorithm and seed (or
//     key fingerprint) and the result is that hasher (with its key), else
//     the error wraps [bloomery.ErrIncompatible].
//   - no expectation and an unkeyed record: the recorded hasher.
//   - no expectation and a keyed record: an error wrapping
//     [bloomery.ErrKeyRequired], unless want.Keyless, which yields a hasher
//     usable only through the *Hash methods (Sum64 panics).
func Restore(alg Alg, seed uint64, want Expect) (Hasher, error) {
	if !alg.Valid() {
		return Hasher{}, fmt.Errorf("hashing: unknown hash algorithm %d: %w", alg, bloomery.ErrUnsupportedVersion)
	}
	rec := Hasher{alg: alg, seed: seed}
	if want.Hasher != nil {
		w := *want.Hasher
		if w.Alg() != alg {
			return Hasher{}, fmt.Errorf("hashing: filter uses %s, caller expects %s: %w", alg, w.Alg(), bloomery.ErrIncompatible)
		}
		if w.seed != seed {
			if alg == AlgSipHash {
				return Hasher{}, fmt.Errorf("hashing: filter's key fingerprint %016x does not match the supplied key's %016x: %w", seed, w.seed, bloomery.ErrIncompatible)
			}
			return Hasher{}, fmt.Errorf("hashing: filter uses %s seed %d, caller expects seed %d: %w", alg, seed, w.seed, bloomery.ErrIncompatible)
		}
		w.alg = alg
		return w, nil
	}
	if alg == AlgSipHash {
		if !want.Keyless {
			return Hasher{}, fmt.Errorf("hashing: %w (key fingerprint %016x)", bloomery.ErrKeyRequired, seed)
		}
		rec.keyless = true
	}
	return rec, nil
}

// Expect says what a decoder should accept as a persisted filter's hash.
// The zero Expect accepts any unkeyed hasher and refuses keyed filters.
type Expect struct {
	// Hasher, when set, must match the persisted algorithm and seed (or
	// key fingerprint) exactly; the decoded filter then uses it.
	Hasher *Hasher
	// Keyless permits loading a keyed filter without its key, for
	// inspection or for callers that only use the *Hash methods.
	Keyless bool
}

// Want returns an Expect that requires h.
func Want(h Hasher) Expect { return Expect{Hasher: &h} }

// Reduce maps x uniformly onto [0, n) without division: the high 64 bits
// of the 128-bit product x*n (Lemire's fastrange). It uses the high bits of
// x, so callers must not reuse those bits for another decision.
func Reduce(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// Remix derives a new, independent-looking 64-bit word from h (a bijective
// finalizer from the murmur3/xxHash family, with different constants per
// round via the step argument).
func Remix(h, step uint64) uint64 {
	h ^= step * 0x9e3779b97f4a7c15
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	return h
}

// Mix64 is the murmur3 64-bit finalizer: a bijection with full avalanche.
func Mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
