package gcs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
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

// FuzzDecodePayload wraps fuzzed params and payload in a valid container
// (checksum included), so the fuzzer reaches the stream validation that
// the checksum would otherwise shield.
func FuzzDecodePayload(f *testing.F) {
	f.Add(uint8(10), uint64(1541), uint64(3), []byte{0x85, 0xac, 0xb4, 0xf0, 0xfe, 0x88, 0x9e, 0xf0})
	f.Add(uint8(1), uint64(5000), uint64(2), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00})
	f.Add(uint8(32), uint64(1), uint64(1), []byte{0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, p uint8, m, n uint64, payload []byte) {
		params := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64([]byte{p}, m), n)
		data := container.Append(nil, bloomery.KindGCS, 1, hashing.XXH3(0), params, payload)
		g, err := Decode(data, hashing.Expect{})
		if err != nil {
			return
		}
		re, _ := g.MarshalBinary()
		if !bytes.Equal(re, data) {
			t.Fatal("re-encoding differs")
		}
		// Every decoded value must be found, alone and by the merge.
		var c cursor
		g.Values(func(v uint64) bool {
			if !g.containsValue(v) {
				t.Fatalf("value %d not found", v)
			}
			if !g.advance(&c, v) {
				t.Fatalf("value %d not found by the merge", v)
			}
			return true
		})
	})
}
