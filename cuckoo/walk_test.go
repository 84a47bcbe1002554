package cuckoo

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestWalkRestores: a decoded copy given the original's walk state takes
// the same walks, so the same inserts after the copy leave the same table
// and succeed or fail alike; without the state, the tables diverge once
// inserts start kicking.
func TestWalkRestores(t *testing.T) {
	f, err := New(Params{Capacity: 4096, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4000; i++ {
		f.Add([]byte(fmt.Sprint("a", i)))
	}
	fresh, _ := New(Params{Capacity: 4096, FPR: 0.01})
	if f.Walk() == fresh.Walk() {
		t.Fatal("no insert kicked: the test does not exercise the walk")
	}
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	same, err := Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	same.SetWalk(f.Walk())
	other, err := Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		k := []byte(fmt.Sprint("b", i))
		a, b := f.Add(k), same.Add(k)
		if a != b {
			t.Fatalf("insert %d: original %v, restored copy %v", i, a, b)
		}
		other.Add(k)
	}
	fb, _ := f.MarshalBinary()
	sb, _ := same.MarshalBinary()
	ob, _ := other.MarshalBinary()
	if !bytes.Equal(fb, sb) {
		t.Fatal("the copy with the walk state restored diverged from the original")
	}
	if bytes.Equal(fb, ob) {
		t.Fatal("a copy without the walk state took the same walks: the test does not exercise kicks")
	}
}
