package rbbloom

import (
	"bytes"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// RedisBloom's observed sizing for BF.RESERVE k 0.01 100 and growth.
func TestSizingMatchesRedisBloom(t *testing.T) {
	c, err := New(100, 0.01, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(c.links) < 4; i++ {
		if _, err := c.Add([]byte{byte(i), byte(i >> 8), 'x'}); err != nil {
			t.Fatal(err)
		}
	}
	wantHashes := []uint32{8, 9, 10, 11}
	wantBytes := []int{144, 312, 696, 1536}
	wantCap := []uint64{100, 200, 400, 800}
	for i, l := range c.links {
		if l.hashes != wantHashes[i] || len(l.bits) != wantBytes[i] || l.capacity != wantCap[i] {
			t.Errorf("link %d: hashes %d bytes %d capacity %d; RedisBloom: %d %d %d", i, l.hashes, len(l.bits), l.capacity, wantHashes[i], wantBytes[i], wantCap[i])
		}
	}
	for _, tc := range []struct {
		capacity uint64
		err      float64
		exp      uint32
		size     uint64
	}{{100, 0.01, 2, 240}, {1000, 0.01, 2, 1480}, {1000, 0.001, 2, 2080}} {
		c, _ := New(tc.capacity, tc.err, tc.exp)
		if c.Size() != tc.size {
			t.Errorf("New(%d, %g): Size %d, RedisBloom %d", tc.capacity, tc.err, c.Size(), tc.size)
		}
	}
}

func TestNoFalseNegativesAndFPR(t *testing.T) {
	n := 1_000_000
	if filtertest.Short() {
		n = 100_000
	}
	keys := filtertest.Keys(n, 1)
	probes := filtertest.Keys(n, 2)
	for _, tc := range []struct {
		name      string
		capacity  uint64
		expansion uint32
		keys      int
	}{{"nonscaling", uint64(n), 0, n}, {"scaling", uint64(n / 320), 2, n / 5}} {
		// The 10^6-key run is the NONSCALING filter at capacity; the
		// scaling chain (7 links) uses 2*10^5 keys to keep -race runs short.
		keys, probes := keys[:tc.keys], probes[:tc.keys]
		c, err := New(tc.capacity, 0.01, tc.expansion)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if _, err := c.Add(k); err != nil {
				t.Fatal(err)
			}
		}
		for i, k := range keys {
			if !c.Contains(k) {
				t.Fatalf("%s: false negative for key %d", tc.name, i)
			}
		}
		fp := 0
		for _, k := range probes {
			if c.Contains(k) {
				fp++
			}
		}
		// Expected: a probe passes the chain if any link claims it.
		pass := 1.0
		for _, l := range c.links {
			pass *= 1 - fpmath.StandardFPR(float64(l.nbits), float64(l.items), int(l.hashes))
		}
		filtertest.CheckFPR(t, tc.name, float64(fp)/float64(len(probes)), 1-pass, 0.15, len(probes))
		if _, est := c.Fill(); est < (1-pass)*0.85 || est > (1-pass)*1.15 {
			t.Errorf("%s: fill-based estimate %g, formula %g", tc.name, est, 1-pass)
		}
		// Dump and reload through header + chunks.
		d, err := FromHeader(c.AppendHeader(nil), 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		for off := uint64(0); ; {
			ch := c.Chunk(off)
			if ch == nil {
				break
			}
			if err := d.LoadChunk(off, ch); err != nil {
				t.Fatal(err)
			}
			off += uint64(len(ch))
		}
		if d.Size() != c.Size() || d.Items() != c.Items() || d.Capacity() != c.Capacity() {
			t.Fatal("reloaded chain differs")
		}
		for i := range c.links {
			if !bytes.Equal(c.links[i].bits, d.links[i].bits) {
				t.Fatal("reloaded bits differ")
			}
		}
		for i, k := range keys {
			if !d.Contains(k) {
				t.Fatalf("%s: false negative for key %d after reload", tc.name, i)
			}
		}
	}
}

func TestNonScalingFull(t *testing.T) {
	c, _ := New(10, 0.01, 0)
	added := 0
	for i := 0; i < 100; i++ {
		ok, err := c.Add([]byte{byte(i)})
		if err == ErrFull {
			break
		}
		if ok {
			added++
		}
	}
	if c.Items() != 10 || uint64(added) != 10 {
		t.Fatalf("items %d, added %d; want 10", c.Items(), added)
	}
	if ok, err := c.Add([]byte{0}); ok || err != nil {
		t.Fatal("re-adding a present item to a full filter must report 0 without an error")
	}
}

func TestZeroAllocs(t *testing.T) {
	c, _ := New(1000, 0.01, 0)
	k := []byte("some-key")
	filtertest.ZeroAllocs(t, "Add", func() { c.Add(k) })
	filtertest.ZeroAllocs(t, "Contains", func() { c.Contains(k) })
}

func FuzzFromHeader(f *testing.F) {
	c, _ := New(100, 0.01, 2)
	f.Add(c.AppendHeader(nil))
	f.Add([]byte("RBB1"))
	f.Fuzz(func(t *testing.T, h []byte) {
		d, err := FromHeader(h, 1<<24)
		if err != nil {
			return
		}
		if !bytes.Equal(d.AppendHeader(nil), h) {
			t.Fatal("header does not re-encode identically")
		}
		d.Add([]byte("x"))
		d.Contains([]byte("y"))
		d.LoadChunk(0, []byte{1, 2, 3})
	})
}

func TestContainsBatch(t *testing.T) {
	c, _ := New(1000, 0.01, 2)
	keys := filtertest.Keys(5000, 9)
	for _, k := range keys[:2500] {
		c.Add(k)
	}
	out := make([]bool, len(keys))
	c.ContainsBatch(keys, out)
	for i, k := range keys {
		if out[i] != c.Contains(k) {
			t.Fatalf("item %d: batch %v, single %v", i, out[i], c.Contains(k))
		}
	}
	filtertest.ZeroAllocs(t, "ContainsBatch", func() { c.ContainsBatch(keys[:200], out) })
}
