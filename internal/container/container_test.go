package container

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

func sample() []byte {
	return Append(nil, bloomery.KindBloom, 1, hashing.XXH3(42), []byte{1, 2, 3}, []byte("payload bytes"))
}

func TestRoundTrip(t *testing.T) {
	b := sample()
	h, hs, params, payload, err := Open(b, bloomery.KindBloom, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != bloomery.KindBloom || h.Layout != 1 || h.Seed != 42 || !hs.Equal(hashing.XXH3(42)) {
		t.Fatalf("header %+v", h)
	}
	if !bytes.Equal(params, []byte{1, 2, 3}) || string(payload) != "payload bytes" {
		t.Fatal("params/payload")
	}
	if h.Size != uint64(len(b)) {
		t.Fatal("size")
	}
}

func TestRefusals(t *testing.T) {
	b := sample()
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, bloomery.ErrCorrupt},
		{"magic", append([]byte("XXXX"), b[4:]...), bloomery.ErrCorrupt},
		{"version", func() []byte { c := bytes.Clone(b); c[4] = 9; return c }(), bloomery.ErrUnsupportedVersion},
		{"checksum", func() []byte { c := bytes.Clone(b); c[len(c)-6] ^= 1; return c }(), bloomery.ErrCorrupt},
		{"truncated", b[:len(b)-1], bloomery.ErrCorrupt},
		{"trailing", append(bytes.Clone(b), 0), bloomery.ErrCorrupt},
		{"hostile params len", func() []byte { c := bytes.Clone(b); c[19] = 0xff; return c }(), bloomery.ErrCorrupt},
		{"hostile payload len", func() []byte { c := bytes.Clone(b); c[30] = 0xff; return c }(), bloomery.ErrCorrupt},
	}
	for _, c := range cases {
		if _, _, _, _, err := Open(c.data, bloomery.KindBloom, hashing.Expect{}); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	if _, _, _, _, err := Open(b, bloomery.KindCuckoo, hashing.Expect{}); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("kind: %v", err)
	}
	if _, _, _, _, err := Open(b, bloomery.KindBloom, hashing.Want(hashing.XXH3(43))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("seed: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample())
	f.Add([]byte("BLMY"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, params, payload, err := Parse(data)
		if err != nil {
			return
		}
		// A valid envelope re-encodes to the same bytes.
		var hs hashing.Hasher
		if h.Hash == hashing.AlgXXH3 {
			hs = hashing.XXH3(h.Seed)
		} else {
			return
		}
		again := Append(nil, h.Kind, h.Layout, hs, params, payload)
		again[4] = h.Version
		if h.Version == Version && !bytes.Equal(again, data) {
			t.Fatalf("re-encode differs")
		}
	})
}
