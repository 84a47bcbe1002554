package ribbon_test

import (
	"fmt"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/ribbon"
)

func Example() {
	var keys [][]byte
	for i := range 10000 {
		keys = append(keys, fmt.Appendf(nil, "user-%d", i))
	}
	f, err := ribbon.BuildKeys(keys, ribbon.Params{FPR: 0.01})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.ContainsString("user-42"), f.Len())
	fmt.Printf("%.2f bits/key, expected FPR %.2f%%\n", f.Stats().BitsPerKey, 100*f.EstimatedFPR())

	// Persist, and load it back expecting the same hasher.
	data, _ := f.MarshalBinary()
	g, err := ribbon.Decode(data, hashing.Want(hashing.XXH3(0)))
	fmt.Println(err, g.ContainsString("user-42"))
	// Output:
	// true 10000
	// 6.98 bits/key, expected FPR 1.00%
	// <nil> true
}

// A reusable Builder keeps its banding memory between builds; the
// "Bloom-equivalent" setting asks for the FPR of a blocked Bloom filter
// at that many bits per key (0.957 % at 10). Small filters hit the
// target less exactly: the boundary between 6- and 7-column blocks moves
// in steps of one block of 128 slots.
func ExampleBuilder() {
	var b ribbon.Builder
	for _, n := range []int{1000, 100000} {
		hashes := make([]uint64, n)
		for i := range hashes {
			hashes[i] = hashing.Mix64(uint64(i) + 1)
		}
		f, err := b.Build(hashes, ribbon.Params{BloomBitsPerKey: 10})
		if err != nil {
			panic(err)
		}
		fmt.Printf("n=%d: %.2f bits/key for FPR %.3f%%\n", n, f.Stats().BitsPerKey, 100*f.EstimatedFPR())
	}
	// Output:
	// n=1000: 6.91 bits/key for FPR 1.004%
	// n=100000: 7.02 bits/key for FPR 0.957%
}
