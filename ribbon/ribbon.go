package ribbon

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// Compile-time checks.
var (
	_ bloomery.Filter       = (*Filter)(nil)
	_ bloomery.BatchQuerier = (*Filter)(nil)
)

// Filter is a static standard Ribbon filter with 128-bit bands. It is
// immutable after Build or Decode and safe for concurrent queries.
//
// A query costs one 64-bit remix (two multiplications), four more
// multiplications, and for each result column three AND-ed words and a
// parity, reading 5·cols consecutive 32-bit words of the solution (about
// 3.2 cache lines, loaded together; see seg). No branch depends
// on the key, so the out-of-order core overlaps consecutive queries; on
// amd64 with AVX2 filters with at most 8 columns (FPR above about 0.4 %)
// are queried by an assembly kernel that evaluates all columns at once.
type Filter struct {
	// k is the assembly query's view of the filter. It comes first so
	// that &f.k, the kernel's argument, is f itself: the query's call
	// needs no address arithmetic.
	k      kernel
	data   []uint64 // interleaved solution, see layout; kernelPad zero words follow in its capacity
	l      layout
	n      int     // distinct keys
	seed   uint32  // banding seed (attempt ordinal)
	target float64 // design FPR
	hasher hashing.Hasher
	simd   bool // k is set (k.avx2): the assembly evaluates ContainsHash and ContainsBatch
}

// kernelPad is the number of zero words after the solution (in the
// capacity of Filter.data): the assembly query reads 32 bytes from the
// start of each of five quarters, the last of which may be the end of the
// solution, the portable query reads up to 2·cols <= 62 32-bit words from
// the end, and ContainsBatch prefetches up to 31 words from the start of
// a half.
const kernelPad = 32

// newSolution allocates a zeroed solution of n words followed by
// kernelPad zero words of capacity, advised onto huge pages when large.
func newSolution(n uint64) []uint64 {
	s := make([]uint64, n, n+kernelPad)
	adviseHugePages(s)
	return s
}

// Kind returns bloomery.KindRibbon.
func (f *Filter) Kind() bloomery.Kind { return bloomery.KindRibbon }

// Hasher returns the hasher that Contains uses and that Build's hashes
// must come from.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// Len returns the number of distinct keys the filter was built from.
func (f *Filter) Len() int { return f.n }

// SizeBytes returns the size of the solution (the only table a query
// reads).
func (f *Filter) SizeBytes() int { return 8 * len(f.data) }

// EstimatedFPR returns the expected false-positive rate of this filter:
// the realised mix lp·2^-L + (1-lp)·2^-(L+1), lp being the fraction of
// starts that fall in blocks with L columns.
func (f *Filter) EstimatedFPR() float64 { return f.l.fpr() }

// DesignFPR returns the target the filter was built for.
func (f *Filter) DesignFPR() float64 { return f.target }

// Seed returns the banding seed (the attempt that succeeded).
func (f *Filter) Seed() uint32 { return f.seed }

// Slots returns the number of slots (rows of the solution), a multiple of
// 128.
func (f *Filter) Slots() int { return int(f.l.numBlocks * 128) }

// Stats describes the filter. FingerprintBits is the number of result
// columns of the lower blocks (the upper ones have one more); Extra holds
// "slots", "blocks", "lower_columns", "upper_start_block",
// "lower_fraction", "avg_columns", "slots_per_key" and "seed".
func (f *Filter) Stats() bloomery.Stats {
	s := bloomery.Stats{
		Kind:            bloomery.KindRibbon,
		Len:             f.n,
		Cap:             f.n,
		SizeBytes:       f.SizeBytes(),
		FingerprintBits: f.l.lower,
		DesignFPR:       f.target,
		EstimatedFPR:    f.EstimatedFPR(),
	}
	slots := float64(f.l.numBlocks * 128)
	if f.n > 0 {
		s.BitsPerKey = float64(8*s.SizeBytes) / float64(f.n)
		s.FillRatio = float64(f.n) / slots
	}
	avg := 0.0
	if f.l.numBlocks > 0 {
		avg = float64(f.l.words()/2) / float64(f.l.numBlocks)
	}
	perKey := 0.0
	if f.n > 0 {
		perKey = slots / float64(f.n)
	}
	s.Overfilled = bloomery.IsOverfilled(s.EstimatedFPR, s.DesignFPR)
	s.Extra = []bloomery.Stat{
		{Name: "slots", Value: slots},
		{Name: "blocks", Value: float64(f.l.numBlocks)},
		{Name: "lower_columns", Value: float64(f.l.lower)},
		{Name: "upper_start_block", Value: float64(f.l.upperStart)},
		{Name: "lower_fraction", Value: f.l.lowerFraction()},
		{Name: "avg_columns", Value: avg},
		{Name: "slots_per_key", Value: perKey},
		{Name: "seed", Value: float64(f.seed)},
	}
	return s
}

