package ribbon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic; a
// filter that decodes must re-encode to the same bytes and answer queries
// (in any block, hence the range of probe hashes) without panicking.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.blmy"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
	}
	f.Add([]byte("BLMY"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data, hashing.Expect{Keyless: true})
		if err != nil {
			return
		}
		out, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("decoded filter re-encodes differently (%v)", err)
		}
		hs := []uint64{0, 1, ^uint64(0), 0x8000000000000000, 12345, 0x0123456789abcdef}
		out2 := make([]bool, len(hs))
		g.ContainsBatch(hs, out2)
		for i, h := range hs {
			if g.ContainsHash(h) != out2[i] {
				t.Fatalf("ContainsBatch disagrees with ContainsHash for %#x", h)
			}
		}
		_ = g.Stats()
	})
}
