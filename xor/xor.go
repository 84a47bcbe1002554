// Package xor implements the xor filter with 8-bit fingerprints (Graf and
// Lemire, "Xor filters: faster and smaller than Bloom and cuckoo filters",
// 2020): a static approximate-membership filter built once from a complete
// key set, with a false-positive rate of 2^-8 (about 0.39 %) at 9.84 bits
// per key.
//
// The binary fuse filters of package fuse need about 9.0 bits per key for
// the same rate and build faster; the xor filter remains for compatibility
// with systems that ship it.
//
// # Structure
//
// The array has c = 32 + ceil(1.23 n) cells, rounded down to a multiple of
// 3, in three blocks of L = c/3 cells. A key's 64-bit hash h (from package
// hashing, made with the filter's Hasher) is re-mixed with the construction
// seed, x = murmur3fmix64(h + seed); its fingerprint is the low 8 bits of
// x XOR (x >> 32) and its positions are one cell per block:
//
//	h_i = i*L + ((rotl64(x, 21*i) * L) >> 64)    i = 0, 1, 2
//
// (multiply-shift of three rotations of x, so each position depends mainly
// on a different stretch of x's bits). A key is reported present iff its
// fingerprint equals the XOR of its three cells; for other keys the XOR is
// an unrelated byte, so the false-positive rate is 2^-8.
//
// The factor 1.23 is just above the threshold (about 1.222) below which a
// random 3-hypergraph with one vertex per cell and one edge per key can no
// longer be peeled; the 32 extra cells carry small sets.
//
// # Construction
//
// For each construction seed: every cell accumulates its number of keys
// and the XOR of their hashes; cells holding one key are peeled (the key
// is recorded and removed from its other cells, which may then hold one
// key), and if every key peels, the fingerprints are assigned in reverse
// peel order, each key's peeled cell getting fingerprint XOR its two other
// cells. A failed attempt (probability a few percent at the published
// size) retries with the next seed, up to [MaxAttempts], then returns an
// error wrapping bloomery.ErrBuildFailed. Duplicate hashes, which can never
// be peeled, are dropped when met alone with their twin in a cell, and
// otherwise by a sort after the first failed attempt: they never cause a
// failure. Positions are uniform over the whole array, so construction is
// about twice as slow per key as a binary fuse filter's on large sets; from
// 2^20 cells on, it prefetches the cells it is about to update (the next
// keys' while adding and assigning), which changes no byte of the result,
// and peels in the order of a FIFO queue, prefetching the cells of each
// queued cell's key, instead of depth first: consecutive keys are then
// independent and their misses overlap (peeling about 20 % faster at 10^6
// and 10^7 keys). The order changes only the fingerprint values: any
// order that peels every key gives a valid filter.
//
// # Costs and concurrency
//
// A query costs one hash and 3 independent cell reads (3 cache misses at
// most). ContainsBatch prefetches the cells of the next 32 keys while it
// checks the current ones. On Linux, arrays of 4 MiB and more are placed
// on transparent huge pages (see hugepage_linux.go), and so are the
// Builder's per-cell scratch arrays, which construction updates in random
// order. Filters are
// immutable and safe for concurrent use; Builders are not.
//
// # Format
//
// Filters persist in the Bloomery container (docs/format.md) with kind
// xor8 and layout byte 1; see [Filter.AppendBinary] and
// docs/format/xor.md.
package xor

