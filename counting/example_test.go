package counting_test

import (
	"fmt"

	"github.com/bloomery/bloomery/counting"
)

func Example() {
	f, err := counting.New(counting.Params{Capacity: 1000, FPR: 0.01})
	if err != nil {
		panic(err)
	}
	f.AddString("user:7")
	f.AddString("user:7") // a multiset: two copies
	f.AddString("user:8")
	fmt.Println(f.Count([]byte("user:7")) >= 2, f.Len())

	f.DeleteString("user:7")
	fmt.Println(f.ContainsString("user:7")) // one copy left
	f.DeleteString("user:7")
	fmt.Println(f.ContainsString("user:8"), f.Len())

	// Merge adds counters (saturating); both inputs must share the layout.
	g, _ := counting.New(counting.Params{Capacity: 1000, FPR: 0.01})
	g.AddString("user:9")
	if err := f.Merge(g); err != nil {
		panic(err)
	}
	fmt.Println(f.ContainsString("user:9"), f.Stats().Extra[0].Name)
	// Output:
	// true 3
	// true
	// true 1
	// true saturated
}
