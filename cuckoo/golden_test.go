package cuckoo

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/v1")

// goldenCase builds a filter deterministically from fixed keys and returns
// it with the keys it must contain.
type goldenCase struct {
	name  string
	build func() (*Filter, [][]byte)
}

var goldenCases = []goldenCase{
	{"f8-n100", func() (*Filter, [][]byte) { return goldenFilter(Params{Capacity: 100, FingerprintBits: 8}, 100, 0) }},
	{"f12-n1000", func() (*Filter, [][]byte) {
		return goldenFilter(Params{Capacity: 1000, FingerprintBits: 12}, 1000, 100)
	}},
	{"f13-n333-seed7", func() (*Filter, [][]byte) {
		return goldenFilter(Params{Capacity: 333, FingerprintBits: 13, Hasher: hashing.XXH3(7)}, 300, 0)
	}},
	{"f16-n50", func() (*Filter, [][]byte) { return goldenFilter(Params{Capacity: 50, FingerprintBits: 16}, 50, 10) }},
	// Filled until the victim slot is in use.
	{"f8-full", func() (*Filter, [][]byte) { return goldenFilter(Params{Capacity: 64, FingerprintBits: 8}, 1000, 0) }},
}

// goldenFilter adds the first n of the fixed keys (as many as fit), then
// deletes the first del of those added.
func goldenFilter(p Params, n, del int) (*Filter, [][]byte) {
	f, err := New(p)
	if err != nil {
		panic(err)
	}
	var in [][]byte
	for _, k := range filtertest.Keys(n, 2026) {
		if f.Add(k) {
			in = append(in, k)
		}
	}
	for _, k := range in[:del] {
		f.Delete(k)
	}
	return f, in[del:]
}

func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "v1")
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			f, keys := gc.build()
			enc, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, gc.name+".blmy")
			if *update {
				if err := os.WriteFile(path, enc, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(enc, golden) {
				t.Errorf("encoding of %s differs from %s", gc.name, path)
			}
			g, err := Decode(golden, hashing.Want(f.Hasher()))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if !g.Contains(k) {
					t.Fatalf("golden filter lost key %q", k)
				}
			}
			re, _ := g.MarshalBinary()
			if !bytes.Equal(re, golden) {
				t.Error("re-encoded golden filter differs")
			}
			if gc.name == "f8-full" && !g.Full() {
				t.Error("f8-full does not use its victim slot")
			}
		})
	}
}

// TestGoldenRandomWalk decodes the golden files written by the insertion
// algorithm before the breadth-first relocation step (kicks were a plain
// random walk then, so the same keys landed in other slots). The format is
// unchanged, so they must still decode, hold their keys and re-encode to
// the same bytes.
func TestGoldenRandomWalk(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "v1", "randomwalk")
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			f, keys := gc.build()
			golden, err := os.ReadFile(filepath.Join(dir, gc.name+".blmy"))
			if err != nil {
				t.Fatal(err)
			}
			g, err := Decode(golden, hashing.Want(f.Hasher()))
			if err != nil {
				t.Fatal(err)
			}
			re, _ := g.MarshalBinary()
			if !bytes.Equal(re, golden) {
				t.Error("re-encoded golden filter differs")
			}
			if gc.name != "f8-full" {
				for _, k := range keys {
					if !g.Contains(k) {
						t.Fatalf("golden filter lost key %q", k)
					}
				}
				return
			}
			// Which keys fitted depended on the old walk; every one that
			// did is among the 1000 offered and must answer present.
			if !g.Full() {
				t.Error("f8-full does not use its victim slot")
			}
			present := 0
			for _, k := range filtertest.Keys(1000, 2026) {
				if g.Contains(k) {
					present++
				}
			}
			if present < g.Len() {
				t.Errorf("%d of the offered keys present, filter holds %d", present, g.Len())
			}
		})
	}
}

func splitEnvelope(t testing.TB, b []byte) (container.Header, []byte, []byte) {
	t.Helper()
	h, p, pl, err := container.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, p, pl
}

func reenvelope(f *Filter, params, payload []byte) []byte {
	return container.Append(nil, f.Kind(), Layout, f.Hasher(), params, payload)
}

func fixCRC(b []byte) {
	c := wire.CRC32C(b[:len(b)-4])
	b[len(b)-4], b[len(b)-3], b[len(b)-2], b[len(b)-1] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
}
