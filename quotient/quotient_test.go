package quotient

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func mustNew(t testing.TB, p Params) *Filter {
	t.Helper()
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkInvariants runs the decoder's full consistency check.
func checkInvariants(t testing.TB, f *Filter) {
	t.Helper()
	if err := f.validate(); err != nil {
		t.Fatal(err)
	}
}

// TestModel runs random interleavings of insert, delete and count against
// an exact multiset and checks: no false negatives for keys whose inserts
// outnumber their deletes, counts never below the true count, and the
// structure's invariants after every batch.
func TestModel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int
		r        int
		keys     int
		ops      int
	}{
		{"small-r4", 500, 4, 300, 20000},   // many collisions and long runs
		{"mid-r8", 5000, 8, 3000, 100000},  // typical
		{"dense-r2", 2000, 2, 1000, 50000}, // tiny remainders: many repeats
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustNew(t, Params{Capacity: tc.capacity, RemainderBits: tc.r})
			model := map[uint64]int{}
			keys := filtertest.Hashes(tc.keys, 11)
			rng := filtertest.SplitMix64(99)
			for op := 0; op < tc.ops; op++ {
				h := keys[rng.Next()%uint64(len(keys))]
				switch rng.Next() % 10 {
				case 0, 1, 2, 3, 4:
					if f.Len() >= int(0.9*float64(f.nslots)) {
						continue
					}
					if err := f.InsertHash(h); err != nil {
						t.Fatalf("op %d: insert: %v", op, err)
					}
					model[h]++
				case 5, 6, 7:
					if model[h] > 0 {
						if !f.DeleteHash(h) {
							t.Fatalf("op %d: delete of a present key failed", op)
						}
						model[h]--
					}
				default:
					if c := f.CountHash(h); c < model[h] {
						t.Fatalf("op %d: count %d < true count %d", op, c, model[h])
					}
				}
				if op%997 == 0 {
					checkInvariants(t, f)
				}
			}
			checkInvariants(t, f)
			total := 0
			for h, c := range model {
				total += c
				if c > 0 && !f.ContainsHash(h) {
					t.Fatalf("false negative for a key inserted %d more times than deleted", c)
				}
				if got := f.CountHash(h); got < c {
					t.Fatalf("count %d < %d", got, c)
				}
			}
			if f.Len() != total {
				t.Fatalf("Len %d, model %d", f.Len(), total)
			}
			// Delete everything: the filter must be empty again.
			for h, c := range model {
				for ; c > 0; c-- {
					if !f.DeleteHash(h) {
						t.Fatal("delete failed while emptying")
					}
				}
			}
			checkInvariants(t, f)
			if f.Len() != 0 {
				t.Fatalf("Len %d after deleting all", f.Len())
			}
			for _, w := range f.occupieds {
				if w != 0 {
					t.Fatal("occupied bits left")
				}
			}
		})
	}
}

func TestInsertDeleteRepeats(t *testing.T) {
	f := mustNew(t, Params{Capacity: 1000, FPR: 0.001})
	key := []byte("repeated")
	for i := 0; i < 7; i++ {
		f.Insert(key)
	}
	if c := f.Count(key); c != 7 {
		t.Fatalf("count %d", c)
	}
	for i := 0; i < 7; i++ {
		if !f.Delete(key) {
			t.Fatal("delete")
		}
	}
	if f.Contains(key) {
		t.Fatal("still present after deleting as many times as inserted")
	}
}

