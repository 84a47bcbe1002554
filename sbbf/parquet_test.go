package sbbf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
)

const fixtures = "testdata/parquet"

var fixtureValues = []string{"Hello", "This is", "a", "test", "How", "are you", "doing ", "today",
	"the quick", "brown fox", "jumps", "over", "the lazy", "dog"}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParquetMRBinFile(t *testing.T) {
	data := readFixture(t, "bloom_filter.xxhash.bin")
	f, n, err := ParseParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(data) || f.SizeBytes() != 1024 || n-f.SizeBytes() != 16 {
		t.Fatalf("consumed %d of %d bytes, bitset %d", n, len(data), f.SizeBytes())
	}
	for _, v := range []string{"hello", "parquet", "bloom", "filter"} {
		if !f.ContainsHash(HashString(v)) || !f.ContainsString(v) {
			t.Errorf("parquet-mr filter misses %q", v)
		}
	}
	for _, v := range []string{"Hello", "notthere", "not-there", "x"} {
		if f.ContainsHash(HashString(v)) {
			t.Errorf("parquet-mr filter claims absent %q", v)
		}
	}
	// Our writer reproduces the file byte for byte.
	out, err := f.AppendParquet(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatal("AppendParquet differs from parquet-mr's bytes")
	}
	if f.ParquetHeaderSize() != 16 {
		t.Errorf("ParquetHeaderSize = %d", f.ParquetHeaderSize())
	}
	// Rebuilding from the four strings at the same size gives the same bitset.
	g, _ := New(Params{Bytes: 1024})
	for _, v := range []string{"hello", "parquet", "bloom", "filter"} {
		g.Add([]byte(v))
	}
	if !bytes.Equal(g.Bitset(), f.Bitset()) {
		t.Error("independently built filter differs from parquet-mr's bitset")
	}
	t.Logf("parquet-mr .bin: %d blocks, fill %.4f, Len estimate %d", f.NumBlocks(), f.FillRatio(), f.Len())
}

func TestParquetFiles(t *testing.T) {
	for _, c := range []struct {
		name        string
		offset      int64
		length      int32
		bitsetBytes int
	}{
		{"data_index_bloom_encoding_stats.parquet", 192, 0, 1024},
		{"data_index_bloom_encoding_with_length.parquet", 253, 2064, 2048},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := readFixture(t, c.name)
			cols, err := ParquetColumns(file)
			if err != nil {
				t.Fatal(err)
			}
			var withBloom []Column
			for _, col := range cols {
				if col.HasBloom {
					withBloom = append(withBloom, col)
				}
			}
			if len(withBloom) != 1 {
				t.Fatalf("%d columns with a bloom filter: %+v", len(withBloom), cols)
			}
			col := withBloom[0]
			if col.BloomOffset != c.offset || col.BloomLength != c.length || col.Type != TypeByteArray {
				t.Fatalf("column %+v, want offset %d, length %d, BYTE_ARRAY", col, c.offset, c.length)
			}
			f, err := ReadParquetFilter(file, col)
			if err != nil {
				t.Fatal(err)
			}
			if f.SizeBytes() != c.bitsetBytes {
				t.Fatalf("bitset %d bytes, want %d", f.SizeBytes(), c.bitsetBytes)
			}
			for _, v := range fixtureValues {
				if !f.ContainsHash(HashString(v)) || !f.Contains([]byte(v)) {
					t.Errorf("misses %q", v)
				}
			}
			for _, v := range []string{"notthere", "hello", "not-there", "x"} {
				if f.ContainsHash(HashString(v)) {
					t.Errorf("claims absent %q", v)
				}
			}
			// The same 14 values, inserted by us at the same size, give the
			// writer's exact bitset.
			g, _ := New(Params{Bytes: c.bitsetBytes})
			for _, v := range fixtureValues {
				g.AddString(v)
			}
			if !bytes.Equal(g.Bitset(), f.Bitset()) {
				t.Error("independently built filter differs from the file's bitset")
			}
			t.Logf("%s: path %v, %d blocks, fill %.4f", c.name, col.Path, f.NumBlocks(), f.FillRatio())
		})
	}
}

func TestParquetHeaderErrors(t *testing.T) {
	f, _ := New(Params{Bytes: 64})
	good, _ := f.AppendParquet(nil)
	if f.ParquetHeaderSize() != 16 || len(good) != 16+64 {
		t.Fatalf("header %d bytes", len(good)-64)
	}
	// Truncated bitset.
	if _, _, err := ParseParquet(good[:len(good)-1]); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	// numBytes not a multiple of 32: 0x15 then zigzag(40) = 80.
	bad := append([]byte{0x15, 80}, good[3:]...)
	if _, _, err := ParseParquet(bad); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("numBytes 40: %v", err)
	}
	// Another hash (member 2 of the hash union).
	other := bytes.Clone(good)
	other[8] = 2<<4 | tStruct
	if _, _, err := ParseParquet(other); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("other hash: %v", err)
	}
	// Missing compression field.
	short := append(bytes.Clone(good[:11]), tStop)
	if _, _, err := ParseParquet(short); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("missing field: %v", err)
	}
	// A filter with another hasher cannot be written as Parquet.
	x, _ := New(Params{Bytes: 64, Hasher: xxh3Hasher})
	if _, err := x.AppendParquet(nil); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("xxh3 filter as Parquet: %v", err)
	}
	if _, err := ParquetColumns([]byte("PAR1xxxxPAR1")); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("bad footer: %v", err)
	}
}
