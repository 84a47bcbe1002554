package parquet

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/sbbf"
)

const (
	rows        = 200_000
	rowsPerRG   = 100_000
	ndv         = rowsPerRG
	fpp         = 0.01
	columnCount = 4
)

// The row-th value of each column of a data set: set 0 is what arrow-go
// writes, set 1 what Bloomery's filters hold in the reverse direction, set
// 2 the absent probes. The sets share no value.
func base(set, row int) int64   { return int64(set)*1_000_000_000 + int64(row) }
func i64Val(set, row int) int64 { return base(set, row)*7919 + 3 }
func i32Val(set, row int) int32 { return int32(base(set, row)*31 + 1) }
func f64Val(set, row int) float64 {
	return float64(base(set, row)) * 1.25
}
func strVal(set, row int) string { return fmt.Sprintf("s%d-value-%d", set, row) }

// ourHash returns the Parquet hash (computed by sbbf) of column col's
// value at row.
func ourHash(set, row, col int) uint64 {
	switch col {
	case 0:
		return sbbf.HashInt64(i64Val(set, row))
	case 1:
		return sbbf.HashInt32(i32Val(set, row))
	case 2:
		return sbbf.HashFloat64(f64Val(set, row))
	}
	return sbbf.HashString(strVal(set, row))
}