// Contains reports whether key may be in the set: false means certainly
// not; always ContainsHash(Hasher().Sum64(key)). It does not allocate.
//
// Cost: it inlines into its caller as one call to containsKey. On amd64
// with the assembly kernel and the XXH3 hasher, keys of 4 to 128 bytes
// are hashed and evaluated in that one assembly function (no nested
// calls, which in out-of-cache query loops limit how many queries'
// misses overlap); other hashers, lengths and platforms take
// containsKeyGo (Hasher.Sum64, then ContainsHash), with the same answers.
// Measured on 16-32 byte keys of a 1% filter of 10^6 keys: containsKey
// executes 111 instructions a query under callgrind (the kernel's 82,
// about 29 to dispatch and hash) where Hasher.Sum64String and
// ContainsHash took about 190 in nested calls; interleaved in one
// process, 25.6 against 30.0 ns for present keys and 25.4 against 31.0
// for absent ones, 1.24x and 1.18x bloom's Blocked.ContainsString (1.48x
// and 1.46x before).
func (f *Filter) Contains(key []byte) bool {
	return containsKey(f, unsafe.SliceData(key), len(key))
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return containsKey(f, unsafe.StringData(key), len(key))
}

// containsKeyGo is Contains of the n bytes at p through Hasher.Sum64.
//
//lint:ignore U1000 called from assembly (the JMP at the end of the amd64 leaf)
func containsKeyGo(f *Filter, p *byte, n int) bool {
	return f.ContainsHash(f.hasher.Sum64(unsafe.Slice(p, n)))
}

// Hash constants of the row derivation (arbitrary odd 64-bit numbers with
// balanced bits; persisted filters depend on them: layout 1).
const (
	mulLo     = 0xf1357aea2e62a9c5
	mulHi     = 0xd1b54a32d192ed03
	mulResult = 0xaef17502108ef2d9
)

// remix turns a key hash into the word that defines the key's equation for
// one banding seed: a bijection of h, different and independent-looking
// for every seed, so a failed seed gives a fresh system.
func remix(h uint64, seed uint32) uint64 { return hashing.Remix(h, uint64(seed)+1) }

// row derives a key's equation from its remixed hash x:
//
//   - start = Reduce(x, numStarts): the high bits of x, uniform over the
//     starts (computed by the caller);
//   - coefficients: 128 bits, lo = x·mulLo with bit 0 forced to 1 (the
//     row's leading 1, which banding relies on), hi = (x ^ x>>31)·mulHi;
//   - result: the high 32 bits of x·mulResult, masked by the caller to the
//     columns in use.
//
// The three products use different multipliers, so the result bits are
// not a linear (GF(2)) function of the coefficient bits, which the FPR
// argument needs (see the package doc).
func row(x uint64) (lo, hi uint64, r uint32) {
	lo = x*mulLo | 1
	hi = (x ^ x>>31) * mulHi
	r = uint32((x * mulResult) >> 32)
	return
}

// shift128 returns c<<o (a) and c>>(128-o) (b) for 0 <= o < 128, both as
// (low, high) word pairs: a is the part of a 128-bit row starting at slot
// offset o that lies in the start block, b the part that spills into the
// next block.
func shift128(lo, hi uint64, o uint) (a0, a1, b0, b1 uint64) {
	if o < 64 {
		a0 = lo << o
		a1 = hi<<o | lo>>(64-o) // lo>>64 is 0 in Go
		b0 = hi >> (64 - o)     // 0 when o == 0
		return
	}
	o -= 64
	a1 = lo << o
	b0 = lo>>(64-o) | hi<<o
	b1 = hi >> (64 - o)
	return
}

