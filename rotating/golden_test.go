package rotating

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

const goldenDir = "testdata/golden/v1"

var goldenKey = [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

type goldenCase struct {
	file string
	p    Params
	want hashing.Expect
	// frozen files hold standard generations of bloom layout 1, as every
	// ring was written before layout 2: they must decode forever, but a
	// ring built now has layout 2 generations, so -update leaves them and
	// the comparison with a ring built now is skipped (the _layout2 twin
	// makes it).
	frozen bool
}

func goldenCases() []goldenCase {
	std := Params{Window: time.Hour, Generations: 4, Capacity: 200, FPR: 0.01}
	return []goldenCase{
		{"rotating.blmy", std, hashing.Expect{}, true},
		{"rotating_layout2.blmy", std, hashing.Expect{}, false},
		{"rotating_blocked_siphash.blmy", Params{Window: time.Minute, Generations: 3, Capacity: 300, FPR: 0.02, Blocked: true, Hasher: hashing.SipHash(goldenKey)}, hashing.Want(hashing.SipHash(goldenKey)), false},
	}
}

// buildGolden adds 500 keys over the window on a fake clock: 125 per
// quarter of the window, so every generation holds some, and the first
// generation of the 4-generation ring overfills none.
func buildGolden(t *testing.T, p Params) (*Filter, *fakeClock, []string) {
	f, c := newTest(t, p)
	var keys []string
	for i := range 500 {
		k := fmt.Sprintf("golden-key-%04d", i)
		f.AddString(k)
		keys = append(keys, k)
		c.Advance(p.Window / 500)
	}
	c.Advance(-p.Window / 500)
	return f, c, keys
}

// sameRing accepts a ring built now (f, encoded as built) that differs
// from the golden one (g, data) only off amd64, and only where its
// generations' recorded design FPR differs in the last bits (computed
// with the platform's math library: see filtertest.AlignDesignFPR; the
// bloom package's golden test checks those filters byte for byte
// otherwise). The encodings must have the same length, the stats must
// agree to 1e-12, and the answers must be identical.
func sameRing(f, g *Filter, built, data []byte) bool {
	if runtime.GOARCH == "amd64" || len(built) != len(data) {
		return false
	}
	a, b := f.Stats(), g.Stats()
	for _, p := range [][2]*float64{{&a.DesignFPR, &b.DesignFPR}, {&a.EstimatedFPR, &b.EstimatedFPR}} {
		if *p[0] != *p[1] && !filtertest.AlignDesignFPR(p[0], *p[1]) {
			return false
		}
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return false
	}
	return filtertest.SameAnswers(f, g, 100000)
}

func TestGolden(t *testing.T) {
	for _, gc := range goldenCases() {
		path := filepath.Join(goldenDir, gc.file)
		f, c, keys := buildGolden(t, gc.p)
		built, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if *update && !gc.frozen {
			if err := os.WriteFile(path, built, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./rotating -run TestGolden -args -update)", gc.file, err)
		}
		g, err := Decode(data, gc.want, Options{Clock: c.Now})
		if err != nil {
			t.Fatalf("%s: %v", gc.file, err)
		}
		// The clock stands where the last key was added: the keys of the
		// last W(N-1)/N are certainly still there.
		n := gc.p.Generations
		for i := 500 / n; i < 500; i++ {
			if !g.ContainsString(keys[i]) {
				t.Fatalf("%s: false negative for %q", gc.file, keys[i])
			}
		}
		if again, _ := g.MarshalBinary(); !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding differs", gc.file)
		}
		if !gc.frozen && !bytes.Equal(built, data) && !sameRing(f, g, built, data) {
			t.Errorf("%s: a ring built now encodes differently from the golden file", gc.file)
		}
	}
}