// writeFile writes set 0 with arrow-go, a bloom filter on every column,
// rowsPerRG rows per row group.
func writeFile(t *testing.T) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for r := 0; r < rows; r++ {
		b.Field(0).(*array.Int64Builder).Append(i64Val(0, r))
		b.Field(1).(*array.Int32Builder).Append(i32Val(0, r))
		b.Field(2).(*array.Float64Builder).Append(f64Val(0, r))
		b.Field(3).(*array.StringBuilder).Append(strVal(0, r))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := pq.NewWriterProperties(
		pq.WithBloomFilterEnabled(true),
		pq.WithBloomFilterNDV(ndv),
		pq.WithBloomFilterFPP(fpp),
	)
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, rowsPerRG, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowWritesBloomeryReads: arrow-go writes the file; Bloomery finds
// the filters through its own footer walker, reads them, finds every
// value, and reproduces each bitset byte for byte.
func TestArrowWritesBloomeryReads(t *testing.T) {
	data := writeFile(t)
	cols, err := sbbf.ParquetColumns(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != columnCount*rows/rowsPerRG {
		t.Fatalf("%d column chunks", len(cols))
	}
	// Cross-check our footer walker against arrow-go's metadata.
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	for _, c := range cols {
		cc, err := rdr.MetaData().RowGroup(c.RowGroup).ColumnChunk(c.Index)
		if err != nil {
			t.Fatal(err)
		}
		if !c.HasBloom || c.BloomOffset != cc.BloomFilterOffset() || c.BloomLength != cc.BloomFilterLength() {
			t.Fatalf("rg %d col %d: ours %+v, arrow-go offset %d length %d", c.RowGroup, c.Index, c, cc.BloomFilterOffset(), cc.BloomFilterLength())
		}
	}
	for _, c := range cols {
		f, err := sbbf.ReadParquetFilter(data, c)
		if err != nil {
			t.Fatalf("rg %d col %v: %v", c.RowGroup, c.Path, err)
		}
		if want := sbbf.ArrowBytes(ndv, fpp); f.SizeBytes() != want {
			t.Errorf("rg %d col %v: %d bytes, ArrowBytes says %d", c.RowGroup, c.Path, f.SizeBytes(), want)
		}
		mine, err := sbbf.New(sbbf.Params{Capacity: ndv, FPR: fpp, Sizing: sbbf.SizingArrow})
		if err != nil {
			t.Fatal(err)
		}
		missed := 0
		for r := c.RowGroup * rowsPerRG; r < (c.RowGroup+1)*rowsPerRG; r++ {
			h := ourHash(0, r, c.Index)
			if !f.ContainsHash(h) {
				missed++
			}
			mine.AddHash(h)
		}
		if missed != 0 {
			t.Errorf("rg %d col %v: %d of %d values missed", c.RowGroup, c.Path, missed, rowsPerRG)
		}
		if !bytes.Equal(mine.Bitset(), f.Bitset()) {
			t.Errorf("rg %d col %v: our bitset from the same values differs from arrow-go's", c.RowGroup, c.Path)
		}
		fp := 0
		const probes = 1_000_000
		for r := 0; r < probes; r++ {
			if f.ContainsHash(ourHash(2, r, c.Index)) {
				fp++
			}
		}
		want := fpmath.SBBFFPR(float64(rowsPerRG) / float64(f.NumBlocks()))
		got := float64(fp) / probes
		if math.Abs(got-want) > 0.15*want {
			t.Errorf("rg %d col %v: FPR %.4f%%, Poisson formula %.4f%%", c.RowGroup, c.Path, 100*got, 100*want)
		}
		t.Logf("rg %d col %-7v: %d B at offset %d (length %d), 0 missed, FPR %.4f%% (formula %.4f%%), bitset identical",
			c.RowGroup, c.Path, f.SizeBytes(), c.BloomOffset, c.BloomLength, 100*got, 100*want)
	}
}

// TestBloomeryWritesArrowReads: Bloomery builds filters from another value
// set and writes them in Parquet form (its own Thrift header and bitset)
// over arrow-go's filters in the file; arrow-go's own bloom filter reader
// then finds every one of Bloomery's values.
func TestBloomeryWritesArrowReads(t *testing.T) {
	data := writeFile(t)
	cols, err := sbbf.ParquetColumns(data)
	if err != nil {
		t.Fatal(err)
	}
	patched := bytes.Clone(data)
	for _, c := range cols {
		old, err := sbbf.ReadParquetFilter(data, c)
		if err != nil {
			t.Fatal(err)
		}
		f, err := sbbf.New(sbbf.Params{Capacity: ndv, Bytes: old.SizeBytes()})
		if err != nil {
			t.Fatal(err)
		}
		for r := c.RowGroup * rowsPerRG; r < (c.RowGroup+1)*rowsPerRG; r++ {
			f.AddHash(ourHash(1, r, c.Index))
		}
		raw, err := f.AppendParquet(nil)
		if err != nil {
			t.Fatal(err)
		}
		// arrow-go records the filter's length, header included; ours must
		// have the same length to replace it in place.
		if int32(len(raw)) != c.BloomLength {
			t.Fatalf("rg %d col %v: our filter is %d bytes, the slot %d", c.RowGroup, c.Path, len(raw), c.BloomLength)
		}
		// arrow-go v18.8.0 and Bloomery encode the header identically
		// (docs/format/sbbf.md says so; this pins it).
		if hs := int64(f.ParquetHeaderSize()); !bytes.Equal(raw[:hs], data[c.BloomOffset:c.BloomOffset+hs]) {
			t.Errorf("rg %d col %v: our Thrift header % x, arrow-go's % x", c.RowGroup, c.Path, raw[:hs], data[c.BloomOffset:c.BloomOffset+hs])
		}
		copy(patched[c.BloomOffset:], raw)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(patched))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	bfr := rdr.GetBloomFilterReader()
	for rg := 0; rg < rows/rowsPerRG; rg++ {
		rgr, err := bfr.RowGroup(rg)
		if err != nil {
			t.Fatal(err)
		}
		for col := 0; col < columnCount; col++ {
			bf, err := rgr.GetColumnBloomFilter(col)
			if err != nil || bf == nil {
				t.Fatalf("rg %d col %d: arrow-go could not read our filter: %v", rg, col, err)
			}
			found, stale := 0, 0
			for r := rg * rowsPerRG; r < (rg+1)*rowsPerRG; r++ {
				if check(bf, 1, r, col) {
					found++
				}
				if check(bf, 0, r, col) {
					stale++
				}
			}
			if found != rowsPerRG {
				t.Errorf("rg %d col %d: arrow-go found %d of %d of Bloomery's values", rg, col, found, rowsPerRG)
			}
			// arrow-go's own values are gone: only false positives remain.
			if want := fpmath.SBBFFPR(float64(rowsPerRG) / float64(bf.Size()/32)); float64(stale)/rowsPerRG > 1.3*want {
				t.Errorf("rg %d col %d: %d of arrow-go's original values still match (FPR %.4f%% expected)", rg, col, stale, 100*want)
			}
			t.Logf("rg %d col %d: arrow-go found %d/%d of Bloomery's values; %d of its replaced values still match (false positives)", rg, col, found, rowsPerRG, stale)
		}
	}
}

// check queries arrow-go's filter with arrow-go's own typed API.
func check(bf metadata.BloomFilter, set, row, col int) bool {
	switch col {
	case 0:
		return (&metadata.TypedBloomFilter[int64]{BloomFilter: bf}).Check(i64Val(set, row))
	case 1:
		return (&metadata.TypedBloomFilter[int32]{BloomFilter: bf}).Check(i32Val(set, row))
	case 2:
		return (&metadata.TypedBloomFilter[float64]{BloomFilter: bf}).Check(f64Val(set, row))
	}
	return (&metadata.TypedBloomFilter[pq.ByteArray]{BloomFilter: bf}).Check(pq.ByteArray(strVal(set, row)))
}
