package bloom

import (
	"encoding/binary"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestBlockedRawAgrees builds the same keys into a Blocked filter and into
// raw bytes with BlockedAddRaw: the bytes must equal the filter's words
// (little-endian) and BlockedMayContain must answer exactly like
// ContainsHash for 10^5 members and 10^5 non-members.
func TestBlockedRawAgrees(t *testing.T) {
	const n = 100_000
	for _, bpk := range []float64{4, 10, 23} {
		f, err := NewBlocked(Params{Capacity: n, BitsPerKey: bpk})
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, BlockedRawSize(f.Blocks()))
		h := hashing.XXH3(7)
		var key [8]byte
		for i := range n {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			x := h.Sum64(key[:])
			f.AddHash(x)
			if !BlockedAddRaw(raw, f.Blocks(), f.K(), x) {
				t.Fatal("BlockedAddRaw refused a valid filter")
			}
		}
		for i, w := range f.words {
			if got := binary.LittleEndian.Uint64(raw[8*i:]); got != w {
				t.Fatalf("bpk %v: word %d: raw %x, filter %x", bpk, i, got, w)
			}
		}
		fp := 0
		for i := range 2 * n {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			x := h.Sum64(key[:])
			want := f.ContainsHash(x)
			if got := BlockedMayContain(raw, f.Blocks(), f.K(), x); got != want {
				t.Fatalf("bpk %v: key %d: raw %v, ContainsHash %v", bpk, i, got, want)
			}
			if i < n && !want {
				t.Fatalf("false negative for key %d", i)
			}
			if i >= n && want {
				fp++
			}
		}
		if fp == 0 || fp == n {
			t.Fatalf("bpk %v: %d false positives of %d: the comparison tested nothing", bpk, fp, n)
		}
	}
}

// TestBlockedRawInvalid: bad sizes and k fail open (true) and are refused
// by the writer, without panicking.
func TestBlockedRawInvalid(t *testing.T) {
	raw := make([]byte, 128)
	cases := []struct {
		words  []byte
		blocks uint64
		k      int
	}{
		{raw, 0, 7}, {raw, 3, 7}, {raw, 1, 7}, {raw[:127], 2, 7}, {raw, 2, 0}, {raw, 2, MaxHashFuncs + 1},
		{nil, 0, 1}, {raw, 1 << 62, 7}, {raw, ^uint64(0), 7},
	}
	for _, c := range cases {
		if !BlockedMayContain(c.words, c.blocks, c.k, 12345) {
			t.Errorf("blocks %d k %d len %d: MayContain false on invalid input", c.blocks, c.k, len(c.words))
		}
		if BlockedAddRaw(c.words, c.blocks, c.k, 12345) {
			t.Errorf("blocks %d k %d len %d: AddRaw accepted invalid input", c.blocks, c.k, len(c.words))
		}
	}
	// An empty valid filter answers false.
	if BlockedMayContain(raw, 2, 7, 12345) {
		t.Error("empty raw filter claims a key")
	}
}

func TestBlockedRawZeroAllocs(t *testing.T) {
	raw := make([]byte, 64*16)
	var x uint64
	if a := testing.AllocsPerRun(1000, func() {
		x++
		BlockedAddRaw(raw, 16, 7, x*0x9e3779b97f4a7c15)
		BlockedMayContain(raw, 16, 7, x*0x9e3779b97f4a7c15)
	}); a != 0 {
		t.Fatalf("%v allocations per call", a)
	}
}
