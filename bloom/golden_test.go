package bloom

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

const goldenDir = "testdata/golden/v1"

// goldenKey is the SipHash key of the keyed golden file: bytes 00..0f.
var goldenKey = [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// alignDesign gives a filter built now the golden filter's design FPR
// where only the platform's floating point tells them apart (see
// filtertest.AlignDesignFPR).
func alignDesign(now bloomery.Adder, golden bloomery.Filter) bool {
	switch f := now.(type) {
	case *Filter:
		return filtertest.AlignDesignFPR(&f.design, golden.(*Filter).design)
	case *Blocked:
		return filtertest.AlignDesignFPR(&f.design, golden.(*Blocked).design)
	}
	return false
}

func goldenKeys() []string {
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("golden-key-%04d", i)
	}
	return keys
}

type goldenCase struct {
	file   string
	build  func() (bloomery.Adder, error)
	decode func([]byte, hashing.Expect) (bloomery.Filter, error)
	want   hashing.Expect
}

func goldenCases() []goldenCase {
	decF := func(b []byte, w hashing.Expect) (bloomery.Filter, error) { return Decode(b, w) }
	decB := func(b []byte, w hashing.Expect) (bloomery.Filter, error) { return DecodeBlocked(b, w) }
	return []goldenCase{
		// Layout 1, as every standard filter was written before layout 2.
		{"bloom.blmy", func() (bloomery.Adder, error) { return newLayout1(Params{Capacity: 500, FPR: 0.01}) }, decF, hashing.Expect{}},
		{"bloom_layout2.blmy", func() (bloomery.Adder, error) { return New(Params{Capacity: 500, FPR: 0.01}) }, decF, hashing.Expect{}},
		{"blocked.blmy", func() (bloomery.Adder, error) { return NewBlocked(Params{Capacity: 500, FPR: 0.01}) }, decB, hashing.Expect{}},
		{"bloom_siphash.blmy", func() (bloomery.Adder, error) {
			return newLayout1(Params{Capacity: 500, FPR: 0.01, Hasher: hashing.SipHash(goldenKey)})
		}, decF, hashing.Want(hashing.SipHash(goldenKey))},
		{"blocked_xxh3_seed.blmy", func() (bloomery.Adder, error) {
			return NewBlocked(Params{Capacity: 500, BitsPerKey: 12, Hasher: hashing.XXH3(0x5eed)})
		}, decB, hashing.Want(hashing.XXH3(0x5eed))},
	}
}

// TestGolden decodes the golden files written by an earlier build: they
// must decode, hold their fixed keys, re-encode to the same bytes, and a
// filter built now from the same keys must encode to the same bytes (so
// the hashing, probe derivation and layout have not changed). Run with
// -update to rewrite them, only for a new layout version.
func TestGolden(t *testing.T) {
	keys := goldenKeys()
	for _, gc := range goldenCases() {
		f, err := gc.build()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			f.AddString(k)
		}
		built, _ := f.MarshalBinary()
		path := filepath.Join(goldenDir, gc.file)
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, built, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGolden -update to create)", err)
		}
		g, err := gc.decode(data, gc.want)
		if err != nil {
			t.Fatalf("%s: %v", gc.file, err)
		}
		for _, k := range keys {
			if !g.ContainsString(k) {
				t.Fatalf("%s: lost key %q", gc.file, k)
			}
		}
		if g.Len() < len(keys)-5 || g.Len() > len(keys) {
			t.Errorf("%s: Len %d for %d keys", gc.file, g.Len(), len(keys))
		}
		again, _ := g.AppendBinary(nil)
		if !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding differs from the golden bytes", gc.file)
		}
		if !bytes.Equal(built, data) && alignDesign(f, g) {
			built, _ = f.MarshalBinary()
		}
		if !bytes.Equal(built, data) {
			t.Errorf("%s: a filter built now from the golden keys encodes differently: the derivation changed (needs a new layout version)", gc.file)
		}
	}
}

// TestGoldenKeyed checks the expectations a keyed file enforces.
func TestGoldenKeyed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenDir, "bloom_siphash.blmy"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, goldenKey[:]) {
		t.Error("keyed file contains the key")
	}
	if _, err := Decode(data, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Errorf("no key: %v, want ErrKeyRequired", err)
	}
	other := goldenKey
	other[0] = 99
	if _, err := Decode(data, hashing.Want(hashing.SipHash(other))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("wrong key: %v, want ErrIncompatible", err)
	}
	f, err := Decode(data, hashing.Expect{Keyless: true})
	if err != nil {
		t.Fatal(err)
	}
	// Keyless: the hash methods still answer.
	if !f.ContainsHash(hashing.SipHash(goldenKey).Sum64String("golden-key-0001")) {
		t.Error("keyless filter misses a key by hash")
	}
	var g Filter
	if err := g.UnmarshalBinary(data); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Errorf("UnmarshalBinary of keyed data: %v", err)
	}
	g.hasher = hashing.SipHash(goldenKey)
	if err := g.UnmarshalBinary(data); err != nil || !g.ContainsString("golden-key-0002") {
		t.Errorf("UnmarshalBinary into a keyed filter: %v", err)
	}
}

// newLayout1 builds a layout 1 standard filter, as New did before layout 2.
func newLayout1(p Params) (*Filter, error) {
	m, k, err := standardSize(p)
	if err != nil {
		return nil, err
	}
	return newFilter(m, k, p.Capacity, p.Hasher, Layout1), nil
}
