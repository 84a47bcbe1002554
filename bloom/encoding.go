package bloom

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// The container layout bytes of this package: each names a probe
// derivation (documented on Filter and Blocked, and in
// docs/format/bloom.md) with the params and payload below, which every
// layout shares. A new derivation gets a new number, and every build
// keeps reading the older ones.
//
//   - Layout1: both kinds. Standard filters: step Mix64(h)|1, probe bit
//     Reduce(g, m). Blocked filters have no other layout.
//   - Layout2: standard filters only, what New writes since the thirteenth
//     session: step rotl(h, 32)|1, probe word Reduce(g, m/64) and bit
//     g mod 64 (see Filter, "Probes").
//
// Params (36 bytes, little-endian):
//
//	off size field
//	0   8    m, the number of bits (a multiple of 64; of 512 for blocked)
//	8   4    k, probes per key (1..32)
//	12  8    capacity, the design number of keys (>= 1)
//	20  8    design FPR, IEEE-754 float64 in (0, 1]
//	28  8    count, the Len() of the filter
//
// Payload: the m/64 words of the bit array, each little-endian; bit b is
// bit b%64 of word b/64. For the blocked kind, block i is words 8i..8i+7.
const (
	Layout1 = 1
	Layout2 = 2
)

const paramsLen = 36

type header struct {
	m         uint64
	k         int
	capacity  int
	design    float64
	count     int
	hasher    hashing.Hasher
	payload   []byte
	blockBits uint64
	layout    uint8
}

func appendParams(b []byte, m uint64, k, capacity int, design float64, count int) []byte {
	b = binary.LittleEndian.AppendUint64(b, m)
	b = binary.LittleEndian.AppendUint32(b, uint32(k))
	b = binary.LittleEndian.AppendUint64(b, uint64(capacity))
	b = wire.AppendF64(b, design)
	return binary.LittleEndian.AppendUint64(b, uint64(count))
}

// open validates an encoded filter of kind and returns its fields; the
// payload is a sub-slice of data whose length has been checked to be m/8.
func open(data []byte, kind bloomery.Kind, want hashing.Expect) (header, error) {
	ctx := "bloom: decode " + kind.String()
	h, hs, params, payload, err := container.Open(data, kind, want)
	if err != nil {
		return header{}, fmt.Errorf("%s: %w", ctx, err)
	}
	if !layoutOK(kind, h.Layout) {
		return header{}, fmt.Errorf("%s: layout %d (this build reads %s): %w", ctx, h.Layout, layoutsOf(kind), bloomery.ErrUnsupportedVersion)
	}
	hd, err := parseParams(params, kind)
	if err != nil {
		return header{}, err
	}
	if uint64(len(payload)) != hd.m/8 {
		return header{}, fmt.Errorf("%s: payload is %d bytes, %d bits need %d: %w", ctx, len(payload), hd.m, hd.m/8, bloomery.ErrCorrupt)
	}
	hd.hasher = hs
	hd.payload = payload
	hd.layout = h.Layout
	return hd, nil
}

// layoutOK reports whether this build reads layout l of kind.
func layoutOK(kind bloomery.Kind, l uint8) bool {
	return l == Layout1 || (l == Layout2 && kind == bloomery.KindBloom)
}

// layoutsOf names the layouts this build reads for kind, for errors.
func layoutsOf(kind bloomery.Kind) string {
	if kind == bloomery.KindBloom {
		return "1 and 2"
	}
	return "1"
}

func parseParams(params []byte, kind bloomery.Kind) (header, error) {
	ctx := "bloom: decode " + kind.String() + ": params"
	r := wire.NewReader(params, ctx)
	hd := header{blockBits: 64}
	if kind == bloomery.KindBlocked {
		hd.blockBits = BlockBits
	}
	hd.m = r.U64("bits")
	k := r.U32("hash functions")
	capacity := r.U64("capacity")
	hd.design = r.F64("design FPR")
	count := r.U64("count")
	r.Done()
	if err := r.Err(); err != nil {
		return header{}, err
	}
	const maxCount = 1 << 62
	switch {
	case hd.m == 0 || hd.m%hd.blockBits != 0 || hd.m/8 > MaxBytes:
		r.Fail("bits %d not a positive multiple of %d within %d bytes", hd.m, hd.blockBits, uint64(MaxBytes))
	case k == 0 || k > MaxHashFuncs:
		r.Fail("hash functions %d outside [1, %d]", k, MaxHashFuncs)
	case capacity == 0 || capacity > maxCount:
		r.Fail("capacity %d outside [1, 2^62]", capacity)
	case !(hd.design > 0 && hd.design <= 1):
		r.Fail("design FPR %v outside (0, 1]", hd.design)
	case count > maxCount:
		r.Fail("count %d exceeds 2^62", count)
	}
	if err := r.Err(); err != nil {
		return header{}, err
	}
	hd.k, hd.capacity, hd.count = int(k), int(capacity), int(count)
	return hd, nil
}

