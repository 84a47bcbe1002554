package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/filtertest"
	"github.com/bloomery/bloomery/internal/wire"
)

func sample(t *testing.T) (*Filter, *Blocked) {
	t.Helper()
	f, _ := NewForCapacity(300, 0.01)
	b, _ := NewBlockedForCapacity(300, 0.01)
	for _, h := range filtertest.Hashes(300, 71) {
		f.AddHash(h)
		b.AddHash(h)
	}
	return f, b
}

func TestDecodeRefuses(t *testing.T) {
	f, b := sample(t)
	fd, _ := f.MarshalBinary()
	bd, _ := b.MarshalBinary()
	decF := func(d []byte) error { _, err := Decode(d, hashing.Expect{}); return err }
	decB := func(d []byte) error { _, err := DecodeBlocked(d, hashing.Expect{}); return err }
	for _, c := range []struct {
		name string
		data []byte
		dec  func([]byte) error
	}{{"bloom", fd, decF}, {"blocked", bd, decB}} {
		for n := range len(c.data) {
			if err := c.dec(c.data[:n]); !errors.Is(err, bloomery.ErrCorrupt) {
				t.Fatalf("%s truncated to %d: %v", c.name, n, err)
			}
		}
		for i := range c.data {
			bad := bytes.Clone(c.data)
			bad[i] ^= 0x10
			if err := c.dec(bad); err == nil {
				t.Fatalf("%s with byte %d flipped decoded", c.name, i)
			}
		}
		if err := c.dec(append(bytes.Clone(c.data), 0)); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("%s with a trailing byte: %v", c.name, err)
		}
	}
	if err := decB(fd); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("bloom bytes as blocked: %v", err)
	}
	if err := decF(bd); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("blocked bytes as bloom: %v", err)
	}
	if _, err := Decode(fd, hashing.Want(hashing.XXH3(1))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Errorf("wrong seed: %v", err)
	}

	// Well-formed containers (valid checksum) with bad contents.
	params := func(m uint64, k uint32, capacity uint64, design float64, count uint64) []byte {
		p := binary.LittleEndian.AppendUint64(nil, m)
		p = binary.LittleEndian.AppendUint32(p, k)
		p = binary.LittleEndian.AppendUint64(p, capacity)
		p = wire.AppendF64(p, design)
		return binary.LittleEndian.AppendUint64(p, count)
	}
	env := func(kind bloomery.Kind, layout uint8, params []byte, payload int) []byte {
		return container.Append(nil, kind, layout, hashing.Hasher{}, params, make([]byte, payload))
	}
	for name, c := range map[string]struct {
		data []byte
		dec  func([]byte) error
		want error
	}{
		"layout 3":          {env(bloomery.KindBloom, 3, params(64, 3, 10, 0.1, 0), 8), decF, bloomery.ErrUnsupportedVersion},
		"blocked layout 2":  {env(bloomery.KindBlocked, 2, params(512, 3, 10, 0.1, 0), 64), decB, bloomery.ErrUnsupportedVersion},
		"ok bloom layout 2": {env(bloomery.KindBloom, 2, params(64, 3, 10, 0.1, 0), 8), decF, nil},
		"layout 0":          {env(bloomery.KindBlocked, 0, params(512, 3, 10, 0.1, 0), 64), decB, bloomery.ErrUnsupportedVersion},
		"ok bloom":          {env(bloomery.KindBloom, 1, params(64, 3, 10, 0.1, 0), 8), decF, nil},
		"ok blocked":        {env(bloomery.KindBlocked, 1, params(512, 3, 10, 0.1, 0), 64), decB, nil},
		"m zero":            {env(bloomery.KindBloom, 1, params(0, 3, 10, 0.1, 0), 0), decF, bloomery.ErrCorrupt},
		"m not words":       {env(bloomery.KindBloom, 1, params(100, 3, 10, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"m not blocks":      {env(bloomery.KindBlocked, 1, params(64, 3, 10, 0.1, 0), 8), decB, bloomery.ErrCorrupt},
		"m huge":            {env(bloomery.KindBloom, 1, params(1<<62, 3, 10, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"payload short":     {env(bloomery.KindBloom, 1, params(128, 3, 10, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"payload long":      {env(bloomery.KindBlocked, 1, params(512, 3, 10, 0.1, 0), 72), decB, bloomery.ErrCorrupt},
		"k zero":            {env(bloomery.KindBloom, 1, params(64, 0, 10, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"k 33":              {env(bloomery.KindBloom, 1, params(64, 33, 10, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"capacity zero":     {env(bloomery.KindBloom, 1, params(64, 3, 0, 0.1, 0), 8), decF, bloomery.ErrCorrupt},
		"design NaN":        {env(bloomery.KindBloom, 1, params(64, 3, 10, nanF(), 0), 8), decF, bloomery.ErrCorrupt},
		"design zero":       {env(bloomery.KindBloom, 1, params(64, 3, 10, 0, 0), 8), decF, bloomery.ErrCorrupt},
		"count absurd":      {env(bloomery.KindBloom, 1, params(64, 3, 10, 0.1, 1<<63), 8), decF, bloomery.ErrCorrupt},
		"params short":      {env(bloomery.KindBloom, 1, params(64, 3, 10, 0.1, 0)[:30], 8), decF, bloomery.ErrCorrupt},
		"params long":       {env(bloomery.KindBloom, 1, append(params(64, 3, 10, 0.1, 0), 0), 8), decF, bloomery.ErrCorrupt},
		"unknown kind 200":  {env(200, 1, params(64, 3, 10, 0.1, 0), 8), decF, bloomery.ErrUnknownKind},
	} {
		err := c.dec(c.data)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		} else if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// TestStream writes several filters to one stream and reads them back one
// container at a time.
func TestStream(t *testing.T) {
	f, b := sample(t)
	var buf bytes.Buffer
	n1, err := f.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	n2, _ := b.WriteTo(&buf)
	n3, _ := f.WriteTo(&buf)
	if int(n1+n2+n3) != buf.Len() {
		t.Fatalf("WriteTo counts %d+%d+%d, stream %d", n1, n2, n3, buf.Len())
	}
	var g Filter
	var h Blocked
	h.SetConcurrent(true)
	if n, err := g.ReadFrom(&buf); err != nil || n != n1 {
		t.Fatalf("first: %d, %v", n, err)
	}
	if n, err := h.ReadFrom(&buf); err != nil || n != n2 {
		t.Fatalf("second: %d, %v", n, err)
	}
	if !h.Concurrent() {
		t.Error("ReadFrom dropped the concurrent mode")
	}
	if _, err := h.ReadFrom(&buf); !errors.Is(err, bloomery.ErrKindMismatch) {
		t.Errorf("third read as blocked: %v", err)
	}
	for _, x := range filtertest.Hashes(300, 71) {
		if !g.ContainsHash(x) || !h.ContainsHash(x) {
			t.Fatal("false negative after ReadFrom")
		}
	}
	if _, err := g.ReadFrom(&buf); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("read past the end: %v", err)
	}
}

// TestReadFromHostile announces a 2^40-byte payload and sends 1 KiB: the
// reader must fail without allocating for the announced size.
func TestReadFromHostile(t *testing.T) {
	p := binary.LittleEndian.AppendUint64(nil, 1<<43)
	p = binary.LittleEndian.AppendUint32(p, 3)
	p = binary.LittleEndian.AppendUint64(p, 10)
	p = wire.AppendF64(p, 0.1)
	p = binary.LittleEndian.AppendUint64(p, 0)
	hdr, _ := container.Begin(nil, bloomery.KindBloom, 1, hashing.Hasher{}, p, 0)
	binary.LittleEndian.PutUint64(hdr[len(hdr)-8:], 1<<40)
	var f Filter
	var ms runtimeMem
	before := ms.heap()
	stream := io.MultiReader(bytes.NewReader(hdr), bytes.NewReader(make([]byte, 1024)))
	if _, err := f.ReadFrom(stream); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Errorf("hostile stream: %v", err)
	}
	if grew := ms.heap() - before; grew > 1<<26 {
		t.Errorf("hostile stream grew the heap by %d bytes", grew)
	}
}

func nanF() float64 { var z float64; return z / z }
