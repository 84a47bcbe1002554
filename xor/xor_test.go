package xor

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/filtertest"
)

func size(full, short int) int {
	if filtertest.Short() {
		return short
	}
	return full
}

// TestSizing pins the published capacity 32 + ceil(1.23 n), rounded down
// to a multiple of 3, and the resulting 9.84 bits/key.
func TestSizing(t *testing.T) {
	for _, tc := range []struct{ n, cells int }{
		{1, 33}, {2, 33}, {3, 36}, {100, 153}, {1000, 1260}, {1_000_000, 1_230_030}, {10_000_000, 12_300_030},
	} {
		if got := Cells(tc.n); got != tc.cells {
			t.Errorf("Cells(%d) = %d, want %d", tc.n, got, tc.cells)
		}
	}
	if Cells(0) != 0 || BitsPerKey(0) != 0 {
		t.Error("n=0 should size to nothing")
	}
	if got := BitsPerKey(1_000_000); math.Abs(got-9.84) > 0.001 {
		t.Errorf("BitsPerKey(1e6) = %.4f, want 9.84", got)
	}
	f, err := Build(filtertest.Hashes(100_000, 1), Params{})
	if err != nil {
		t.Fatal(err)
	}
	if f.SizeBytes() != Cells(100_000) || f.Stats().BitsPerKey != BitsPerKey(100_000) {
		t.Errorf("built size %d, sizing says %d", f.SizeBytes(), Cells(100_000))
	}
}

func TestNoFalseNegatives(t *testing.T) {
	n := size(1_000_000, 100_000)
	hs := filtertest.Hashes(n, 1)
	f, err := Build(hs, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != n || f.Kind() != bloomery.KindXor8 {
		t.Fatalf("Len %d Kind %v", f.Len(), f.Kind())
	}
	filtertest.NoFalseNegatives(t, "built", f.ContainsHash, hs)
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	filtertest.NoFalseNegatives(t, "unmarshalled", g.ContainsHash, hs)
	again, _ := g.MarshalBinary()
	if !bytes.Equal(again, data) {
		t.Fatal("re-encoding differs")
	}
	out := make([]bool, n)
	g.ContainsBatch(hs, out)
	if i := slices.Index(out, false); i >= 0 {
		t.Fatalf("ContainsBatch: false negative at %d", i)
	}
	app, _ := f.AppendBinary([]byte("xy"))
	if !bytes.Equal(app[2:], data) || string(app[:2]) != "xy" {
		t.Fatal("AppendBinary did not append")
	}
}

func TestBuilderReuse(t *testing.T) {
	var b Builder
	sizes := []int{size(1_000_000, 100_000), 1000, size(300_000, 30_000), 2, 0, 5000}
	var filters []*Filter
	var sets [][]uint64
	for i, n := range sizes {
		hs := filtertest.Hashes(n, uint64(50+i))
		f, err := b.Build(hs, Params{})
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := Build(hs, Params{})
		d1, _ := f.MarshalBinary()
		d2, _ := ref.MarshalBinary()
		if !bytes.Equal(d1, d2) {
			t.Fatalf("build %d: Builder and Build disagree", i)
		}
		filters = append(filters, f)
		sets = append(sets, hs)
	}
	for i, f := range filters {
		filtertest.NoFalseNegatives(t, fmt.Sprintf("build %d after reuse", i), f.ContainsHash, sets[i])
	}
	b.Reset()
	if _, err := b.Build(sets[1], Params{}); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicates(t *testing.T) {
	distinct := filtertest.Hashes(size(200_000, 20_000), 3)
	shuffled := slices.Concat(distinct, distinct, distinct)
	s := filtertest.SplitMix64(4)
	for i := len(shuffled) - 1; i > 0; i-- {
		j := int(s.Next() % uint64(i+1))
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	}
	for name, hs := range map[string][]uint64{
		"each key 3 times shuffled": shuffled,
		"one key 10000 times":       slices.Repeat([]uint64{7}, 10_000),
		"100 keys 300 times":        slices.Repeat(distinct[:100], 300),
	} {
		t.Run(name, func(t *testing.T) {
			want := len(slices.Compact(slices.Sorted(slices.Values(hs))))
			before := slices.Clone(hs)
			f, err := Build(hs, Params{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(before, hs) {
				t.Fatal("Build modified its input")
			}
			if f.Len() != want {
				t.Errorf("Len %d, want %d", f.Len(), want)
			}
			filtertest.NoFalseNegatives(t, name, f.ContainsHash, hs)
		})
	}
}

func TestFPR(t *testing.T) {
	hs := filtertest.Hashes(size(1_000_000, 100_000), 1)
	f, err := Build(hs, Params{})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Ldexp(1, -8)
	if math.Abs(f.EstimatedFPR()-want) > 1e-12 {
		t.Errorf("EstimatedFPR %v", f.EstimatedFPR())
	}
	probes := size(4_000_000, 400_000)
	filtertest.CheckFPR(t, "xor8", filtertest.MeasureFPR(f.ContainsHash, probes, 77), want, 0.15, probes)
}

func TestZeroAllocs(t *testing.T) {
	hs := filtertest.Hashes(10_000, 1)
	f, _ := Build(hs, Params{})
	out := make([]bool, 1000)
	k := []byte("key")
	filtertest.ZeroAllocs(t, "ContainsHash", func() { f.ContainsHash(hs[3]) })
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(k) })
	filtertest.ZeroAllocs(t, "ContainsString", func() { f.ContainsString("key") })
	filtertest.ZeroAllocs(t, "ContainsBatch", func() { f.ContainsBatch(hs[:1000], out) })
}

func TestSmall(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			hs := filtertest.Hashes(n, 5)
			f, err := Build(hs, Params{})
			if err != nil {
				t.Fatal(err)
			}
			if f.Len() != n {
				t.Fatalf("Len %d", f.Len())
			}
			filtertest.NoFalseNegatives(t, "small", f.ContainsHash, hs)
			data, _ := f.MarshalBinary()
			g, err := Decode(data, hashing.Expect{})
			if err != nil {
				t.Fatal(err)
			}
			filtertest.NoFalseNegatives(t, "small decoded", g.ContainsHash, hs)
			if n == 0 {
				if fp := filtertest.MeasureFPR(g.ContainsHash, 10_000, 3); fp != 0 || g.EstimatedFPR() != 0 || g.SizeBytes() != 0 {
					t.Errorf("empty filter: FPR %v size %d", fp, g.SizeBytes())
				}
				out := []bool{true}
				g.ContainsBatch([]uint64{9}, out)
				if out[0] {
					t.Error("empty filter: ContainsBatch answered true")
				}
			}
		})
	}
}

