package gcs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

const vectorsPath = "testdata/bip158/testnet-19.json"

// vector is one row of testnet-19.json.
type vector struct {
	height      int
	blockHash   [32]byte // internal byte order
	block       []byte
	prevScripts [][]byte
	prevHeader  [32]byte // internal byte order
	filter      []byte
	header      [32]byte // internal byte order
	note        string
}

// reversedHash decodes a display-order hex hash into internal byte order.
func reversedHash(t *testing.T, s string) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hash %q: %v", s, err)
	}
	var h [32]byte
	for i := range b {
		h[i] = b[31-i]
	}
	return h
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	var out []vector
	for i, r := range rows[1:] { // row 0 is the column legend
		var cols []json.RawMessage
		if err := json.Unmarshal(r, &cols); err != nil || len(cols) != 8 {
			t.Fatalf("row %d: want 8 columns (%v)", i+1, err)
		}
		var v vector
		var hash, block, prevHdr, filter, hdr string
		var prev []string
		for j, dst := range []any{&v.height, &hash, &block, &prev, &prevHdr, &filter, &hdr, &v.note} {
			if err := json.Unmarshal(cols[j], dst); err != nil {
				t.Fatalf("row %d col %d: %v", i+1, j, err)
			}
		}
		v.blockHash = reversedHash(t, hash)
		v.prevHeader = reversedHash(t, prevHdr)
		v.header = reversedHash(t, hdr)
		if v.block, err = hex.DecodeString(block); err != nil {
			t.Fatal(err)
		}
		if v.filter, err = hex.DecodeString(filter); err != nil {
			t.Fatal(err)
		}
		for _, s := range prev {
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			v.prevScripts = append(v.prevScripts, b)
		}
		out = append(out, v)
	}
	return out
}

// blockReader is a bounds-checked reader for Bitcoin's wire format.
type blockReader struct {
	b   []byte
	err error
}

