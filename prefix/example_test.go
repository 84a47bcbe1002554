package prefix_test

import (
	"fmt"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/prefix"
)

// Rows keyed "<user>:<item>", filtered by whole key and by user, in one
// filter; a scan of one user's rows asks for the user's prefix.
func Example() {
	bf, _ := bloom.New(bloom.Params{Capacity: 1000, FPR: 0.01}) // keys + distinct prefixes
	f, _ := prefix.New(bf, prefix.Params{Extractor: prefix.Delimited(':')})
	for _, k := range []string{"alice:cart", "alice:profile", "bob:cart"} {
		f.AddString(k)
	}
	fmt.Println("point lookup bob:cart:", f.ContainsString("bob:cart"))
	fmt.Println("scan alice:", f.ContainsPrefix([]byte("alice:")))
	fmt.Println("scan carol:", f.ContainsPrefix([]byte("carol:")))
	// A seek bounded to one prefix can skip; an unbounded one cannot.
	fmt.Println("seek [carol:a, carol;):", f.SeekMayMatch([]byte("carol:a"), []byte("carol;")))
	fmt.Println("seek [carol:a, ∞):", f.SeekMayMatch([]byte("carol:a"), nil))
	// Store the descriptor with the filter; reopening with another
	// extractor is refused.
	fmt.Println(f.Descriptor())
	// Output:
	// point lookup bob:cart: true
	// scan alice: true
	// scan carol: false
	// seek [carol:a, carol;): false
	// seek [carol:a, ∞): true
	// extractor=delim:0x3a;whole_keys=1
}