func TestBatch(t *testing.T) {
	for _, n := range []int{1, 1000, 100_000} {
		hs := filtertest.Hashes(n, 1)
		probes := append(filtertest.Hashes(5000, 9), hs...)
		out := make([]bool, len(probes)+1)
		f, _ := Build(hs, Params{})
		for _, c := range []int{0, 1, 31, 32, 33, 64, 65, 1000, len(probes)} {
			out[c] = true
			f.ContainsBatch(probes[:c], out)
			for i := range c {
				if out[i] != f.ContainsHash(probes[i]) {
					t.Fatalf("n=%d batch of %d: out[%d] differs", n, c, i)
				}
			}
			if !out[c] {
				t.Fatal("ContainsBatch wrote past len(hashes)")
			}
		}
	}
}

func TestBuildKeysAndHashers(t *testing.T) {
	keys := filtertest.Keys(30_000, 8)
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(5), hashing.SipHash([16]byte{4})} {
		f, err := BuildKeys(keys, Params{Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !f.Contains(k) || !f.ContainsString(string(k)) {
				t.Fatalf("%v: false negative", h)
			}
		}
		data, _ := f.MarshalBinary()
		if h.Keyed() {
			if _, err := Decode(data, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
				t.Fatalf("keyed without key: %v", err)
			}
		}
		g, err := Decode(data, hashing.Want(h))
		if err != nil {
			t.Fatal(err)
		}
		if !g.Hasher().Equal(h) || !g.Contains(keys[0]) {
			t.Fatal("decoded filter lost its hasher")
		}
	}
	var b Builder
	for i := range 3 {
		ks := filtertest.Keys(500*(i+1), uint64(i))
		f, err := b.BuildKeys(ks, Params{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if !f.Contains(k) {
				t.Fatal("Builder.BuildKeys: false negative")
			}
		}
	}
}

func TestDeterministicAndFailure(t *testing.T) {
	hs := filtertest.Hashes(5000, 2)
	a, _ := Build(hs, Params{Seed: 1})
	b, _ := Build(hs, Params{Seed: 1})
	c, _ := Build(hs, Params{Seed: 2})
	da, _ := a.MarshalBinary()
	db, _ := b.MarshalBinary()
	dc, _ := c.MarshalBinary()
	if !bytes.Equal(da, db) || bytes.Equal(da, dc) {
		t.Error("construction is not a deterministic function of (hashes, Params)")
	}
	var bld Builder
	if _, err := bld.build(hs, Params{}, 0); !errors.Is(err, bloomery.ErrBuildFailed) {
		t.Errorf("no attempts: %v, want ErrBuildFailed", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	f, _ := Build(filtertest.Hashes(1000, 1), Params{})
	data, _ := f.MarshalBinary()
	for _, cut := range []int{0, 5, 30, len(data) - 1} {
		if _, err := Decode(data[:cut], hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("truncated to %d: %v", cut, err)
		}
	}
	bad := slices.Clone(data)
	bad[len(bad)-20] ^= 4
	if _, err := Decode(bad, hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("flipped bit: %v", err)
	}
	var g Filter
	if err := g.UnmarshalBinary(bad); err == nil || g.Len() != 0 {
		t.Error("UnmarshalBinary accepted corrupt data or modified the filter")
	}
	_, params, payload, err := container.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	frame := func(kind bloomery.Kind, layout byte, p, pl []byte) []byte {
		return container.Append(nil, kind, layout, hashing.Hasher{}, p, pl)
	}
	if _, err := Decode(frame(bloomery.KindXor8, Layout, params, payload), hashing.Expect{}); err != nil {
		t.Fatalf("re-framed original: %v", err)
	}
	if _, err := Decode(frame(bloomery.KindFuse8, Layout, params, payload), hashing.Expect{}); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("fuse8 kind: %v", err)
	}
	if _, err := Decode(frame(bloomery.KindXor8, 2, params, payload), hashing.Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Errorf("layout 2: %v", err)
	}
	set := func(off int, v uint64) []byte {
		p := slices.Clone(params)
		for i := range 8 {
			p[off+i] = byte(v >> (8 * i))
		}
		return p
	}
	for name, p := range map[string][]byte{
		"n > cells":        set(8, 5000),
		"zero block":       set(16, 0),
		"block mismatch":   set(16, uint64(len(payload)/3+1)),
		"huge block":       set(16, 1<<62),
		"empty with cells": set(8, 0),
		"short params":     params[:23],
		"long params":      append(slices.Clone(params), 1),
	} {
		if _, err := Decode(frame(bloomery.KindXor8, Layout, p, payload), hashing.Expect{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