// TestMillion: no false negatives for 10^6 keys before and after
// marshalling, resizing twice and merging; measured FPR within ±15% of
// 1-(1-2^-p)^n; space at 95% load within 15% of (r+2.125)/0.95.
func TestMillion(t *testing.T) {
	n := 1_000_000
	keys := filtertest.Hashes(n, 1)
	// 2^20 slots; 0.95*2^20 = 996147 keys fill it to 95%.
	f := mustNew(t, Params{Capacity: 996_147, RemainderBits: 8})
	if f.Slots() != 1<<20 {
		t.Fatalf("slots %d", f.Slots())
	}
	fill := keys[:996_147]
	for _, h := range fill {
		if err := f.InsertHash(h); err != nil {
			t.Fatal(err)
		}
	}
	filtertest.NoFalseNegatives(t, "filled", f.ContainsHash, fill)
	bpk := float64(8*f.SizeBytes()) / float64(len(fill))
	ideal := (8 + 2.125) / 0.95
	t.Logf("r=8 at %.1f%% load: %.2f bits/key, ideal (r+2.125)/0.95 = %.2f", 100*f.LoadFactor(), bpk, ideal)
	if bpk > 1.15*ideal {
		t.Errorf("bits/key %.2f exceeds 1.15 x %.2f", bpk, ideal)
	}
	probes := 2_000_000
	want := f.EstimatedFPR()
	filtertest.CheckFPR(t, "r=8 at 95% load", filtertest.MeasureFPR(f.ContainsHash, probes, 77), want, 0.15, probes)

	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "decoded", g.ContainsHash, fill)

	r1, err := g.Resize()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := r1.Resize()
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, r2)
	filtertest.NoFalseNegatives(t, "resized twice", r2.ContainsHash, fill)
	if r2.Len() != f.Len() || r2.Slots() != 4*f.Slots() {
		t.Fatalf("resize: len %d slots %d", r2.Len(), r2.Slots())
	}
	// Same fingerprints, so the same FPR for the same keys.
	filtertest.CheckFPR(t, "after 2 resizes", filtertest.MeasureFPR(r2.ContainsHash, probes, 77), want, 0.15, probes)

	// Merge with a filter of the remaining keys.
	rest := keys[996_147:]
	probe := mustNew(t, Params{Capacity: len(rest), RemainderBits: 1})
	other := mustNew(t, Params{Capacity: len(rest), RemainderBits: int(f.p) - probe.QuotientBits()})
	for _, h := range rest {
		other.InsertHash(h)
	}
	if other.p != f.p {
		t.Fatalf("p %d vs %d", other.p, f.p)
	}
	m, err := Merge(f, other)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	filtertest.NoFalseNegatives(t, "merged", m.ContainsHash, keys)
	if m.Len() != n {
		t.Fatalf("merged len %d", m.Len())
	}
}

// TestDoublingsKeepFPR: with spare bits reserved for two doublings, a
// filter resized twice and filled to 4x its capacity still meets the
// design FPR (within ±15% of the formula); one without spare bits does
// not.
func TestDoublingsKeepFPR(t *testing.T) {
	capacity := 60_000
	keys := filtertest.Hashes(4*capacity, 5)
	for _, d := range []int{0, 2} {
		f := mustNew(t, Params{Capacity: capacity, FPR: 0.01, Doublings: d})
		var err error
		for _, h := range keys {
			if f.LoadFactor() > 0.9 {
				if f, err = f.Resize(); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.InsertHash(h); err != nil {
				t.Fatal(err)
			}
		}
		filtertest.NoFalseNegatives(t, "after growth", f.ContainsHash, keys)
		probes := 1_000_000
		got := filtertest.MeasureFPR(f.ContainsHash, probes, 9)
		filtertest.CheckFPR(t, "grown", got, f.EstimatedFPR(), 0.15, probes)
		t.Logf("doublings reserved=%d: p=%d, FPR at 4x capacity %.4f%% (design %.2f%%)", d, f.p, 100*got, 1.0)
		if d == 2 && got > 0.01*1.15 {
			t.Errorf("with 2 reserved doublings FPR %.4f exceeds the 1%% design", got)
		}
		if d == 0 && got < 0.02 {
			t.Errorf("without reserved doublings FPR %.4f should have grown past 2%%", got)
		}
	}
}

func TestFull(t *testing.T) {
	f := mustNew(t, Params{Capacity: 60, RemainderBits: 6})
	keys := filtertest.Hashes(10000, 3)
	var inserted []uint64
	for _, h := range keys {
		before, _ := f.MarshalBinary()
		err := f.InsertHash(h)
		if err != nil {
			if !errors.Is(err, bloomery.ErrFull) {
				t.Fatal(err)
			}
			after, _ := f.MarshalBinary()
			if !bytes.Equal(before, after) {
				t.Fatal("failed insert changed the filter")
			}
			break
		}
		inserted = append(inserted, h)
	}
	if len(inserted) < int(f.nslots) {
		t.Fatalf("full after only %d inserts into %d home slots", len(inserted), f.nslots)
	}
	filtertest.NoFalseNegatives(t, "full", f.ContainsHash, inserted)
}

func TestMergeIncompatible(t *testing.T) {
	a := mustNew(t, Params{Capacity: 1000, RemainderBits: 8})
	b := mustNew(t, Params{Capacity: 1000, RemainderBits: 9})
	if _, err := Merge(a, b); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("width mismatch: %v", err)
	}
	c := mustNew(t, Params{Capacity: 1000, RemainderBits: 8, Hasher: hashing.XXH3(1)})
	if _, err := Merge(a, c); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("seed mismatch: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	f := mustNew(t, Params{Capacity: 10000, FPR: 0.01})
	keys := filtertest.Hashes(5000, 1)
	for _, h := range keys {
		f.InsertHash(h)
	}
	k := []byte("key")
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(k); f.ContainsHash(keys[7]); f.CountHash(keys[9]) })
	filtertest.ZeroAllocs(t, "Insert/Delete", func() { f.InsertHash(keys[3]); f.DeleteHash(keys[3]) })
}

