package fuse

import (
	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/internal/prefetch"
)

// Fingerprint is the stored fingerprint type: uint8 (FPR 2^-8, about
// 0.39 %) or uint16 (FPR 2^-16, about 0.0015 %) per array cell.
type Fingerprint interface{ uint8 | uint16 }

// Filter is an immutable binary fuse filter with fingerprints of type T
// (see the package documentation for the design).
//
// A query hashes the key once with the filter's hasher, re-mixes the hash
// with the construction seed, and compares one fingerprint with the XOR of
// arity (3 or 4) array cells: arity random memory accesses, all independent
// and issued together. It never allocates.
//
// INVARIANT: either fps is empty, n == 0 and probe == 0 (the empty
// filter, which contains nothing), or len(fps) == geo.cells, probe ==
// geo.arity and every key the filter was built from satisfies
// fingerprint(h) == XOR of fps at its positions.
//
// A Filter is safe for concurrent use by any number of goroutines: nothing
// mutates it after Build or Decode.
type Filter[T Fingerprint] struct {
	// The fields a query reads come first and share one cache line:
	// fps, seed, probe and geo's segLen, mask and span.
	fps  []T
	seed uint64 // construction seed, mixed into every hash
	// probe is the number of cells a query reads: geo.arity, or 0 for
	// the empty filter. One compare of it both picks the arity and
	// rules out the empty array, so ContainsHash needs no length test.
	probe  int
	geo    geometry
	hasher hashing.Hasher
	n      int // distinct keys
}

var (
	_ bloomery.Filter       = (*Filter[uint8])(nil)
	_ bloomery.BatchQuerier = (*Filter[uint16])(nil)
)

// fingerprintBits returns 8 or 16, the width of T.
func fingerprintBits[T Fingerprint]() int {
	if uint64(^T(0)) == 0xff {
		return 8
	}
	return 16
}

// kindOf maps a fingerprint width and an arity to the family kind.
func kindOf(bits, arity int) bloomery.Kind {
	switch {
	case bits == 8 && arity == 3:
		return bloomery.KindFuse8
	case bits == 16 && arity == 3:
		return bloomery.KindFuse16
	case bits == 8 && arity == 4:
		return bloomery.KindFuse8x4
	case bits == 16 && arity == 4:
		return bloomery.KindFuse16x4
	}
	return bloomery.KindInvalid
}

// mix re-mixes a key hash with the construction seed (the murmur3 64-bit
// finalizer of hash+seed), so that a new seed gives an independent
// hypergraph on the next construction attempt.
func mix(h, seed uint64) uint64 { return hashing.Mix64(h + seed) }

// Kind returns KindFuse8, KindFuse16, KindFuse8x4 or KindFuse16x4.
func (f *Filter[T]) Kind() bloomery.Kind { return kindOf(fingerprintBits[T](), f.arity()) }

func (f *Filter[T]) arity() int {
	if f.geo.arity == 0 {
		return 3
	}
	return f.geo.arity
}

// Arity returns the number of cells a query reads: 3 or 4.
func (f *Filter[T]) Arity() int { return f.arity() }

// Hasher returns the hasher that maps keys to the hashes the filter holds.
func (f *Filter[T]) Hasher() hashing.Hasher { return f.hasher }

