package cuckoo_test

import (
	"errors"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/cuckoo"
)

func Example() {
	f, err := cuckoo.NewForCapacity(1000, 0.002) // 12-bit fingerprints
	if err != nil {
		panic(err)
	}
	f.AddString("session:42")
	f.AddString("session:43")
	fmt.Println(f.ContainsString("session:42"), f.Len())

	f.DeleteString("session:42") // only delete what was added
	fmt.Println(f.ContainsString("session:42"), f.Len())

	// A full filter refuses the insert and stays exactly as it was.
	small, _ := cuckoo.New(cuckoo.Params{Capacity: 8, FingerprintBits: 8})
	var full error
	for i := 0; full == nil; i++ {
		full = small.InsertString(fmt.Sprint("key", i))
	}
	fmt.Println(errors.Is(full, bloomery.ErrFull))

	b, _ := f.MarshalBinary()
	var g cuckoo.Filter
	if err := g.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println(g.ContainsString("session:43"), g.FingerprintBits())
	// Output:
	// true 2
	// false 1
	// true
	// true 12
}

// A bulk load hashes the keys with the filter's hasher and inserts the
// hashes in batches: the same table as one InsertHash per key, with the
// cache misses of many inserts overlapped on large tables.
func ExampleFilter_InsertBatch() {
	keys := []string{"user:1", "user:2", "user:3", "user:4"}
	f, err := cuckoo.New(cuckoo.Params{Capacity: len(keys), FingerprintBits: 12})
	if err != nil {
		panic(err)
	}
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = f.Hasher().Sum64String(k)
	}
	n, err := f.InsertBatch(hs)
	fmt.Println(n, err, f.ContainsString("user:3"))
	// Output:
	// 4 <nil> true
}

// Params.Load sizes the table to end below the default 94% load: inserts
// get faster (fewer full buckets, fewer kicks) and the FPR lower, for
// more bits per key.
func ExampleParams_load() {
	dense, _ := cuckoo.New(cuckoo.Params{Capacity: 1_000_000, FingerprintBits: 12})
	roomy, _ := cuckoo.New(cuckoo.Params{Capacity: 1_000_000, FingerprintBits: 12, Load: 0.6})
	for _, f := range []*cuckoo.Filter{dense, roomy} {
		fmt.Printf("%.2f bits/key, design FPR %.3f%%\n", float64(8*f.SizeBytes())/float64(f.Cap()), 100*f.DesignFPR())
	}
	// Output:
	// 12.77 bits/key, design FPR 0.183%
	// 20.00 bits/key, design FPR 0.117%
}
