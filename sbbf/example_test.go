package sbbf_test

import (
	"fmt"
	"os"

	"github.com/bloomery/bloomery/sbbf"
)

// Find the bloom filters of a Parquet file through its footer and probe a
// BYTE_ARRAY column.
func ExampleReadParquetFilter() {
	file, err := os.ReadFile("testdata/parquet/data_index_bloom_encoding_with_length.parquet")
	if err != nil {
		fmt.Println(err)
		return
	}
	cols, err := sbbf.ParquetColumns(file)
	if err != nil {
		panic(err)
	}
	for _, c := range cols {
		if !c.HasBloom {
			continue
		}
		f, err := sbbf.ReadParquetFilter(file, c)
		if err != nil {
			panic(err)
		}
		fmt.Println(c.Path, f.SizeBytes(), f.ContainsHash(sbbf.HashString("brown fox")), f.ContainsHash(sbbf.HashString("notthere")))
	}
	// Output: [String] 2048 true false
}

// Build a Parquet-compatible filter and write it as Parquet stores it.
func ExampleFilter_AppendParquet() {
	f, err := sbbf.NewForCapacity(1000, 0.01)
	if err != nil {
		panic(err)
	}
	for i := range int64(1000) {
		f.AddHash(sbbf.HashInt64(i))
	}
	raw, err := f.AppendParquet(nil)
	if err != nil {
		panic(err)
	}
	g, n, err := sbbf.ParseParquet(raw)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.NumBlocks(), n == len(raw), g.ContainsHash(sbbf.HashInt64(999)))
	// Output: 42 true true
}
