// Package bloom holds Bloomery's two Bloom filters: the standard Bloom
// filter (Filter), whose k probes spread over the whole bit array, and the
// cache-line blocked Bloom filter (Blocked), whose k probes fall in one
// 512-bit block, so a query costs one cache miss.
//
// # Choosing
//
// At equal memory the standard filter has the lower FPR (0.82% at 10
// bits/key against 0.96% blocked), but a query may touch k cache lines
// (about 2 for an absent key, k for a present one). The blocked filter
// touches exactly one, supports batch queries that overlap cache misses
// (ContainsBatch, AddBatch) and a lock-free concurrent mode
// (Params.Concurrent). Size it with NewBlockedForCapacity, which accounts
// for its FPR penalty (about 9.9 bits/key and k=6 for 1%, against 9.6 and k=7 standard).
// On amd64 its ContainsBatch checks each key's probes in one AVX-512
// register where the CPU has AVX-512 (GODEBUG=cpu.avx512f=off opts out),
// about twice as fast as the scalar loop otherwise used.
// The standard filter has batch methods too (ContainsBatch, AddHashBatch):
// AddHashBatch prefetches on arrays of 8 MiB or more, where its k
// scattered misses per key dominate; ContainsBatch pipelines from 64 MiB,
// testing each key's first two probes before fetching the rest.
//
// # Hashing
//
// Every key is hashed once to 64 bits with the filter's hashing.Hasher
// (XXH3 seed 0 by default; SipHash-2-4 with a secret key when keys may be
// adversarial). Add, Contains and their String variants hash the key;
// AddHash and ContainsHash take a hash the caller computed with the same
// hasher, so one hash can probe many filters. All positions derive from
// that one hash in 64-bit arithmetic: multiply-shift range reduction, no
// modulo, no 32-bit floor. The derivations are documented on Filter and
// Blocked and versioned by the container layout byte (Layout1, Layout2).
//
// # Sizing and overfill
//
// The standard filter takes m = n*ln(1/p)/ln²2 bits (rounded up to 64) and
// k = round(ln2*m/n). The blocked filter takes the smallest number of
// blocks whose Poisson-model FPR (fpmath.BlockedFPR) at k = BlockedK(m/n)
// meets p. Both keep working past their capacity with a rising FPR: they
// expose FillRatio, DesignFPR, EstimatedFPR (from the actual fill),
// ApproxCount (distinct keys estimated from the fill) and Overfilled (the
// estimate exceeds twice the design FPR). A standard filter sized for 10^6
// keys at 1% reaches about 1%, 5.8%, 16%, 44% and 83% FPR at 1, 1.5, 2, 3
// and 5 times its capacity, and reports Overfilled from about 1.16 times.
//
// # Persistence
//
// Both filters persist in Bloomery's container format (docs/format.md;
// kinds "bloom" and "blocked"; layout 2 for new standard filters, 1 for
// blocked ones and for standard filters written before layout 2, which
// every build keeps reading and writes back as they were). The params
// block and payload are documented on Layout1 and in docs/format/bloom.md: 36 bytes of params (m,
// k, capacity, design FPR, count) and the bit array as little-endian
// 64-bit words. Decode and DecodeBlocked validate every field and length
// before allocating; WriteTo and ReadFrom stream one container.
package bloom
