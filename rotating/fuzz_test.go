package rotating

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bloomery/bloomery/hashing"
)

// FuzzDecode: Decode must never panic, and what decodes must re-encode to
// the same bytes and keep working.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.blmy"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
	}
	f.Add([]byte("BLMY"))
	f.Fuzz(func(t *testing.T, data []byte) {
		now := func() time.Time { return epoch }
		g, err := Decode(data, hashing.Expect{Keyless: true}, Options{Clock: now})
		if err != nil {
			return
		}
		out, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("decoded filter re-encodes differently (%v)", err)
		}
		g.ContainsHash(12345)
		_ = g.Stats()
		_ = g.Generations()
		if !g.p.Hasher.Keyed() {
			g.AddHash(54321)
			if !g.ContainsHash(54321) {
				t.Fatal("false negative after add to a decoded filter")
			}
		}
	})
}
