package xor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/v1 from the fixed keys")

const goldenDir = "testdata/golden/v1"

var goldenCases = []struct {
	file   string
	n      int
	hasher hashing.Hasher
}{
	{"xor8-1000.blmy", 1000, hashing.Hasher{}},
	{"xor8-xxh3-seed9-200.blmy", 200, hashing.XXH3(9)},
	{"xor8-3.blmy", 3, hashing.Hasher{}},
	{"xor8-empty.blmy", 0, hashing.Hasher{}},
	{"xor8-siphash-100.blmy", 100, hashing.SipHash([16]byte{0: 3, 15: 4})},
}

// TestGolden decodes the golden files (they must decode forever), checks
// the fixed keys and that re-encoding and rebuilding give the same bytes.
// With -update it rewrites them.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.file, func(t *testing.T) {
			keys := filtertest.Keys(gc.n, 2026)
			f, err := BuildKeys(keys, Params{Hasher: gc.hasher, Seed: 2026})
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
			g, err := Decode(data, hashing.Want(gc.hasher))
			if err != nil {
				t.Fatal(err)
			}
			if g.Len() != gc.n {
				t.Errorf("Len %d, want %d", g.Len(), gc.n)
			}
			for _, k := range keys {
				if !g.Contains(k) {
					t.Fatalf("golden filter misses fixed key %q", k)
				}
			}
			again, _ := g.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Error("re-encoding the golden file changed its bytes")
			}
			if !bytes.Equal(built, data) {
				t.Error("building from the fixed keys no longer gives the golden bytes (a new layout needs a new golden directory)")
			}
		})
	}
}