func goldenFilter() *Filter {
	f, _ := New(Params{Capacity: 200, FPR: 0.01, Doublings: 1})
	for _, k := range filtertest.Keys(150, 42) {
		f.Add(k)
	}
	f.Add([]byte("twice"))
	f.Add([]byte("twice"))
	return f
}

// TestGolden decodes the committed v1 file forever: its keys are present,
// and re-encoding yields the same bytes.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden", "v1", "quotient.blmy")
	if *update {
		b, _ := goldenFilter().MarshalBinary()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range filtertest.Keys(150, 42) {
		if !f.Contains(k) {
			t.Fatalf("golden filter lost %q", k)
		}
	}
	if f.Count([]byte("twice")) < 2 {
		t.Fatal("golden count")
	}
	again, _ := f.MarshalBinary()
	if !bytes.Equal(again, data) {
		t.Fatal("re-encoding differs from golden bytes")
	}
	if fresh, _ := goldenFilter().MarshalBinary(); !bytes.Equal(fresh, data) {
		t.Fatal("encoder output changed for the same keys: bump the layout version")
	}
}

func TestDecodeRefusals(t *testing.T) {
	data, _ := goldenFilter().MarshalBinary()
	var k [16]byte
	if _, err := Decode(data, hashing.Want(hashing.SipHash(k))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("hash mismatch: %v", err)
	}
	bad := bytes.Clone(data)
	bad[len(bad)-10] ^= 0x40
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("checksum: %v", err)
	}
}

func TestStats(t *testing.T) {
	f := goldenFilter()
	s := f.Stats()
	if s.Kind != bloomery.KindQuotient || s.Len != 152 || s.FingerprintBits != f.FingerprintBits() {
		t.Fatalf("%+v", s)
	}
	if math.Abs(s.EstimatedFPR-fprAt(152, f.p)) > 1e-12 || s.Overfilled {
		t.Fatalf("%+v", s)
	}
}

func TestSizeMatchesNew(t *testing.T) {
	for _, n := range []int{1, 100, 60_000, 1_000_000} {
		p := Params{Capacity: n, FPR: 0.01, Doublings: 1}
		q, r, size, err := Size(p)
		if err != nil {
			t.Fatal(err)
		}
		f := mustNew(t, p)
		if q != f.QuotientBits() || r != f.RemainderBits() || size != int64(f.SizeBytes()) {
			t.Fatalf("n=%d: Size says q=%d r=%d %d bytes, New made q=%d r=%d %d bytes", n, q, r, size, f.QuotientBits(), f.RemainderBits(), f.SizeBytes())
		}
	}
}
