package bloom_test

import (
	"bytes"
	"fmt"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
)

func Example() {
	f, err := bloom.NewForCapacity(1000, 0.01)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.AddString("apple")) // new
	fmt.Println(f.AddString("apple")) // already present
	fmt.Println(f.ContainsString("apple"))
	fmt.Println(f.ContainsString("pear")) // absent (with probability 99%)
	fmt.Println(f.Len(), f.Cap(), f.K(), f.Bits())
	// Output:
	// true
	// false
	// true
	// false
	// 1 1000 7 9600
}

func ExampleNewBlocked() {
	f, err := bloom.NewBlocked(bloom.Params{Capacity: 10_000, BitsPerKey: 10})
	if err != nil {
		panic(err)
	}
	for i := range 10_000 {
		f.AddString(fmt.Sprintf("user:%d", i))
	}
	fmt.Println(f.K(), f.Blocks(), f.SizeBytes())
	fmt.Println(f.ContainsString("user:42"), f.ContainsString("user:-1"))
	fmt.Printf("design FPR %.2f%%\n", 100*f.DesignFPR())
	// Output:
	// 7 196 12544
	// true false
	// design FPR 0.94%
}

// Hash a key once and probe several filters with it.
func ExampleFilter_ContainsHash() {
	h := hashing.XXH3(0)
	a, _ := bloom.NewForCapacity(100, 0.01)
	b, _ := bloom.NewBlockedForCapacity(100, 0.01)
	a.AddString("k1")
	b.AddString("k2")
	for _, key := range []string{"k1", "k2"} {
		sum := h.Sum64String(key)
		fmt.Println(key, a.ContainsHash(sum), b.ContainsHash(sum))
	}
	// Output:
	// k1 true false
	// k2 false true
}

// ContainsBatch answers many hashes at once, overlapping cache misses.
func ExampleBlocked_ContainsBatch() {
	f, _ := bloom.NewBlockedForCapacity(1000, 0.01)
	h := f.Hasher()
	hashes := []uint64{h.Sum64String("a"), h.Sum64String("b"), h.Sum64String("c")}
	fmt.Println(f.AddBatch(hashes[:2]))
	out := make([]bool, len(hashes))
	f.ContainsBatch(hashes, out)
	fmt.Println(out)
	// Output:
	// 2
	// [true true false]
}

// A filter grown past its capacity reports it.
func ExampleFilter_Overfilled() {
	f, _ := bloom.NewForCapacity(1000, 0.01)
	for i := range 2000 {
		f.AddString(fmt.Sprint(i))
	}
	fmt.Printf("fill %.2f, estimated FPR %.1f%%, overfilled %v\n", f.FillRatio(), 100*f.EstimatedFPR(), f.Overfilled())
	fmt.Printf("about %d keys\n", (f.ApproxCount()+50)/100*100)
	// Output:
	// fill 0.77, estimated FPR 15.5%, overfilled true
	// about 2000 keys
}

// Union merges filters built separately with the same parameters.
func ExampleFilter_Union() {
	p := bloom.Params{Capacity: 1000, FPR: 0.01}
	a, _ := bloom.New(p)
	b, _ := bloom.New(p)
	a.AddString("left")
	b.AddString("right")
	if err := a.Union(b); err != nil {
		panic(err)
	}
	fmt.Println(a.ContainsString("left"), a.ContainsString("right"))
	c, _ := bloom.New(bloom.Params{Capacity: 2000, FPR: 0.01})
	fmt.Println(a.Union(c))
	// Output:
	// true true
	// bloom: union of 9600-bit and 19200-bit filters: bloomery: incompatible filters
}

// Filters persist in the container format; a keyed filter needs its key.
func ExampleDecode() {
	key := [16]byte{1, 2, 3}
	f, _ := bloom.New(bloom.Params{Capacity: 100, FPR: 0.01, Hasher: hashing.SipHash(key)})
	f.AddString("secret-member")
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		panic(err)
	}
	_, err := bloom.Decode(buf.Bytes(), hashing.Expect{})
	fmt.Println(err != nil)
	g, err := bloom.Decode(buf.Bytes(), hashing.Want(hashing.SipHash(key)))
	fmt.Println(err, g.ContainsString("secret-member"))
	// Output:
	// true
	// <nil> true
}