// In memory the solution is stored quarter-major. Each block's 128 slots
// form two halves of 64, and half g (of block g/2) owns cols 64-bit words
// of room from word seg(g), with
//
//	seg(g) = g·L + max(0, g - 2U) = g·(L+1) - min(g, 2U)
//
// (U the upper start block, cols = L+1 - [g < 2U]). The half's room holds
// its two quarters of 32 slots as 32-bit words (on the view dwords, so on
// every byte order): first column 0..cols-1 of slots 64g..64g+31, then of
// slots 64g+32..64g+63. So quarter Q (of 32 slots) holds its block's cols
// columns as cols consecutive 32-bit words from 32-bit word
//
//	Q·(L+1) - min(Q, 4U) = 2·seg(Q/2) + (Q mod 2)·cols.
//
// A row with start s covers the five quarters s/32 .. s/32+4 (the last
// one only when 32 does not divide s), which lie next to each other: a
// query reads 5·cols 32-bit words (140 bytes at 7 columns, 3.2 cache
// lines on average) and the kernel loads each quarter's columns in one
// 256-bit word. Half-major storage (column j's 64-bit word at seg(g)+j),
// which the back-substitution writes and toQuarterMajor converts, read
// 3·cols words (168 bytes, 3.6 lines) in three runs whose columns come in
// two registers. The persisted order (docs/format/ribbon.md) interleaves
// a block's two halves column by column instead; a block starts at the
// same word in every order, so converting is a transposition inside each
// block (Decode, AppendBinary, AppendRaw).

// seg returns the first word of half g and the number of columns of its
// block, for g <= 2·numBlocks (seg(2·numBlocks) is the end of the
// solution).
func (l *layout) seg(g uint64) (first, cols uint64) {
	lower, u2 := uint64(l.lower), 2*l.upperStart
	above := int64(g) - int64(u2)
	up := uint64(^above) >> 63 // 1 iff g >= 2U
	return g*lower + uint64(above)&-up, lower + up
}

// containsGeneric is the portable query (ContainsHash where the assembly
// kernel does not apply), without data-dependent branches.
//
// A row with start s covers slots s..s+127: with q = s/32 and t = s mod
// 32 its coefficients shifted by t, c<<t (160 bits), meet quarters q..q+4
// through their 32-bit words 0..4 (word 4 is zero when t = 0, and quarter
// q+4 may then lie past the last block: it reads the zero padding).
// Column j is the parity of the five masked 32-bit words of column j of
// those quarters (each quarter located with its own block's column
// count, see quarter); the key's block, and so the number of columns, is
// that of quarter q. A column costs five loads, five ANDs and a popcount;
// bit 0 of popcount ^ r>>j is column j's mismatch, and ORing the
// mismatches needs no branch.
func (f *Filter) containsGeneric(h uint64) bool { return queryGeneric(&f.k, h) }

