package ribbon

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

const goldenDir = "testdata/golden/v1"

// goldenKey is the SipHash key of the keyed golden file: bytes 00..0f.
var goldenKey = [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func goldenKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "golden-key-%04d", i)
	}
	return keys
}

type goldenCase struct {
	file string
	keys int
	p    Params
	want hashing.Expect
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"ribbon_1pct.blmy", 1000, Params{FPR: 0.01}, hashing.Expect{}},
		{"ribbon_bloom10_xxh3_seed.blmy", 300, Params{BloomBitsPerKey: 10, Hasher: hashing.XXH3(0x5eed)}, hashing.Want(hashing.XXH3(0x5eed))},
		{"ribbon_siphash_fpr5.blmy", 200, Params{FPR: 0.05, Hasher: hashing.SipHash(goldenKey)}, hashing.Want(hashing.SipHash(goldenKey))},
		{"ribbon_empty.blmy", 0, Params{FPR: 0.001}, hashing.Expect{}},
		{"ribbon_one.blmy", 1, Params{FPR: 0.25}, hashing.Expect{}},
	}
}

// TestGolden decodes the golden files written by an earlier build: they
// must decode, hold their fixed keys, re-encode to the same bytes, and a
// filter built now from the same keys must encode to the same bytes (so
// the row derivation, banding, back-substitution and layout have not
// changed). Run with -update to rewrite them, only for a new layout.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases() {
		keys := goldenKeys(gc.keys)
		f, err := BuildKeys(keys, gc.p)
		if err != nil {
			t.Fatal(err)
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
		g, err := Decode(data, gc.want)
		if err != nil {
			t.Fatalf("%s: %v", gc.file, err)
		}
		for _, k := range keys {
			if !g.Contains(k) {
				t.Fatalf("%s: false negative for %q", gc.file, k)
			}
		}
		if g.Len() != gc.keys {
			t.Errorf("%s: Len %d, want %d", gc.file, g.Len(), gc.keys)
		}
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding differs", gc.file)
		}
		if !bytes.Equal(built, data) && filtertest.AlignDesignFPR(&f.target, g.target) {
			built, _ = f.MarshalBinary()
		}
		if !bytes.Equal(built, data) {
			t.Errorf("%s: a filter built now encodes differently from the golden file (derivation or layout changed: new layout number needed)", gc.file)
		}
	}
}