func (r *blockReader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("truncated: need %d bytes, have %d", n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *blockReader) varint() uint64 {
	p := r.take(1)
	if p == nil {
		return 0
	}
	switch p[0] {
	case 0xfd:
		if v := r.take(2); v != nil {
			return uint64(binary.LittleEndian.Uint16(v))
		}
	case 0xfe:
		if v := r.take(4); v != nil {
			return uint64(binary.LittleEndian.Uint32(v))
		}
	case 0xff:
		if v := r.take(8); v != nil {
			return binary.LittleEndian.Uint64(v)
		}
	default:
		return uint64(p[0])
	}
	return 0
}

// outputScripts parses a serialized block (80-byte header, transactions
// with optional segwit marker, flag and witnesses) and returns every
// output script of every transaction, in order.
func outputScripts(block []byte) ([][]byte, int, error) {
	r := &blockReader{b: block}
	r.take(80)
	ntx := r.varint()
	var scripts [][]byte
	for tx := uint64(0); tx < ntx && r.err == nil; tx++ {
		r.take(4) // version
		segwit := false
		if len(r.b) >= 2 && r.b[0] == 0x00 && r.b[1] == 0x01 {
			segwit = true
			r.take(2)
		}
		nin := r.varint()
		for i := uint64(0); i < nin && r.err == nil; i++ {
			r.take(36) // previous outpoint
			r.take(r.varint())
			r.take(4) // sequence
		}
		nout := r.varint()
		for i := uint64(0); i < nout && r.err == nil; i++ {
			r.take(8) // value
			scripts = append(scripts, r.take(r.varint()))
		}
		if segwit {
			for i := uint64(0); i < nin && r.err == nil; i++ {
				items := r.varint()
				for j := uint64(0); j < items && r.err == nil; j++ {
					r.take(r.varint())
				}
			}
		}
		r.take(4) // lock time
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes after %d transactions", len(r.b), ntx)
	}
	return scripts, int(ntx), r.err
}

func TestBIP158Vectors(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) != 10 {
		t.Fatalf("want 10 vectors, have %d", len(vs))
	}
	for _, v := range vs {
		t.Run(fmt.Sprint(v.height), func(t *testing.T) {
			outs, ntx, err := outputScripts(v.block)
			if err != nil {
				t.Fatalf("parse block: %v", err)
			}
			items := append(slices.Clone(outs), v.prevScripts...)
			f, err := BuildBIP158(v.blockHash, items)
			if err != nil {
				t.Fatal(err)
			}
			got := f.Bytes()
			if !bytes.Equal(got, v.filter) {
				t.Fatalf("%d txs, %d candidate items, N=%d: filter\n got %x\nwant %x", ntx, len(items), f.Len(), got, v.filter)
			}
			if h := FilterHeader(got, v.prevHeader); h != v.header {
				t.Fatalf("filter header %x, want %x", h, v.header)
			}
			if h := f.Header(v.prevHeader); h != v.header {
				t.Fatalf("Filter.Header %x, want %x", h, v.header)
			}
			// Parse the served bytes back; every element must match, alone
			// and in a batch, and the bytes must round-trip.
			g, err := ParseBIP158(v.blockHash, v.filter)
			if err != nil {
				t.Fatalf("ParseBIP158: %v", err)
			}
			if !bytes.Equal(g.Bytes(), v.filter) {
				t.Fatal("ParseBIP158 does not round-trip")
			}
			var elems [][]byte
			for _, it := range items {
				if len(it) > 0 && it[0] != opReturn {
					elems = append(elems, it)
					if !g.Contains(it) {
						t.Errorf("element %x not matched", it)
					}
				}
			}
			if len(elems) > 0 && !g.MatchAny(elems) {
				t.Error("MatchAny missed the elements")
			}
			for _, e := range elems {
				if !g.MatchAny([][]byte{[]byte("certainly-absent-1"), e, []byte("certainly-absent-2")}) {
					t.Errorf("MatchAny missed %x among absent keys", e)
				}
			}
			// The container form needs the block's key.
			enc, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Decode(enc, hashing.Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
				t.Fatalf("keyless decode of a BIP-158 filter: %v, want ErrKeyRequired", err)
			}
			d, err := Decode(enc, hashing.Want(BIP158Params(v.blockHash).Hasher))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Bytes(), v.filter) {
				t.Fatal("container round trip changed the filter")
			}
			for _, e := range elems {
				if !d.Contains(e) {
					t.Errorf("after container round trip: element %x not matched", e)
				}
			}
			t.Logf("height %d: %d txs, %d candidates, N=%d, %d bytes (%s)", v.height, ntx, len(items), f.Len(), len(got), v.note)
		})
	}
}

func TestCompactSize(t *testing.T) {
	for _, n := range []uint64{0, 1, 0xfc, 0xfd, 0xffff, 0x10000, 0xffffffff, 0x100000000, 1<<64 - 1} {
		b := appendCompactSize(nil, n)
		got, k, err := readCompactSize(b)
		if err != nil || got != n || k != len(b) {
			t.Errorf("%d: got %d, %d bytes, %v (encoded %x)", n, got, k, err, b)
		}
	}
	for _, bad := range []string{"", "fd", "fdfc00", "fe0000ff00"[:8], "fe00000000", "ff0000000000000000"} {
		b, _ := hex.DecodeString(bad)
		if _, _, err := readCompactSize(b); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
}

// One Builder reused across every block gives the same filters.
func TestBIP158BuilderReuse(t *testing.T) {
	var b Builder
	for round := 0; round < 2; round++ {
		for _, v := range loadVectors(t) {
			outs, _, err := outputScripts(v.block)
			if err != nil {
				t.Fatal(err)
			}
			f, err := b.BuildBIP158(v.blockHash, append(outs, v.prevScripts...))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Bytes(), v.filter) {
				t.Fatalf("round %d height %d: reused builder gives a different filter", round, v.height)
			}
		}
	}
}
