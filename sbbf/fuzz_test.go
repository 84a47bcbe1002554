package sbbf

import (
	"bytes"
	"encoding/binary"
	"math"
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
			t.Fatal("re-encoding differs")
		}
		g.ContainsHash(12345)
		g.Stats()
	})
}

// FuzzParseParquet feeds the Thrift header parser and the footer walker.
func FuzzParseParquet(f *testing.F) {
	for _, name := range []string{"bloom_filter.xxhash.bin", "data_index_bloom_encoding_stats.parquet", "data_index_bloom_encoding_with_length.parquet"} {
		if b, err := os.ReadFile(filepath.Join(fixtures, name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if g, n, err := ParseParquet(data); err == nil {
			out, err := g.AppendParquet(nil)
			if err != nil {
				t.Fatal(err)
			}
			h, m, err := ParseParquet(out)
			if err != nil || m != len(out) || !bytes.Equal(h.Bitset(), data[n-g.SizeBytes():n]) {
				t.Fatalf("Parquet re-encoding does not round-trip: %v", err)
			}
		}
		cols, err := ParquetColumns(data)
		if err != nil {
			return
		}
		for _, c := range cols {
			if c.HasBloom {
				ReadParquetFilter(data, c)
			}
		}
	})
}

// FuzzDecodePayload wraps fuzzed params and payload in a valid container
// (checksum included) to reach the validation behind the checksum.
func FuzzDecodePayload(f *testing.F) {
	f.Add(uint64(100), math.Float64bits(0.01), uint64(3), make([]byte, 64))
	f.Add(uint64(0), uint64(0), uint64(0), make([]byte, 33))
	f.Add(uint64(1), math.Float64bits(math.NaN()), uint64(1), make([]byte, 32))
	f.Fuzz(func(t *testing.T, capacity, design, n uint64, payload []byte) {
		params := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, capacity), design), n)
		data := container.Append(nil, bloomery.KindSBBF, 1, Parquet, params, payload)
		g, err := Decode(data, hashing.Expect{})
		if err != nil {
			return
		}
		re, _ := g.MarshalBinary()
		if !bytes.Equal(re, data) {
			t.Fatal("re-encoding differs")
		}
		g.AddHash(0x1234567890abcdef)
		if !g.ContainsHash(0x1234567890abcdef) {
			t.Fatal("false negative after add")
		}
		g.Stats()
	})
}
