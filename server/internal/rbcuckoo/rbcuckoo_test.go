package rbcuckoo

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

func params(capacity uint64, bs uint16, exp uint16) Params {
	return Params{Capacity: capacity, BucketSize: bs, MaxIterations: DefaultMaxIterations, Expansion: exp}
}

// RedisBloom's observed bucket counts and sizes.
func TestSizingMatchesRedisBloom(t *testing.T) {
	for _, tc := range []struct {
		capacity uint64
		bs       uint16
		buckets  uint64
	}{{1000, 2, 512}, {1000, 4, 256}, {100, 2, 64}, {12, 6, 2}} {
		f, err := New(params(tc.capacity, tc.bs, 1))
		if err != nil {
			t.Fatal(err)
		}
		if f.Buckets() != tc.buckets {
			t.Errorf("capacity %d bucket size %d: %d buckets, RedisBloom %d", tc.capacity, tc.bs, f.Buckets(), tc.buckets)
		}
	}
	f, _ := New(params(1000, 2, 1))
	if f.Size() != 1080 {
		t.Errorf("Size %d, RedisBloom 1080", f.Size())
	}
	f, _ = New(params(1000, 2, 3))
	if f.Expansion() != 4 {
		t.Errorf("expansion 3 became %d, want 4 (next power of two)", f.Expansion())
	}
}

func TestNoFalseNegativesFPRDelete(t *testing.T) {
	n := 1_000_000
	if filtertest.Short() {
		n = 100_000
	}
	keys := filtertest.Keys(n, 3)
	probes := filtertest.Keys(n, 4)
	f, err := New(params(uint64(n)*5/4, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if err := f.Add(k); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	for i, k := range keys {
		if !f.Contains(k) {
			t.Fatalf("false negative %d", i)
		}
	}
	fp := 0
	for _, k := range probes {
		if f.Contains(k) {
			fp++
		}
	}
	st := f.Stats()
	filtertest.CheckFPR(t, "cuckoo b=2", float64(fp)/float64(len(probes)), st.EstimatedFPR, 0.15, len(probes))
	// Delete every other key: the rest stay present.
	for i := 0; i < n; i += 2 {
		if !f.Delete(keys[i]) {
			t.Fatalf("delete %d found nothing", i)
		}
	}
	for i := 1; i < n; i += 2 {
		if !f.Contains(keys[i]) {
			t.Fatalf("false negative %d after deleting others", i)
		}
	}
	if f.Items() != uint64(n-n/2) || f.Deleted() != uint64(n/2) {
		t.Fatalf("items %d deleted %d", f.Items(), f.Deleted())
	}
}

// A failed kick chain must be undone exactly: after ErrFull every item
// that was accepted is still present and the slots are unchanged.
func TestFullRollsBack(t *testing.T) {
	f, _ := New(params(64, 2, 0))
	keys := filtertest.Keys(1000, 5)
	var in [][]byte
	fulls := 0
	for _, k := range keys {
		before := append([]byte(nil), f.subs[0].slots...)
		err := f.Add(k)
		if errors.Is(err, ErrFull) {
			fulls++
			if !bytes.Equal(before, f.subs[0].slots) {
				t.Fatal("failed insert changed the table")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, k)
	}
	if fulls == 0 || len(in) < 50 {
		t.Fatalf("accepted %d, refused %d", len(in), fulls)
	}
	for i, k := range in {
		if !f.Contains(k) {
			t.Fatalf("false negative %d after refused inserts", i)
		}
	}
}

func TestGrowthCompactDump(t *testing.T) {
	f, _ := New(params(1000, 2, 2))
	keys := filtertest.Keys(20000, 6)
	for _, k := range keys {
		if err := f.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	if f.NumFilters() < 3 {
		t.Fatalf("%d sub-filters after 20x capacity", f.NumFilters())
	}
	d, err := FromHeader(f.AppendHeader(nil), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for off := uint64(0); ; {
		c := f.Chunk(off)
		if c == nil {
			break
		}
		if err := d.LoadChunk(off, c); err != nil {
			t.Fatal(err)
		}
		off += uint64(len(c))
	}
	if d.Size() != f.Size() || d.Items() != f.Items() {
		t.Fatal("reloaded filter differs")
	}
	for i := 0; i < len(keys); i++ {
		if i%4 != 0 {
			d.Delete(keys[i])
		}
	}
	d.Compact()
	for i := 0; i < len(keys); i += 4 {
		if !d.Contains(keys[i]) {
			t.Fatalf("false negative %d after delete+compact", i)
		}
	}
	if d.NumFilters() >= f.NumFilters() {
		t.Logf("compact kept %d sub-filters", d.NumFilters())
	}
}

func TestZeroAllocs(t *testing.T) {
	f, _ := New(params(1<<16, 2, 1))
	k := []byte("key")
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(k) })
	filtertest.ZeroAllocs(t, "Count", func() { f.Count(k) })
	filtertest.ZeroAllocs(t, "Add+Delete", func() { f.Add(k); f.Delete(k) })
}

func FuzzFromHeader(f *testing.F) {
	c, _ := New(params(1000, 2, 1))
	f.Add(c.AppendHeader(nil))
	f.Fuzz(func(t *testing.T, h []byte) {
		d, err := FromHeader(h, 1<<24)
		if err != nil {
			return
		}
		if !bytes.Equal(d.AppendHeader(nil), h) {
			t.Fatal("header does not re-encode identically")
		}
		d.Add([]byte("x"))
		d.Delete([]byte("x"))
		d.Compact()
	})
}
