package xor_test

import (
	"fmt"

	"github.com/bloomery/bloomery/xor"
)

func Example() {
	keys := [][]byte{[]byte("alpha"), []byte("beta"), []byte("gamma")}
	f, err := xor.BuildKeys(keys, xor.Params{})
	if err != nil {
		panic(err)
	}
	data, _ := f.MarshalBinary()
	var g xor.Filter
	if err := g.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(g.Kind(), g.Len(), g.ContainsString("beta"))
	// Output: xor8 3 true
}
