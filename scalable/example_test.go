package scalable_test

import (
	"errors"
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/scalable"
)

// A filter that starts at 100 keys and grows, with RedisBloom's arithmetic:
// BF.RESERVE k 0.01 100 followed by 1000 BF.ADDs.
func Example() {
	f, _ := scalable.New(scalable.Params{InitialCapacity: 100, FPR: 0.01, Sizing: scalable.SizingRedis})
	for i := range 1000 {
		f.AddString(fmt.Sprint("item:", i))
	}
	for _, l := range f.Links() {
		fmt.Printf("capacity %4d  bytes %4d  hashes %2d  error %g\n", l.Capacity, l.SizeBytes, l.HashFuncs, l.Error)
	}
	fmt.Println("links:", f.NumLinks(), "capacity:", f.Cap(), "present:", f.ContainsString("item:7"))
	// Output:
	// capacity  100  bytes  144  hashes  8  error 0.005
	// capacity  200  bytes  312  hashes  9  error 0.0025
	// capacity  400  bytes  696  hashes 10  error 0.00125
	// capacity  800  bytes 1536  hashes 11  error 0.000625
	// links: 4 capacity: 1500 present: true
}

// A non-scaling filter refuses new keys once it holds its capacity.
func ExampleFilter_TryAdd() {
	f, _ := scalable.New(scalable.Params{InitialCapacity: 2, FPR: 0.01, NonScaling: true})
	for _, k := range []string{"a", "b", "c", "a"} {
		added, err := f.TryAddString(k)
		fmt.Println(k, added, errors.Is(err, bloomery.ErrFull))
	}
	// Output:
	// a true false
	// b true false
	// c false true
	// a false false
}