func decodeWords(dst []uint64, payload []byte) {
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(payload[8*i:])
	}
}

// writeContainer streams one container to w: the header, the words in
// chunks (encoded by word(i)), and the CRC-32C, without building the whole
// encoding in memory.
func writeContainer(w io.Writer, kind bloomery.Kind, layout uint8, hs hashing.Hasher, params []byte, nwords int, word func(int) uint64) (int64, error) {
	hdr, _ := container.Begin(nil, kind, layout, hs, params, 0)
	// Begin wrote a zero payload length as the header's last 8 bytes
	// (docs/format.md); announce the real one.
	binary.LittleEndian.PutUint64(hdr[len(hdr)-8:], uint64(nwords)*8)
	crc := wire.CRC32C(hdr)
	n, err := w.Write(hdr)
	total := int64(n)
	if err != nil {
		return total, err
	}
	const chunk = 4096
	buf := make([]byte, 0, 8*chunk)
	for i := 0; i < nwords; {
		buf = buf[:0]
		end := min(nwords, i+chunk)
		for ; i < end; i++ {
			buf = binary.LittleEndian.AppendUint64(buf, word(i))
		}
		crc = wire.UpdateCRC32C(crc, buf)
		n, err = w.Write(buf)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	n, err = w.Write(binary.LittleEndian.AppendUint32(buf[:0], crc))
	return total + int64(n), err
}

// readContainer reads exactly one container of kind from r. It reads the
// header and params first and checks that the announced payload matches
// the params (m/8 bytes) before reading it, and grows its buffer only as
// bytes actually arrive, so a hostile stream cannot make it allocate much
// more than it sends.
func readContainer(r io.Reader, kind bloomery.Kind) ([]byte, int64, error) {
	ctx := "bloom: read " + kind.String()
	const prefix = 20 // magic .. params length (docs/format.md)
	buf := make([]byte, prefix, 256)
	n, err := io.ReadFull(r, buf)
	total := int64(n)
	if err != nil {
		return nil, total, fmt.Errorf("%s: header: %w (%w)", ctx, bloomery.ErrCorrupt, err)
	}
	if string(buf[:4]) != container.Magic {
		return nil, total, fmt.Errorf("%s: bad magic %q (not a Bloomery filter): %w", ctx, buf[:4], bloomery.ErrCorrupt)
	}
	p := binary.LittleEndian.Uint32(buf[16:])
	if p > container.MaxParams {
		return nil, total, fmt.Errorf("%s: params length %d: %w", ctx, p, bloomery.ErrCorrupt)
	}
	buf = slices.Grow(buf, int(p)+8)[:prefix+int(p)+8]
	n, err = io.ReadFull(r, buf[prefix:])
	total += int64(n)
	if err != nil {
		return nil, total, fmt.Errorf("%s: params: %w (%w)", ctx, bloomery.ErrCorrupt, err)
	}
	h, err := container.Peek(buf)
	if err != nil {
		return nil, total, fmt.Errorf("%s: %w", ctx, err)
	}
	if h.Kind != kind {
		return nil, total, fmt.Errorf("%s: stream holds a %v filter: %w", ctx, h.Kind, bloomery.ErrKindMismatch)
	}
	hd, err := parseParams(buf[prefix:prefix+int(p)], kind)
	if err != nil {
		return nil, total, err
	}
	if h.PayloadLen != hd.m/8 {
		return nil, total, fmt.Errorf("%s: payload of %d bytes announced, %d bits need %d: %w", ctx, h.PayloadLen, hd.m, hd.m/8, bloomery.ErrCorrupt)
	}
	for uint64(len(buf)) < h.Size {
		// Grow geometrically with what has arrived: at most twice the
		// bytes actually read are ever allocated.
		step := int(min(h.Size-uint64(len(buf)), uint64(max(1<<16, len(buf)))))
		start := len(buf)
		buf = slices.Grow(buf, step)[:start+step]
		n, err = io.ReadFull(r, buf[start:])
		total += int64(n)
		if err != nil {
			return nil, total, fmt.Errorf("%s: payload: %w (%w)", ctx, bloomery.ErrCorrupt, err)
		}
	}
	return buf, total, nil
}

// ---- Filter ----

func (f *Filter) params() []byte {
	return appendParams(make([]byte, 0, paramsLen), f.m, f.k, f.capacity, f.design, f.count)
}

// AppendBinary appends f in the container format (kind bloom, f's layout:
// Layout2 unless it was decoded from layout 1). A keyed filter records its
// key fingerprint, never the key.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	b, start := container.Begin(b, bloomery.KindBloom, f.layout, f.hasher, f.params(), len(f.words)*8)
	b = wire.AppendUint64s(b, f.words)
	return container.Finish(b, start), nil
}

