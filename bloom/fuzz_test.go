package bloom

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

func addGoldenSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.blmy"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
	}
	f.Add([]byte("BLMY"))
	f.Add([]byte{})
}

// FuzzDecode feeds arbitrary bytes to Decode and ReadFrom: they must never
// panic, and whatever decodes must re-encode to the same bytes.
func FuzzDecode(f *testing.F) {
	addGoldenSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data, hashing.Expect{Keyless: true})
		var s Filter
		_, rerr := s.ReadFrom(bytes.NewReader(data))
		if err != nil {
			return
		}
		out, _ := g.MarshalBinary()
		if !bytes.Equal(out, data) {
			t.Fatalf("decoded filter re-encodes differently")
		}
		if rerr != nil && !g.Hasher().Keyed() {
			t.Fatalf("Decode accepted what ReadFrom refused: %v", rerr)
		}
		// The query paths agree on whatever decodes: the key path, the
		// hash path (assembly on amd64), the Go loop and the batch.
		// (A keyed filter loaded without its key hashes nothing: hash
		// path only.)
		key := []byte("a key of twenty bytes")
		h := uint64(0x9e3779b97f4a7c15)
		if !g.Hasher().Keyed() {
			h = g.Hasher().Sum64(key)
		}
		want := containsHashGo(g, h, 0)
		if g.ContainsHash(h) != want || (!g.Hasher().Keyed() && g.Contains(key) != want) {
			t.Fatalf("Contains, ContainsHash and the Go loop disagree")
		}
		hs := []uint64{h, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
		answers := make([]bool, len(hs))
		g.ContainsBatch(hs, answers)
		for i, x := range hs {
			if answers[i] != containsHashGo(g, x, 0) {
				t.Fatalf("ContainsBatch disagrees with the Go loop at %d", i)
			}
		}
		g.AddHash(54321)
		_ = g.Stats()
	})
}

// FuzzDecodeBlocked is FuzzDecode for the blocked kind.
func FuzzDecodeBlocked(f *testing.F) {
	addGoldenSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeBlocked(data, hashing.Expect{Keyless: true})
		var s Blocked
		_, rerr := s.ReadFrom(bytes.NewReader(data))
		if err != nil {
			return
		}
		out, _ := g.MarshalBinary()
		if !bytes.Equal(out, data) {
			t.Fatalf("decoded filter re-encodes differently")
		}
		if rerr != nil && !g.Hasher().Keyed() {
			t.Fatalf("Decode accepted what ReadFrom refused: %v", rerr)
		}
		g.ContainsHash(12345)
		g.AddHash(54321)
		g.ContainsBatch([]uint64{1, 2, 3}, make([]bool, 3))
		_ = g.Stats()
	})
}
