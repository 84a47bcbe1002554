package fuse

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// FuzzDecode feeds arbitrary bytes to both decoders. Decoding must never
// panic, and a successful decode must re-encode to the identical bytes and
// answer queries.
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
		want := hashing.Expect{Keyless: true}
		if g, err := Decode[uint8](data, want); err == nil {
			check(t, g, data)
		}
		if g, err := Decode[uint16](data, want); err == nil {
			check(t, g, data)
		}
	})
}

func check[T Fingerprint](t *testing.T, f *Filter[T], data []byte) {
	out, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatal("decoded filter re-encodes differently")
	}
	hs := []uint64{0, 1, 1 << 63, ^uint64(0), 0x123456789abcdef}
	res := make([]bool, len(hs))
	f.ContainsBatch(hs, res)
	for i, h := range hs {
		if f.ContainsHash(h) != res[i] {
			t.Fatal("ContainsBatch disagrees with ContainsHash")
		}
	}
	_ = f.Stats()
}