// MarshalBinary returns f in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the filter encoded in data. If f already
// has a keyed hasher with its key, the encoding must use that key;
// otherwise only unkeyed filters are accepted (use Decode for others).
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, f.expect())
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

func (f *Filter) expect() hashing.Expect {
	if f.hasher.HasKey() {
		return hashing.Want(f.hasher)
	}
	return hashing.Expect{}
}

// Decode reads a standard Bloom filter from data (exactly one container).
// want says which hasher the caller expects (see hashing.Expect). Errors
// wrap bloomery.ErrCorrupt, ErrUnsupportedVersion, ErrKindMismatch,
// ErrIncompatible or ErrKeyRequired. data is not retained.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hd, err := open(data, bloomery.KindBloom, want)
	if err != nil {
		return nil, err
	}
	f := &Filter{
		words:    newWords(hd.m / 64),
		m:        hd.m,
		k:        hd.k,
		capacity: hd.capacity,
		design:   hd.design,
		count:    hd.count,
		hasher:   hd.hasher,
		inline:   inlineHashOf(hd.hasher),
		layout:   hd.layout,
	}
	f.setProbes()
	decodeWords(f.words, hd.payload)
	f.ones = popcount(f.words)
	return f, nil
}

// WriteTo writes f in the container format to w, streaming the bit array
// in 32 KiB chunks. It implements io.WriterTo.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	return writeContainer(w, bloomery.KindBloom, f.layout, f.hasher, f.params(), len(f.words), func(i int) uint64 { return f.words[i] })
}

// ReadFrom replaces f with the filter read from r, consuming exactly one
// container (so filters can be concatenated in one stream). Hasher rules
// as for UnmarshalBinary. It implements io.ReaderFrom.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	data, n, err := readContainer(r, bloomery.KindBloom)
	if err != nil {
		return n, err
	}
	return n, f.UnmarshalBinary(data)
}

// ---- Blocked ----

func (f *Blocked) params() []byte {
	return appendParams(make([]byte, 0, paramsLen), f.Bits(), f.k, f.capacity, f.design, f.Len())
}

// AppendBinary appends f in the container format (kind blocked, layout 1).
func (f *Blocked) AppendBinary(b []byte) ([]byte, error) {
	b, start := container.Begin(b, bloomery.KindBlocked, Layout1, f.hasher, f.params(), len(f.words)*8)
	if f.concurrent {
		for i := range f.words {
			b = binary.LittleEndian.AppendUint64(b, f.load(i))
		}
	} else {
		b = wire.AppendUint64s(b, f.words)
	}
	return container.Finish(b, start), nil
}

// MarshalBinary returns f in the container format.
func (f *Blocked) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary replaces f with the blocked filter encoded in data,
// keeping f's concurrent mode. Hasher rules as for Filter.UnmarshalBinary.
func (f *Blocked) UnmarshalBinary(data []byte) error {
	want := hashing.Expect{}
	if f.hasher.HasKey() {
		want = hashing.Want(f.hasher)
	}
	g, err := DecodeBlocked(data, want)
	if err != nil {
		return err
	}
	g.SetConcurrent(f.concurrent)
	*f = *g
	return nil
}

// DecodeBlocked reads a blocked Bloom filter from data (exactly one
// container); see Decode. The result is not in concurrent mode.
func DecodeBlocked(data []byte, want hashing.Expect) (*Blocked, error) {
	hd, err := open(data, bloomery.KindBlocked, want)
	if err != nil {
		return nil, err
	}
	f := &Blocked{
		words:    alignedWords(hd.m / 64),
		blocks:   hd.m / BlockBits,
		k:        hd.k,
		capacity: hd.capacity,
		design:   hd.design,
		count:    int64(hd.count),
		hasher:   hd.hasher,
		inline:   inlineHashOf(hd.hasher),
	}
	decodeWords(f.words, hd.payload)
	f.ones = popcount(f.words)
	return f, nil
}

// WriteTo writes f in the container format to w, streaming the bit array.
func (f *Blocked) WriteTo(w io.Writer) (int64, error) {
	return writeContainer(w, bloomery.KindBlocked, Layout1, f.hasher, f.params(), len(f.words), f.load)
}

// ReadFrom replaces f with the blocked filter read from r, consuming
// exactly one container.
func (f *Blocked) ReadFrom(r io.Reader) (int64, error) {
	data, n, err := readContainer(r, bloomery.KindBlocked)
	if err != nil {
		return n, err
	}
	return n, f.UnmarshalBinary(data)
}