// queryGeneric is containsGeneric for the Filter whose kernel field is *k
// (k is always &f.k, so subtracting the field's offset recovers f). It
// takes the kernel because the amd64 query (containsAVX2) tail-jumps here
// with its own arguments for the filters its kernel does not serve, which
// costs no more than the Go dispatch it replaces; containsGeneric inlines
// to a direct call.
func queryGeneric(k *kernel, h uint64) bool {
	f := (*Filter)(unsafe.Add(unsafe.Pointer(k), -int(unsafe.Offsetof(Filter{}.k))))
	l := &f.l
	if l.numBlocks == 0 {
		return false
	}
	x := remix(h, f.seed)
	s := hashing.Reduce(x, l.numStarts)
	q := s >> 5
	t := s & 31
	lo, hi, r32 := row(x)
	// c<<t in 64-bit words; quarter q+i is masked by 32-bit word i.
	w0 := lo << t
	w1 := hi<<t | lo>>1>>(63-t)
	w2 := hi >> 1 >> (63 - t)
	m := [5]uint32{uint32(w0), uint32(w0 >> 32), uint32(w1), uint32(w1 >> 32), uint32(w2)}
	d := f.data
	base := unsafe.Pointer(unsafe.SliceData(d))
	fq, cols := l.quarter(q)
	if u4 := 4 * l.upperStart; q >= u4 || q+4 < u4 {
		// The usual case: the five quarters belong to blocks with the
		// same column count, so they are five runs of cols words from
		// fq. (The test below never fails, as the one in the loop.)
		if fq+5*cols > 2*uint64(cap(d)) {
			return true
		}
		return parity5(unsafe.Add(base, 4*fq), 4*cols, cols, &m, r32)
	}
	var p [5]unsafe.Pointer
	for i := range p {
		fi, ci := l.quarter(q + uint64(i))
		// Build and Decode leave kernelPad >= 32 zero words after the
		// solution, so this test never fails (the last quarter a row
		// meets is at most the end of the solution); it keeps a corrupt
		// layout from reading outside the allocation.
		if fi+ci > 2*uint64(cap(d)) {
			return true
		}
		p[i] = unsafe.Add(base, 4*fi)
	}
	r := r32
	var miss uint32
	for j := uint64(0); j < cols; j++ {
		var acc uint32
		for i := range p {
			acc ^= *(*uint32)(unsafe.Add(p[i], 4*j)) & m[i]
		}
		miss |= uint32(bits.OnesCount32(acc)) ^ r
		r >>= 1
	}
	return miss&1 == 0
}

// parity5 is queryGeneric's column loop for five quarters of cols
// columns each, stride bytes apart from p: it reports whether every
// column's parity, the masked XOR of its five words, equals its result
// bit in r.
//
// Columns go in pairs: one 64-bit load takes columns j and j+1 of a
// quarter, whose words are adjacent, and both are masked by the same
// coefficient word, so a pair costs five loads, five ANDs and two
// popcounts. binary.NativeEndian keeps each 32-bit half a native word
// (the dwords view the storage is defined on) and compiles to one load
// where the processor allows unaligned ones; on a big-endian processor
// column j is the high half.
func parity5(p unsafe.Pointer, stride, cols uint64, m *[5]uint32, r uint32) bool {
	m0, m1, m2, m3, m4 := m[0], m[1], m[2], m[3], m[4]
	var miss uint32
	j := uint64(0)
	if cols >= 2 {
		d0, d1, d2, d3, d4 := pair(m0), pair(m1), pair(m2), pair(m3), pair(m4)
		for ; j+1 < cols; j += 2 {
			w := unsafe.Add(p, 4*j)
			acc := load64(w)&d0 ^
				load64(unsafe.Add(w, stride))&d1 ^
				load64(unsafe.Add(w, 2*stride))&d2 ^
				load64(unsafe.Add(w, 3*stride))&d3 ^
				load64(unsafe.Add(w, 4*stride))&d4
			first, second := uint32(acc), uint32(acc>>32)
			if bigEndian {
				first, second = second, first
			}
			miss |= (uint32(bits.OnesCount32(first)) ^ r) | (uint32(bits.OnesCount32(second)) ^ r>>1)
			r >>= 2
		}
	}
	if j < cols {
		w := unsafe.Add(p, 4*j)
		acc := *(*uint32)(w)&m0 ^
			*(*uint32)(unsafe.Add(w, stride))&m1 ^
			*(*uint32)(unsafe.Add(w, 2*stride))&m2 ^
			*(*uint32)(unsafe.Add(w, 3*stride))&m3 ^
			*(*uint32)(unsafe.Add(w, 4*stride))&m4
		miss |= uint32(bits.OnesCount32(acc)) ^ r
	}
	return miss&1 == 0
}

// pair returns m in both 32-bit halves.
func pair(m uint32) uint64 { return uint64(m) * (1<<32 + 1) }

// load64 reads the 8 bytes at p in native byte order.
func load64(p unsafe.Pointer) uint64 { return binary.NativeEndian.Uint64((*[8]byte)(p)[:]) }

// bigEndian reports whether the processor stores the most significant
// byte first.
var bigEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 0x0100

