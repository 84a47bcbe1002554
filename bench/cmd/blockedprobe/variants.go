package main

import (
	"unsafe"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/prefetch"
)

// Query variants over Bloomery's blocked bit layout (block Reduce(h,
// blocks), probes the 9-bit fields of Mix64(h), then Remix(h, 1), ...),
// for comparing instruction streams against the library's code in one
// process. Each must answer exactly as (*bloom.Blocked).ContainsHash;
// main checks that on every measured key.

type raw struct {
	words  []uint64
	blocks uint64
	k      int
}

func (r *raw) line(h uint64) *[8]uint64 {
	return (*[8]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.words)), hashing.Reduce(h, r.blocks)*64))
}

// rest checks probes 8..k (k > 7).
func (r *raw) rest(line *[8]uint64, h uint64) bool {
	k := r.k - 7
	for s := uint64(1); ; s++ {
		x := hashing.Remix(h, s)
		n := min(k, 7)
		for range n {
			if line[(x>>6)&7]&(1<<(x&63)) == 0 {
				return false
			}
			x >>= 9
		}
		if k -= n; k == 0 {
			return true
		}
	}
}

// tight: one level, no bounds checks, a count-down loop over the first
// word's probes.
func (r *raw) tight(h uint64) bool {
	line := r.line(h)
	x := hashing.Mix64(h)
	for n := min(r.k, 7); n > 0; n-- {
		if line[(x>>6)&7]&(1<<(x&63)) == 0 {
			return false
		}
		x >>= 9
	}
	if r.k <= 7 {
		return true
	}
	return r.rest(line, h)
}

// flat7: the first word's probes without branches (AND of the bits).
func (r *raw) flat7(h uint64) bool {
	line := r.line(h)
	x := hashing.Mix64(h)
	acc := uint64(1)
	for n := min(r.k, 7); n > 0; n-- {
		acc &= line[(x>>6)&7] >> (x & 63)
		x >>= 9
	}
	if acc&1 == 0 {
		return false
	}
	if r.k <= 7 {
		return true
	}
	return r.rest(line, h)
}

// first2: the first two probes with one branch, then the others.
func (r *raw) first2(h uint64) bool {
	line := r.line(h)
	x := hashing.Mix64(h)
	if r.k < 2 {
		return r.tight(h)
	}
	a := line[(x>>6)&7] >> (x & 63)
	b := line[(x>>15)&7] >> ((x >> 9) & 63)
	if a&b&1 == 0 {
		return false
	}
	x >>= 18
	for n := min(r.k, 7) - 2; n > 0; n-- {
		if line[(x>>6)&7]&(1<<(x&63)) == 0 {
			return false
		}
		x >>= 9
	}
	if r.k <= 7 {
		return true
	}
	return r.rest(line, h)
}

// batchTight is ContainsBatch's pipeline with the variant probe code
// (branchy or flat) and group size g.
func (r *raw) batch(hashes []uint64, out []bool, flat bool) {
	const g = 16
	var offs [2][g]uint64
	plan := func(hs []uint64, o *[g]uint64) int {
		n := min(len(hs), g)
		for i, h := range hs[:n] {
			o[i] = hashing.Reduce(h, r.blocks) * 8
		}
		if n > 0 {
			prefetch.Index64(&r.words[0], &o[0], n)
		}
		return n
	}
	cur := plan(hashes, &offs[0])
	for s := 0; len(hashes) > 0; s ^= 1 {
		rest := hashes[cur:]
		next := plan(rest, &offs[s^1])
		for i, h := range hashes[:cur] {
			line := (*[8]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.words)), offs[s][i]*8))
			x := hashing.Mix64(h)
			if flat {
				acc := uint64(1)
				for n := min(r.k, 7); n > 0; n-- {
					acc &= line[(x>>6)&7] >> (x & 63)
					x >>= 9
				}
				out[i] = acc&1 != 0 && (r.k <= 7 || r.rest(line, h))
			} else {
				ok := true
				for n := min(r.k, 7); n > 0; n-- {
					if line[(x>>6)&7]&(1<<(x&63)) == 0 {
						ok = false
						break
					}
					x >>= 9
				}
				out[i] = ok && (r.k <= 7 || r.rest(line, h))
			}
		}
		hashes, out, cur = rest, out[cur:], next
	}
}

// first3: three probes without branches, then one branch; then the rest.
func (r *raw) first3(h uint64) bool {
	if r.k < 3 {
		return r.tight(h)
	}
	line := r.line(h)
	x := hashing.Mix64(h)
	a := line[(x>>6)&7] >> (x & 63)
	b := line[(x>>15)&7] >> ((x >> 9) & 63)
	c := line[(x>>24)&7] >> ((x >> 18) & 63)
	if a&b&c&1 == 0 {
		return false
	}
	x >>= 27
	for n := min(r.k, 7) - 3; n > 0; n-- {
		if line[(x>>6)&7]&(1<<(x&63)) == 0 {
			return false
		}
		x >>= 9
	}
	if r.k <= 7 {
		return true
	}
	return r.rest(line, h)
}

