package xor

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// FuzzDecode: decoding arbitrary bytes never panics, and a successful
// decode re-encodes to identical bytes and answers queries.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.blmy"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("BLMY"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		g, err := Decode(data, hashing.Expect{Keyless: true})
		if err != nil {
			return
		}
		out, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatal("decoded filter re-encodes differently")
		}
		hs := []uint64{0, 1, 1 << 63, ^uint64(0)}
		res := make([]bool, len(hs))
		g.ContainsBatch(hs, res)
		for i, h := range hs {
			if g.ContainsHash(h) != res[i] {
				t.Fatal("ContainsBatch disagrees with ContainsHash")
			}
		}
		_ = g.Stats()
	})
}
