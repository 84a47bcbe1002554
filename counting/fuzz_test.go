package counting

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// FuzzDecode: decoding arbitrary bytes never panics, and whatever decodes
// re-encodes to the same bytes and answers queries and updates safely.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "v1", "*.blmy"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data, hashing.Expect{Keyless: true})
		if err != nil {
			return
		}
		re, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(re, data) {
			t.Fatal("decoded filter re-encodes differently")
		}
		for h := uint64(0); h < 64; h++ {
			x := h * 0x9E3779B97F4A7C15
			g.CountHash(x)
			g.AddHash(x)
			if !g.ContainsHash(x) {
				t.Fatal("false negative after add")
			}
			g.DeleteHash(x)
		}
		_ = g.Stats()
	})
}