// quarter returns the first 32-bit word of quarter q (of 32 slots) and
// the number of columns of its block, for q <= 4·numBlocks (quarter
// 4·numBlocks starts at the end of the solution): Q·(L+1) - min(Q, 4U).
func (l *layout) quarter(q uint64) (first, cols uint64) {
	lower, u4 := uint64(l.lower), 4*l.upperStart
	above := int64(q) - int64(u4)
	up := uint64(^above) >> 63 // 1 iff q >= 4U
	return q*lower + uint64(above)&-up, lower + up
}

// dwords views data (whose capacity includes the padding) as 32-bit
// words: the quarter-major storage is defined on this view, so it means
// the same on every byte order.
func dwords(data []uint64) []uint32 {
	data = data[:cap(data)]
	if len(data) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(data))), 2*len(data))
}

// toQuarterMajor turns a solution written half-major (seg: half h's
// column j is the 64-bit word seg(h)+j; the back-substitution writes it
// so) into the quarter-major storage the queries read, in place: half h
// keeps its cols words of room, which become two quarters of cols 32-bit
// words, the low halves of its column words (slots 64h..64h+31) and then
// the high ones.
func toQuarterMajor(l *layout, data []uint64) {
	d := dwords(data)
	var tmp [maxCols]uint64
	for h := uint64(0); h < 2*l.numBlocks; h++ {
		first, cols := l.seg(h)
		w := tmp[:cols]
		copy(w, data[first:first+cols])
		q := d[2*first : 2*first+2*cols]
		for j, x := range w {
			q[j] = uint32(x)
			q[cols+uint64(j)] = uint32(x >> 32)
		}
	}
}

// appendPersisted appends the solution in the persisted order (each
// block's words column by column, first half then second half), as
// little-endian words.
func (f *Filter) appendPersisted(dst []byte) []byte {
	d := dwords(f.data)
	for blk := uint64(0); blk < f.l.numBlocks; blk++ {
		first, cols := f.l.seg(2 * blk)
		q := d[2*first : 2*first+4*cols]
		for j := range cols {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(q[j])|uint64(q[cols+j])<<32)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(q[2*cols+j])|uint64(q[3*cols+j])<<32)
		}
	}
	return dst
}

// loadPersisted fills data (quarter-major, see toQuarterMajor) from the
// persisted little-endian words in raw; len(raw) == 8·len(data) ==
// 8·l.words().
func loadPersisted(l *layout, data []uint64, raw []byte) {
	d := dwords(data)
	for blk := uint64(0); blk < l.numBlocks; blk++ {
		first, cols := l.seg(2 * blk)
		q := d[2*first : 2*first+4*cols]
		in := raw[8*first : 8*(first+2*cols)]
		for j := range cols {
			w0 := binary.LittleEndian.Uint64(in[16*j:])
			w1 := binary.LittleEndian.Uint64(in[16*j+8:])
			q[j], q[cols+j] = uint32(w0), uint32(w0>>32)
			q[2*cols+j], q[3*cols+j] = uint32(w1), uint32(w1>>32)
		}
	}
}

// containsBatchGeneric is ContainsBatch without the assembly batch
// kernel. It works in groups of 16 keys:
// first it locates every key's first half (see seg) and prefetches the
// four cache lines from its first word on (a query reads at most
// 5·cols 32-bit words from a quarter that starts at most cols 32-bit
// words into the half, so at most 24 words when cols <= 8), then it
// answers the keys with ContainsHash.
func (f *Filter) containsBatchGeneric(hashes []uint64, out []bool) {
	_ = out[:len(hashes)]
	if f.l.numBlocks == 0 {
		clear(out[:len(hashes)])
		return
	}
	const group = 16
	var offs [4 * group]uint64
	l := &f.l
	for len(hashes) > 0 {
		g := min(len(hashes), group)
		for i, h := range hashes[:g] {
			first, _ := l.seg(hashing.Reduce(remix(h, f.seed), l.numStarts) >> 6)
			offs[4*i] = first
			offs[4*i+1] = first + 8
			offs[4*i+2] = first + 16
			offs[4*i+3] = first + 24
		}
		prefetchLines(f.data, offs[:4*g])
		for i, h := range hashes[:g] {
			out[i] = f.ContainsHash(h)
		}
		hashes, out = hashes[g:], out[g:]
	}
}
