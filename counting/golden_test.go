package counting

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

var goldenCases = []struct {
	name   string
	p      Params
	n, del int
	repeat int // extra adds of the first key (saturation)
}{
	{"c4-n100", Params{Capacity: 100, FPR: 0.01}, 100, 0, 0},
	{"c4-blocked-n1000", Params{Capacity: 1000, FPR: 0.01, Blocked: true}, 1000, 200, 0},
	{"c8-n300-seed7", Params{Capacity: 300, FPR: 0.001, CounterBits: 8, Hasher: hashing.XXH3(7)}, 300, 50, 0},
	{"c8-blocked-n50", Params{Capacity: 50, FPR: 0.05, CounterBits: 8, Blocked: true}, 50, 0, 0},
	{"c4-saturated", Params{Capacity: 40, FPR: 0.02}, 40, 10, 30},
}

func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "v1")
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			f := mustNew(t, gc.p)
			keys := filtertest.Keys(gc.n, 2026)
			for _, k := range keys {
				f.Add(k)
			}
			for range gc.repeat {
				f.Add(keys[gc.n-1])
			}
			for _, k := range keys[:gc.del] {
				f.Delete(k)
			}
			keys = keys[gc.del:]
			enc, _ := f.MarshalBinary()
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
			if re, _ := g.MarshalBinary(); !bytes.Equal(re, golden) {
				t.Error("re-encoded golden filter differs")
			}
			if gc.repeat > 0 && g.Saturated() == 0 {
				t.Error("no saturated counter in the saturation case")
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
