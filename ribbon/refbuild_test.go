package ribbon

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

// refBuild builds a filter the plain way, for the checks below: remove
// duplicate hashes, then for each seed of the retry policy sort the
// remixed hashes, band them in ascending order one coefficient bit at a
// time, and back-substitute one solution bit at a time, writing the
// persisted order (docs/format/ribbon.md). It shares with Builder only
// row, remix, Reduce, slotsFor and newLayout. It returns the persisted
// solution words, the seed and the slot count.
func refBuild(t *testing.T, hashes []uint64, fpr float64) (words []uint64, seed uint32, slots uint64) {
	t.Helper()
	distinct := slices.Clone(hashes)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	slots = slotsFor(len(distinct))
	type eq struct {
		c [2]uint64
		r uint32
	}
	for growth := 0; growth <= maxGrowths; growth++ {
		for i := 0; i < seedsPerSize; i++ {
			seed = uint32(growth*seedsPerSize + i)
			l := newLayout(slots, fpr)
			xs := make([]uint64, len(distinct))
			for k, h := range distinct {
				xs[k] = remix(h, seed)
			}
			slices.Sort(xs)
			rows := make([]eq, slots)
			ok := true
			for _, x := range xs {
				s := refReduce(x, l.numStarts)
				lo, hi, r := row(x)
				e := eq{[2]uint64{lo, hi}, r & (1<<(l.lower+1) - 1)}
				for {
					p := &rows[s]
					if p.c[0]&1 == 0 {
						*p = e
						break
					}
					e.c[0] ^= p.c[0]
					e.c[1] ^= p.c[1]
					e.r ^= p.r
					if e.c == [2]uint64{} {
						ok = e.r == 0
						break
					}
					for e.c[0]&1 == 0 { // shift to the next coefficient
						e.c[0] = e.c[0]>>1 | e.c[1]<<63
						e.c[1] >>= 1
						s++
					}
				}
				if !ok {
					break
				}
			}
			if !ok {
				continue
			}
			// sol[i] holds the solution bits of slot i (bit j: column j).
			sol := make([]uint32, slots)
			for s := int(slots) - 1; s >= 0; s-- {
				p := rows[s]
				if p.c[0]&1 == 0 {
					continue // free variable: 0
				}
				v := p.r
				for k := 1; k < 128; k++ {
					if p.c[k/64]>>(k%64)&1 == 1 {
						v ^= sol[s+k]
					}
				}
				sol[s] = v
			}
			for blk := uint64(0); blk < l.numBlocks; blk++ {
				for j := 0; j < l.cols(blk); j++ {
					for h := uint64(0); h < 2; h++ {
						var w uint64
						for o := uint64(0); o < 64; o++ {
							w |= uint64(sol[128*blk+64*h+o]>>j&1) << o
						}
						words = append(words, w)
					}
				}
			}
			return words, seed, slots
		}
		slots += (uint64(float64(slots)*growStep) + 127) / 128 * 128
	}
	t.Fatal("reference build failed")
	return nil, 0, 0
}

// poison fills the builder's whole row buffer with rows that look
// stored, as stale rows of an earlier build would: a build must clear
// every row it reads.
func poison(b *Builder) {
	rows := b.rows[:cap(b.rows)]
	for i := range rows {
		rows[i] = band{lo: uint64(i)<<1 | 1, hi: uint64(i)}
	}
	res := b.res[:cap(b.res)]
	for i := range res {
		res[i] = uint32(i) | 1
	}
}

// refReduce is hashing.Reduce written out: the high word of x·n.
func refReduce(x, n uint64) uint64 {
	xh, xl := x>>32, x&(1<<32-1)
	nh, nl := n>>32, n&(1<<32-1)
	mid := xh*nl + (xl*nl)>>32
	mid2 := xl*nh + mid&(1<<32-1)
	return xh*nh + mid>>32 + mid2>>32
}

// The builder's output is exactly the plain construction's (same seed,
// same slots, same solution words, bit for bit) across column counts,
// duplicates, shuffled input, seed retries and a size where the fast
// paths' bucketing and the lower/upper column boundary both matter: the
// filter a set of keys builds into is a function of the keys and the
// parameters only.
func TestBuildMatchesReference(t *testing.T) {
	var b Builder
	rng := rand.New(rand.NewPCG(5, 6))
	retried := false
	for _, c := range []struct {
		n, dups, sets int
		fpr           float64
	}{
		{1, 0, 2, 0.25}, {2, 5, 2, 0.01}, {300, 0, 3, 0.01}, {2000, 700, 60, 0.05}, {5000, 0, 3, 0.3},
		{20000, 0, 2, 1e-9}, {20000, 20000, 2, 0.01}, {60000, 10, 2, 0.01}, {200_000, 0, 2, 0.01},
	} {
		for set := range c.sets {
			keys := filtertest.Hashes(c.n, uint64(1000*c.n+set))
			for range c.dups {
				keys = append(keys, keys[rng.IntN(c.n)])
			}
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			poison(&b)
			f := mustBuild(t, &b, keys, Params{FPR: c.fpr})
			retried = retried || b.Attempts > 1
			words, seed, slots := refBuild(t, keys, c.fpr)
			raw := f.AppendRaw(nil)
			want := make([]byte, 0, 8*len(words))
			for _, w := range words {
				want = append(want, byte(w), byte(w>>8), byte(w>>16), byte(w>>24), byte(w>>32), byte(w>>40), byte(w>>48), byte(w>>56))
			}
			if f.Seed() != seed || uint64(f.Slots()) != slots || !bytes.Equal(raw, want) {
				t.Fatalf("n=%d dups=%d fpr=%v set %d: seed %d slots %d, reference seed %d slots %d; solutions equal: %v",
					c.n, c.dups, c.fpr, set, f.Seed(), f.Slots(), seed, slots, bytes.Equal(raw, want))
			}
			if d := len(slices.Compact(slices.Sorted(slices.Values(keys)))); f.Len() != d {
				t.Fatalf("n=%d dups=%d: Len %d, want %d", c.n, c.dups, f.Len(), d)
			}
			// Building again from the same keys in another order gives
			// the same bytes.
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			g := mustBuild(t, &b, keys, Params{FPR: c.fpr})
			if !bytes.Equal(g.AppendRaw(nil), raw) || g.Seed() != f.Seed() {
				t.Fatalf("n=%d: rebuild differs", c.n)
			}
		}
	}
	if !retried {
		t.Error("no build needed a second seed; the retry path is not compared")
	}
}

// A reused builder whose buffers hold stale rows builds the same filter
// as a fresh one, at a size where some equations drift more than 128
// slots past their start (so a row must be cleared before it is read even
// beyond the reach of its bucket).
func TestReusedBuilderMatchesFresh(t *testing.T) {
	keys := filtertest.Hashes(1_000_000, 94)
	want := mustBuild(t, new(Builder), keys, Params{FPR: 0.01}).AppendRaw(nil)
	var b Builder
	mustBuild(t, &b, filtertest.Hashes(1_100_000, 95), Params{FPR: 0.01})
	for range 2 {
		poison(&b)
		if got := mustBuild(t, &b, keys, Params{FPR: 0.01}).AppendRaw(nil); !bytes.Equal(got, want) {
			t.Fatal("reused builder built a different filter")
		}
	}
}
