package fuse_test

import (
	"fmt"

	"github.com/bloomery/bloomery/fuse"
)

func Example() {
	keys := [][]byte{[]byte("apple"), []byte("banana"), []byte("cherry"), []byte("apple")}
	f, err := fuse.BuildKeys[uint8](keys, fuse.Params{})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Kind(), f.Len())
	fmt.Println(f.ContainsString("banana"))

	data, _ := f.MarshalBinary()
	var g fuse.Filter[uint8]
	if err := g.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(g.ContainsString("cherry"))
	// Output:
	// fuse8 3
	// true
	// true
}
