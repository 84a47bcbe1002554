package gcs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "v1", "*.blmy"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
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
			t.Fatalf("re-encoding differs")
		}
		g.ContainsHash(0x0123456789abcdef)
		g.ContainsBatch([]uint64{1, 2, 1 << 63}, make([]bool, 3))
	})
}

func FuzzParseBIP158(f *testing.F) {
	for _, hx := range []string{"00", "019dfca8", "0db414c859a07e820587", "09027acea61b6cc3fb33", "0385acb4f0fe889ef0"} {
		b, _ := hexDecode(hx)
		f.Add(b)
	}
	var key [32]byte
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseBIP158(key, data)
		if err != nil {
			return
		}
		if !bytes.Equal(g.Bytes(), data) {
			t.Fatalf("raw re-encoding differs")
		}
		g.Contains([]byte("probe"))
		g.MatchAny([][]byte{[]byte("a"), []byte("b")})
	})
}

func hexDecode(s string) ([]byte, error) {
	out := make([]byte, len(s)/2)
	for i := range out {
		var v byte
		for _, c := range s[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c - 'a' + 10)
			}
		}
		out[i] = v
	}
	return out, nil
}
