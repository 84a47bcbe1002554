// Package fuse implements binary fuse filters (Graf and Lemire, "Binary
// fuse filters: fast and tiny immutable filters", 2022): static
// approximate-membership filters built once from a complete key set, with
// 3-wise and 4-wise variants and 8-bit or 16-bit fingerprints.
//
//	kind      arity  fingerprint  bits/key (n = 10^7)  FPR
//	fuse8       3       uint8          9.02             2^-8  ~ 0.39 %
//	fuse8-4     4       uint8          8.61             2^-8
//	fuse16      3       uint16        18.04             2^-16 ~ 0.0015 %
//	fuse16-4    4       uint16        17.22             2^-16
//
// Use [Build] or a reusable [Builder] with key hashes from package hashing
// (one uint64 per key, made with Params.Hasher), or [BuildKeys] with the
// keys themselves. Queries read 3 or 4 cells; [Filter.ContainsBatch]
// overlaps the cache misses of many keys.
//
// # Structure
//
// The filter is an array of c cells of f bits, cut into segments of S
// cells (a power of two). A key with hash h is first re-mixed with the
// construction seed, x = murmur3fmix64(h + seed); its fingerprint is the
// low f bits of x XOR (x >> 32), and its arity positions are
//
//	h0 = (x * (segCount*S)) >> 64                (multiply-shift onto the first segCount segments)
//	hi = (h0 + i*S) XOR (offset_i(x) & (S-1))   i = 1..arity-1
//
// with offsets from bits 18.. and 0.. of x (arity 3) or 0.., 16.. and 32..
// (arity 4). Adding i*S moves to the i-th following segment and the XOR
// stays inside it, so the positions lie in arity consecutive segments:
// the hypergraph is "spatially coupled", which is what lets it be peeled
// at loads (keys per cell) of 1/1.125 and 1/1.075, against 1/1.23 for the
// xor filter whose three positions are independent.
//
// A key is reported present iff its fingerprint equals the XOR of the
// cells at its positions. Construction makes that true for every key; for
// any other key the XOR is an unrelated value, so the false-positive rate
// is 2^-f, independent of n.
//
// # Sizing
//
// The published empirical formulas (floor, not round: a segment twice as
// long often makes construction fail):
//
//	S      = 2^floor(ln n / ln 3.33 + 2.25)  (arity 3)   2^floor(ln n / ln 2.91 - 0.5)  (arity 4), in [4, 2^18]
//	factor = max(1.125, 0.875 + 0.25 ln(10^6)/ln n)      max(1.075, 0.77 + 0.305 ln(600000)/ln n)
//	segments = max(arity, ceil(round(n*factor) / S)),  segCount = segments - (arity-1),  c = segments*S
//
// Small sets cost more per key (11.3 bits at 10^3, 9.5 at 10^5 for fuse8),
// because the arity-1 boundary segments weigh more. [BitsPerKey] and
// [SizeBytes] expose the sizing.
//
// # Construction
//
// Build tries construction seeds from a deterministic sequence:
//
//  1. Counting sort of the re-mixed hashes by the segment of h0, so that
//     the following pass sweeps the array left to right and stays in
//     cache (keys of one segment touch only arity consecutive segments).
//  2. For every cell, accumulate the number of keys and the XOR of their
//     hashes (and, in two bits, the XOR of which position of each key the
//     cell is). A cell holding exactly one key knows that key.
//  3. Peel: repeatedly take a cell holding one key, record (key, cell),
//     and remove the key from its other cells, which may leave them with
//     one key. Success iff every key was peeled, in whatever order (the
//     order only changes the fingerprint values assign computes). Arrays
//     below 2^21 cells (about 1.9 million keys) are peeled depth first
//     from a left-to-right scan; larger ones in the order of a FIFO queue
//     fed by that scan, whose consecutive keys are independent, so their
//     cache misses overlap (a few percent faster there).
//  4. Assign in reverse peel order: the key's recorded cell gets
//     fingerprint XOR (its other cells); cells assigned later belong to
//     keys peeled earlier, which never touch it again.
//
// Duplicate hashes can never be peeled (they share all their cells). The
// add pass drops a duplicate when it meets its twin alone in a cell; if
// one slips through and the attempt fails, Build sorts and deduplicates
// the keys once and carries on, so duplicates never cause a failure. After
// [MaxAttempts] failed seeds Build returns an error wrapping
// bloomery.ErrBuildFailed (at the published sizes a single attempt
// succeeds with probability above 0.99 for n >= 10^4, and above 0.7 for
// tiny sets). Construction costs O(n) time and about 24 bytes of scratch
// per key (19 when peeling in queue order, which needs no stack).
//
// # Costs and concurrency
//
// A query costs one hash, one multiply and 3 or 4 independent cell reads:
// at most 3 or 4 cache misses, issued together. ContainsBatch locates and
// prefetches the cells of keys 8 at a time, 24 keys ahead of the ones it
// checks, so the misses of about 24 keys are in flight at once. On Linux,
// fingerprint arrays of 4 MiB and more are placed on transparent huge pages
// (madvise MADV_HUGEPAGE before filling, MADV_COLLAPSE after), which spares
// a page-table walk per cell read on arrays far larger than the TLB reach. Filters are
// immutable and safe for concurrent use; Builders are not.
//
// # Format
//
// Filters persist in the Bloomery container (docs/format.md) with kind
// fuse8, fuse16, fuse8-4 or fuse16-4 and layout byte 1; the params block
// and payload are described at [Filter.AppendBinary] and in
// docs/format/fuse.md.
package fuse