// Contains reports whether key may be in the set. False is certain.
// Cost: one hash of key plus arity (3 or 4) cache misses at most.
func (f *Filter[T]) Contains(key []byte) bool { return f.ContainsHash(f.hasher.Sum64(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter[T]) ContainsString(key string) bool {
	return f.ContainsHash(f.hasher.Sum64String(key))
}

// ContainsHash reports whether the key whose hash (under Hasher) is h may
// be in the set.
func (f *Filter[T]) ContainsHash(h uint64) bool {
	fps := f.fps
	x := mix(h, f.seed)
	fp := T(x ^ x>>32)
	h0 := hashing.Reduce(x, f.geo.span)
	s, m := f.geo.segLen, f.geo.mask
	switch f.probe {
	case 3:
		h1 := (h0 + s) ^ (x >> 18 & m)
		h2 := (h0 + 2*s) ^ (x & m)
		return fp == cell(fps, h0)^cell(fps, h1)^cell(fps, h2)
	case 4:
		h1 := (h0 + s) ^ (x & m)
		h2 := (h0 + 2*s) ^ (x >> 16 & m)
		h3 := (h0 + 3*s) ^ (x >> 32 & m)
		return fp == cell(fps, h0)^cell(fps, h1)^cell(fps, h2)^cell(fps, h3)
	}
	return false // the empty filter
}

// ContainsBatch pipeline: keys are located (positions and fingerprint
// computed, cells prefetched) batchGroup at a time, batchAhead keys ahead
// of the key being checked, through a ring of batchRing keys' positions.
// Small groups interleave the prefetches with the checks: at 10^8 keys
// (fuse8, 113 MB) the batch is bound by how many misses are in flight,
// and a burst of 96 prefetches (the former 32-key groups, one group
// ahead) stalled on the core's miss buffers with the checks queued
// behind it. Groups of 8 keys, 24 keys ahead, answered 15-20% faster
// there (about 29 against 35 ns per key, medians of 7 alternated runs),
// and no slower in cache. The prefetches are PREFETCHT1, into L2
// (prefetch.Index8L2): against xorfilter's per-key query in benchreport
// at 10^8 uint64 keys, 1.70x and 1.70x with them, 1.50x and 1.50x with
// PREFETCHT0; 16 and 40 keys ahead were within noise of 24.
const (
	batchGroup = 8
	batchAhead = 3 * batchGroup
	batchRing  = 32 // >= batchAhead + batchGroup, a power of two and a multiple of batchGroup
)

// ContainsBatch sets out[i] to ContainsHash(hashes[i]) for every i. It
// panics if len(out) < len(hashes).
//
// It is software pipelined: it computes the positions of the keys 24
// places ahead, 8 at a time, and prefetches their cells (PREFETCHT0 on
// amd64; elsewhere, and with the purego tag, it relies on out-of-order
// execution alone) before it compares the fingerprints of the current 8,
// whose cells have arrived meanwhile. Prefetches retire at once, so many
// more misses are in flight than a loop of ContainsHash calls achieves;
// on arrays much larger than the last-level cache this answers several
// times faster per key. It does not allocate.
func (f *Filter[T]) ContainsBatch(hashes []uint64, out []bool) {
	out = out[:len(hashes)]
	if len(f.fps) == 0 {
		clear(out)
		return
	}
	var pos [batchRing * 4]uint64
	var want [batchRing]T
	n := len(hashes)
	planned := 0
	for planned < n && planned < batchAhead {
		planned = f.locate(hashes, planned, &pos, &want)
	}
	for i := 0; i < n; i += batchGroup {
		if planned < n {
			planned = f.locate(hashes, planned, &pos, &want)
		}
		f.check(&pos, &want, i, out[i:min(i+batchGroup, n)])
	}
}

// locate computes the positions and fingerprints of
// hashes[from:from+batchGroup] (fewer at the end) into the ring slots
// from%batchRing..., prefetches their cells and returns the index after
// the last one. from is a multiple of batchGroup, so the slots do not
// wrap around the ring; slot r's positions are pos[arity*r:][:arity].
func (f *Filter[T]) locate(hs []uint64, from int, pos *[batchRing * 4]uint64, want *[batchRing]T) int {
	end := min(from+batchGroup, len(hs))
	r0 := from & (batchRing - 1)
	seed, span := f.seed, f.geo.span
	s, m := f.geo.segLen, f.geo.mask
	arity := f.geo.arity
	if arity == 3 {
		for i, h := range hs[from:end] {
			x := mix(h, seed)
			r := r0 + i
			want[r&(batchRing-1)] = T(x ^ x>>32)
			h0 := hashing.Reduce(x, span)
			p := (*[3]uint64)(pos[3*(r&(batchRing-1)):])
			p[0], p[1], p[2] = h0, (h0+s)^(x>>18&m), (h0+2*s)^(x&m)
		}
	} else {
		for i, h := range hs[from:end] {
			x := mix(h, seed)
			r := r0 + i
			want[r&(batchRing-1)] = T(x ^ x>>32)
			h0 := hashing.Reduce(x, span)
			p := (*[4]uint64)(pos[4*(r&(batchRing-1)):])
			p[0], p[1], p[2], p[3] = h0, (h0+s)^(x&m), (h0+2*s)^(x>>16&m), (h0+3*s)^(x>>32&m)
		}
	}
	if prefetch.Enabled {
		np := arity * (end - from)
		switch fps := any(f.fps).(type) {
		case []uint8:
			prefetch.Index8L2(&fps[0], &pos[arity*r0], np)
		case []uint16:
			prefetch.Index16L2(&fps[0], &pos[arity*r0], np)
		}
	}
	return end
}

// check sets out[j] for the located keys in ring slots (from+j)%batchRing:
// whether the fingerprint equals the XOR of the cells.
func (f *Filter[T]) check(pos *[batchRing * 4]uint64, want *[batchRing]T, from int, out []bool) {
	fps := f.fps
	if f.geo.arity == 3 {
		for j := range out {
			r := (from + j) & (batchRing - 1)
			p := (*[3]uint64)(pos[3*r:])
			out[j] = want[r] == cell(fps, p[0])^cell(fps, p[1])^cell(fps, p[2])
		}
		return
	}
	for j := range out {
		r := (from + j) & (batchRing - 1)
		p := (*[4]uint64)(pos[4*r:])
		out[j] = want[r] == cell(fps, p[0])^cell(fps, p[1])^cell(fps, p[2])^cell(fps, p[3])
	}
}

// Len returns the number of distinct keys the filter was built from.
func (f *Filter[T]) Len() int { return f.n }

// SizeBytes returns the size of the fingerprint array.
func (f *Filter[T]) SizeBytes() int { return len(f.fps) * (fingerprintBits[T]() / 8) }

// EstimatedFPR returns the false-positive rate: a key that is not in the
// set passes only if its f-bit fingerprint equals the XOR of its cells,
// which behaves as an independent uniform f-bit value, so the rate is
// 1 - (1 - 2^-f)^1 = 2^-f (fpmath.FingerprintFPR with one comparison). The
// empty filter answers false to everything and returns 0.
func (f *Filter[T]) EstimatedFPR() float64 {
	if f.n == 0 {
		return 0
	}
	return fpmath.FingerprintFPR(fingerprintBits[T](), 1)
}

// Stats describes the filter. FillRatio is the load, keys per cell;
// Extra holds "arity", "segment_length" and "segment_count".
func (f *Filter[T]) Stats() bloomery.Stats {
	st := bloomery.Stats{
		Kind:            f.Kind(),
		Len:             f.n,
		Cap:             f.n,
		SizeBytes:       f.SizeBytes(),
		FingerprintBits: fingerprintBits[T](),
		DesignFPR:       fpmath.FingerprintFPR(fingerprintBits[T](), 1),
		EstimatedFPR:    f.EstimatedFPR(),
	}
	if f.n > 0 {
		st.BitsPerKey = float64(st.SizeBytes) * 8 / float64(f.n)
		st.FillRatio = float64(f.n) / float64(len(f.fps))
	}
	st.Extra = []bloomery.Stat{
		{Name: "arity", Value: float64(f.arity())},
		{Name: "segment_length", Value: float64(f.geo.segLen)},
		{Name: "segment_count", Value: float64(f.geo.segCount)},
	}
	return st
}