// pairs: probes two at a time, one branch per pair.
func (r *raw) pairs(h uint64) bool {
	line := r.line(h)
	x := hashing.Mix64(h)
	n := min(r.k, 7)
	for ; n >= 2; n -= 2 {
		a := line[(x>>6)&7] >> (x & 63)
		b := line[(x>>15)&7] >> ((x >> 9) & 63)
		if a&b&1 == 0 {
			return false
		}
		x >>= 18
	}
	if n == 1 && line[(x>>6)&7]&(1<<(x&63)) == 0 {
		return false
	}
	if r.k <= 7 {
		return true
	}
	return r.rest(line, h)
}

// batch2 is a tight rewrite of the batch pipeline: offsets planned and
// prefetched a group ahead, the probe loop in line, no bounds checks.
// first2 selects a branch after the first two probes; otherwise flat.
func (r *raw) batch2(hashes []uint64, out []bool, first2 bool) {
	const g = 16
	if r.k > 7 {
		r.batch(hashes, out, true)
		return
	}
	out = out[:len(hashes)]
	base := unsafe.Pointer(unsafe.SliceData(r.words))
	blocks, k := r.blocks, r.k
	var offs [2][g]uint64
	n0 := min(len(hashes), g)
	for i, h := range hashes[:n0] {
		offs[0][i] = hashing.Reduce(h, blocks) * 8
	}
	if n0 > 0 {
		prefetch.Index64(&r.words[0], &offs[0][0], n0)
	}
	cur := n0
	for s := 0; len(hashes) > 0; s ^= 1 {
		rest := hashes[cur:]
		next := min(len(rest), g)
		no := &offs[s^1]
		for i, h := range rest[:next] {
			no[i] = hashing.Reduce(h, blocks) * 8
		}
		if next > 0 {
			prefetch.Index64(&r.words[0], &no[0], next)
		}
		co := &offs[s]
		o := out[:cur]
		for i, h := range hashes[:cur] {
			line := (*[8]uint64)(unsafe.Add(base, co[i&(g-1)]*8))
			x := hashing.Mix64(h)
			acc := line[(x>>6)&7] >> (x & 63)
			if first2 {
				if k >= 2 {
					x >>= 9
					acc &= line[(x>>6)&7] >> (x & 63)
				}
				if acc&1 == 0 {
					o[i] = false
					continue
				}
				for n := k - 2; n > 0; n-- {
					x >>= 9
					acc &= line[(x>>6)&7] >> (x & 63)
				}
			} else {
				for n := k - 1; n > 0; n-- {
					x >>= 9
					acc &= line[(x>>6)&7] >> (x & 63)
				}
			}
			o[i] = acc&1 != 0
		}
		hashes, out, cur = rest, out[cur:], next
	}
}

// batch3: a ring of planned offsets; chunks of G keys are planned and
// prefetched L keys ahead of the one being probed (L+G <= 64, G | 64).
func (r *raw) batch3(hashes []uint64, out []bool, G, L int) {
	if r.k > 7 {
		r.batch(hashes, out, true)
		return
	}
	out = out[:len(hashes)]
	base := unsafe.Pointer(unsafe.SliceData(r.words))
	blocks, k := r.blocks, r.k
	var ring [64]uint64
	n := len(hashes)
	planned := 0
	for planned < n && planned < L {
		end := min(planned+G, n)
		for j := planned; j < end; j++ {
			ring[j&63] = hashing.Reduce(hashes[j], blocks) * 8
		}
		prefetch.Index64(&r.words[0], &ring[planned&63], end-planned)
		planned = end
	}
	for i := 0; i < n; i += G {
		if planned < n {
			end := min(planned+G, n)
			for j := planned; j < end; j++ {
				ring[j&63] = hashing.Reduce(hashes[j], blocks) * 8
			}
			prefetch.Index64(&r.words[0], &ring[planned&63], end-planned)
			planned = end
		}
		end := min(i+G, n)
		for j := i; j < end; j++ {
			line := (*[8]uint64)(unsafe.Add(base, ring[j&63]*8))
			x := hashing.Mix64(hashes[j])
			acc := line[(x>>6)&7] >> (x & 63)
			for c := k - 1; c > 0; c-- {
				x >>= 9
				acc &= line[(x>>6)&7] >> (x & 63)
			}
			out[j] = acc&1 != 0
		}
	}
}