import (
	"github.com/bloomery/bloomery/internal/prefetch"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// FingerprintBits is the fingerprint width of the xor8 kind.
const FingerprintBits = 8

// Filter is an immutable xor filter with 8-bit fingerprints.
//
// INVARIANT: either fps is empty and n == 0 (the empty filter, which
// contains nothing), or len(fps) == 3*blockLen and every key the filter was
// built from satisfies fingerprint(x) == fps[h0]^fps[h1]^fps[h2].
//
// A Filter is safe for concurrent use by any number of goroutines.
type Filter struct {
	// The fields a query reads come first and share one cache line.
	fps      []uint8
	seed     uint64
	blockLen uint64
	hasher   hashing.Hasher
	n        int
}

var (
	_ bloomery.Filter       = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Cells returns the array length for n distinct keys: 32 + ceil(1.23 n)
// rounded down to a multiple of 3 (0 for n <= 0).
func Cells(n int) int {
	if n <= 0 {
		return 0
	}
	c := 32 + int(math.Ceil(1.23*float64(n)))
	return c - c%3
}

// BitsPerKey returns the space of an xor8 filter built from n distinct
// keys, in bits per key (0 for n <= 0): about 9.84.
func BitsPerKey(n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(Cells(n)) * 8 / float64(n)
}

// mix re-mixes a key hash with the construction seed (murmur3 finalizer of
// hash+seed).
func mix(h, seed uint64) uint64 { return hashing.Mix64(h + seed) }

// positions returns the three cells of mixed hash x.
func positions(x, blockLen uint64) [3]uint64 {
	return [3]uint64{
		hashing.Reduce(x, blockLen),
		blockLen + hashing.Reduce(bits.RotateLeft64(x, 21), blockLen),
		2*blockLen + hashing.Reduce(bits.RotateLeft64(x, 42), blockLen),
	}
}

// fingerprint returns the 8-bit fingerprint of mixed hash x.
func fingerprint(x uint64) uint8 { return uint8(x ^ x>>32) }

// Kind returns bloomery.KindXor8.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindXor8 }

// Hasher returns the hasher that maps keys to the hashes the filter holds.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// Contains reports whether key may be in the set. False is certain.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// ContainsHash reports whether the key whose hash (under Hasher) is h may
// be in the set. Cost: 3 independent cell reads.
func (f *Filter) ContainsHash(h uint64) bool {
	fps := f.fps
	if len(fps) == 0 {
		return false
	}
	x := mix(h, f.seed)
	p := positions(x, f.blockLen)
	return fingerprint(x) == cell(fps, p[0])^cell(fps, p[1])^cell(fps, p[2])
}

// batchGroup is the number of keys ContainsBatch locates and prefetches at
// a time (see ContainsBatch).
const batchGroup = 32

// ContainsBatch sets out[i] to ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes). It is software pipelined: it computes
// the positions of the next 32 keys and prefetches their cells, then
// checks the current 32, whose cells have arrived meanwhile, so that the
// misses of many keys overlap. It does not allocate.
func (f *Filter) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if len(f.fps) == 0 {
		clear(out)
		return
	}
	var pos [2][batchGroup * 3]uint64
	var want [2][batchGroup]uint8
	cur := 0
	g := min(len(hashes), batchGroup)
	f.locate(hashes[:g], &pos[0], &want[0])
	for start := 0; start < len(hashes); {
		end := start + g
		next := min(len(hashes)-end, batchGroup)
		if next > 0 {
			f.locate(hashes[end:end+next], &pos[cur^1], &want[cur^1])
		}
		f.check(&pos[cur], &want[cur], out[start:end])
		cur ^= 1
		start, g = end, next
	}
}

func (f *Filter) locate(hs []uint64, pos *[batchGroup * 3]uint64, want *[batchGroup]uint8) {
	seed, bl := f.seed, f.blockLen
	for i, h := range hs[:min(len(hs), batchGroup)] {
		x := mix(h, seed)
		want[i] = fingerprint(x)
		p := positions(x, bl)
		pos[3*i], pos[3*i+1], pos[3*i+2] = p[0], p[1], p[2]
	}
	if prefetch.Enabled {
		prefetch.Index8(&f.fps[0], &pos[0], 3*len(hs))
	}
}

func (f *Filter) check(pos *[batchGroup * 3]uint64, want *[batchGroup]uint8, out []bool) {
	fps := f.fps
	for i := range out[:min(len(out), batchGroup)] {
		p := pos[3*i : 3*i+3 : 3*i+3]
		out[i] = want[i] == fps[p[0]]^fps[p[1]]^fps[p[2]]
	}
}

// Len returns the number of distinct keys the filter was built from.
func (f *Filter) Len() int { return f.n }

// SizeBytes returns the size of the fingerprint array.
func (f *Filter) SizeBytes() int { return len(f.fps) }

// EstimatedFPR returns 2^-8 (fpmath.FingerprintFPR(8, 1)): a key that is
// not in the set passes only if its fingerprint equals the XOR of its
// three cells, an unrelated byte. The empty filter returns 0.
func (f *Filter) EstimatedFPR() float64 {
	if f.n == 0 {
		return 0
	}
	return fpmath.FingerprintFPR(FingerprintBits, 1)
}

// Stats describes the filter. FillRatio is the load, keys per cell;
// Extra holds "block_length".
func (f *Filter) Stats() bloomery.Stats {
	st := bloomery.Stats{
		Kind:            bloomery.KindXor8,
		Len:             f.n,
		Cap:             f.n,
		SizeBytes:       f.SizeBytes(),
		FingerprintBits: FingerprintBits,
		DesignFPR:       fpmath.FingerprintFPR(FingerprintBits, 1),
		EstimatedFPR:    f.EstimatedFPR(),
		Extra:           []bloomery.Stat{{Name: "block_length", Value: float64(f.blockLen)}},
	}
	if f.n > 0 {
		st.BitsPerKey = float64(st.SizeBytes) * 8 / float64(f.n)
		st.FillRatio = float64(f.n) / float64(len(f.fps))
	}
	return st
}
