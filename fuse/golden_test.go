package fuse

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

// goldenCase is one golden file: a filter built from fixed keys.
type goldenCase struct {
	file   string
	n      int
	hasher hashing.Hasher
	build  func(keys [][]byte, h hashing.Hasher) ([]byte, error)
	decode func(data []byte, want hashing.Expect) (query, error)
}

func goldenBuild[T Fingerprint](arity int) func([][]byte, hashing.Hasher) ([]byte, error) {
	return func(keys [][]byte, h hashing.Hasher) ([]byte, error) {
		f, err := BuildKeys[T](keys, Params{Arity: arity, Hasher: h, Seed: 2026})
		if err != nil {
			return nil, err
		}
		return f.MarshalBinary()
	}
}

func goldenDecode[T Fingerprint](data []byte, want hashing.Expect) (query, error) {
	return Decode[T](data, want)
}

var goldenCases = []goldenCase{
	{"fuse8-1000.blmy", 1000, hashing.Hasher{}, goldenBuild[uint8](3), goldenDecode[uint8]},
	{"fuse16-1000.blmy", 1000, hashing.XXH3(7), goldenBuild[uint16](3), goldenDecode[uint16]},
	{"fuse8-4-1000.blmy", 1000, hashing.Hasher{}, goldenBuild[uint8](4), goldenDecode[uint8]},
	{"fuse16-4-1000.blmy", 1000, hashing.XXH64(3), goldenBuild[uint16](4), goldenDecode[uint16]},
	{"fuse8-3.blmy", 3, hashing.Hasher{}, goldenBuild[uint8](3), goldenDecode[uint8]},
	{"fuse8-empty.blmy", 0, hashing.Hasher{}, goldenBuild[uint8](3), goldenDecode[uint8]},
	{"fuse8-siphash-100.blmy", 100, hashing.SipHash([16]byte{0: 1, 15: 2}), goldenBuild[uint8](3), goldenDecode[uint8]},
}

const goldenDir = "testdata/golden/v1"

// TestGolden decodes the golden files written by earlier versions (they
// must decode forever), checks membership of the fixed keys, and checks
// that re-encoding and rebuilding give the same bytes. With -update it
// rewrites the files instead.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.file, func(t *testing.T) {
			keys := filtertest.Keys(gc.n, 2026)
			path := filepath.Join(goldenDir, gc.file)
			built, err := gc.build(keys, gc.hasher)
			if err != nil {
				t.Fatal(err)
			}
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
			f, err := gc.decode(data, hashing.Want(gc.hasher))
			if err != nil {
				t.Fatal(err)
			}
			if f.Len() != gc.n {
				t.Errorf("Len %d, want %d", f.Len(), gc.n)
			}
			for _, k := range keys {
				if !f.Contains(k) {
					t.Fatalf("golden filter misses fixed key %q", k)
				}
			}
			again, _ := f.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Error("re-encoding the golden file changed its bytes")
			}
			if !bytes.Equal(built, data) {
				t.Error("building from the fixed keys no longer gives the golden bytes (construction or format changed: a new layout needs a new golden directory)")
			}
		})
	}
}
