package quotient

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", "v1", "quotient.blmy")); err == nil {
		f.Add(b)
	}
	small, _ := New(Params{Capacity: 10, RemainderBits: 3})
	small.AddString("a")
	b, _ := small.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data, hashing.Expect{Keyless: true})
		if err != nil {
			return
		}
		// A decoded filter is consistent: queries, inserts and deletes
		// work and it re-encodes to the same bytes.
		again, _ := g.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatal("re-encode differs")
		}
		for i := uint64(0); i < 64; i++ {
			h := i * 0x9e3779b97f4a7c15
			g.ContainsHash(h)
			if g.InsertHash(h) == nil && !g.ContainsHash(h) {
				t.Fatal("false negative after insert")
			}
		}
	})
}
