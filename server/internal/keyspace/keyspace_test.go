package keyspace

import (
	"bytes"
	"testing"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/server/internal/rbcuckoo"
)

func values(t testing.TB) []Value {
	c, _ := NewBloomFilter(100, 0.01, 2)
	c.Add([]byte("a"))
	f, _ := rbcuckoo.New(rbcuckoo.Params{Capacity: 100, BucketSize: 2, MaxIterations: 20, Expansion: 1})
	f.Add([]byte("a"))
	b, err := bloom.NewBlockedForCapacity(100, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	b.Add([]byte("a"))
	vb, vc, vf := NewBloom(c), NewCuckoo(f), NewFamily(b, nil)
	vb.C.Reported, vc.C.Reported = 3, 4
	vf.C.Negatives.Store(5)
	return []Value{vb, vc, vf}
}

func TestValueRoundTrip(t *testing.T) {
	for _, v := range values(t) {
		enc := AppendValue(nil, v)
		d, err := DecodeValue(enc, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", v.Type(), err)
		}
		if !bytes.Equal(AppendValue(nil, d), enc) || d.Type() != v.Type() || d.MemBytes() != v.MemBytes() {
			t.Fatalf("%s: round trip differs", v.Type())
		}
		if _, err := DecodeValue(enc[:len(enc)-1], 1<<20); err == nil {
			t.Fatalf("%s: truncated value accepted", v.Type())
		}
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, v := range values(f) {
		f.Add(AppendValue(nil, v))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeValue(data, 1<<22)
		if err != nil {
			return
		}
		v.Stats()
		AppendValue(nil, v)
	})
}
