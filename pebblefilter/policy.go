package pebblefilter

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/ribbon"
	"github.com/cockroachdb/pebble/v2"
)

// Policy names: stable forever, one per on-disk format, no parameters.
const (
	BloomName  = "bloomery.blockedbloom.v1"
	RibbonName = "bloomery.ribbon.v1"
)

// HashSeed is the XXH3 seed new filters are written with ("bloomery" in
// ASCII). Readers use the seed recorded in each filter's trailer.
const HashSeed uint64 = 0x626c6f6f6d657279

// Trailer constants (see the package doc).
const (
	formatVersion = 1
	algXXH3       = byte(hashing.AlgXXH3)
	tagBloom      = 'B'
	tagRibbon     = 'R'
	magic0        = 'b'
	magic1        = 'm'
	bloomTrailer  = 20
	ribbonTrailer = 30
)

// Limits on policy parameters.
const (
	// MinBitsPerKey and MaxBitsPerKey bound a blocked Bloom policy.
	MinBitsPerKey = 1
	MaxBitsPerKey = 64
	// MinFPR and MaxFPR bound a Ribbon policy's target.
	MinFPR = 1e-9
	MaxFPR = 0.5
)

// Compile-time checks.
var (
	_ pebble.FilterPolicy = (*BloomPolicy)(nil)
	_ pebble.FilterPolicy = (*RibbonPolicy)(nil)
)

// checkTrailer validates the fixed fields common to both formats: the
// last five bytes (alg, version, tag, magic) of a trailer of size n. It
// reports whether filter ends with a trailer of the given family.
func checkTrailer(filter []byte, n int, tag byte) bool {
	if len(filter) < n {
		return false
	}
	t := filter[len(filter)-5:]
	return t[0] == algXXH3 && t[1] == formatVersion && t[2] == tag && t[3] == magic0 && t[4] == magic1
}

// BloomPolicy writes and reads Bloomery blocked Bloom filters
// ("bloomery.blockedbloom.v1"). Its bits per key apply to the tables it
// writes; any instance reads every filter of the format. It is immutable
// and safe for concurrent use.
type BloomPolicy struct {
	bitsPerKey float64
	k          int
}

// NewBloom returns a blocked Bloom policy writing bitsPerKey bits per
// distinct key prefix (in [MinBitsPerKey, MaxBitsPerKey]), with the probe
// count bloom.BlockedK chooses for it (7 at 10 bits per key, an FPR of
// about 0.96 %).
func NewBloom(bitsPerKey float64) (*BloomPolicy, error) {
	if !(bitsPerKey >= MinBitsPerKey && bitsPerKey <= MaxBitsPerKey) {
		return nil, fmt.Errorf("pebblefilter: bits per key %v outside [%d, %d]: %w", bitsPerKey, MinBitsPerKey, MaxBitsPerKey, bloomery.ErrInvalidParams)
	}
	return &BloomPolicy{bitsPerKey: bitsPerKey, k: bloom.BlockedK(bitsPerKey)}, nil
}

// Name returns BloomName.
func (p *BloomPolicy) Name() string { return BloomName }

// BitsPerKey returns the bits per key the policy writes.
func (p *BloomPolicy) BitsPerKey() float64 { return p.bitsPerKey }

// MayContain reports whether key may be in the table whose filter block is
// filter (false: certainly not). It answers true on a filter it does not
// recognise. One XXH3 hash and one 64-byte block; no allocation.
func (p *BloomPolicy) MayContain(_ pebble.FilterType, filter, key []byte) bool {
	return bloomMayContain(filter, key)
}

func bloomMayContain(filter, key []byte) bool {
	if !checkTrailer(filter, bloomTrailer, tagBloom) {
		return true
	}
	body := len(filter) - bloomTrailer
	t := filter[body:]
	seed := binary.LittleEndian.Uint64(t[0:])
	blocks := uint64(binary.LittleEndian.Uint32(t[8:]))
	k := int(t[14])
	// BlockedMayContain checks body == blocks*64 and k, failing open.
	return bloom.BlockedMayContain(filter[:body], blocks, k, hashing.XXH3(seed).Sum64(key))
}

// NewWriter returns a writer for one table's filter. Pebble calls it once
// per output table; the writer is not safe for concurrent use.
func (p *BloomPolicy) NewWriter(pebble.FilterType) pebble.FilterWriter {
	return &bloomWriter{p: p}
}

// bloomWriter collects the hashes of a table's distinct prefixes. Keys
// arrive sorted, so a repeated prefix (MVCC versions of one key) is always
// consecutive and one comparison of hashes removes it.
type bloomWriter struct {
	p      *BloomPolicy
	hashes []uint64
}

func (w *bloomWriter) AddKey(key []byte) {
	h := hashing.XXH3(HashSeed).Sum64(key)
	if n := len(w.hashes); n > 0 && w.hashes[n-1] == h {
		return
	}
	w.hashes = append(w.hashes, h)
}

// Finish appends the filter of the keys added since the last Finish to dst
// and resets the writer: ceil(n*bitsPerKey/512) blocks (at least one) and
// the trailer.
func (w *bloomWriter) Finish(dst []byte) []byte {
	n := len(w.hashes)
	blocks := max(1, uint64(math.Ceil(float64(n)*w.p.bitsPerKey/bloom.BlockBits)))
	if blocks > math.MaxUint32 {
		blocks = math.MaxUint32
	}
	size := int(bloom.BlockedRawSize(blocks))
	start := len(dst)
	dst = append(dst, make([]byte, size)...)
	body := dst[start : start+size]
	for _, h := range w.hashes {
		bloom.BlockedAddRaw(body, blocks, w.p.k, h)
	}
	var t [bloomTrailer]byte
	binary.LittleEndian.PutUint64(t[0:], HashSeed)
	binary.LittleEndian.PutUint32(t[8:], uint32(blocks))
	binary.LittleEndian.PutUint16(t[12:], uint16(math.Round(w.p.bitsPerKey*100)))
	t[14] = byte(w.p.k)
	t[15], t[16], t[17], t[18], t[19] = algXXH3, formatVersion, tagBloom, magic0, magic1
	w.hashes = w.hashes[:0]
	return append(dst, t[:]...)
}

// RibbonPolicy writes and reads Bloomery Ribbon filters
// ("bloomery.ribbon.v1"): about 30 % smaller than blocked Bloom at the
// same FPR, built once per table (which suits sstables: they are
// immutable). Its target FPR applies to the tables it writes; any instance
// reads every filter of the format. It is immutable and safe for
// concurrent use.
type RibbonPolicy struct {
	fpr float64
}

// NewRibbon returns a Ribbon policy with target false-positive rate fpr in
// [MinFPR, MaxFPR].
func NewRibbon(fpr float64) (*RibbonPolicy, error) {
	if !(fpr >= MinFPR && fpr <= MaxFPR) {
		return nil, fmt.Errorf("pebblefilter: ribbon FPR %v outside [%v, %v]: %w", fpr, MinFPR, MaxFPR, bloomery.ErrInvalidParams)
	}
	return &RibbonPolicy{fpr: fpr}, nil
}

// Name returns RibbonName.
func (p *RibbonPolicy) Name() string { return RibbonName }

// FPR returns the target false-positive rate of the tables it writes.
func (p *RibbonPolicy) FPR() float64 { return p.fpr }

// MayContain reports whether key may be in the table whose filter block is
// filter (false: certainly not). It answers true on a filter it does not
// recognise. One XXH3 hash and one or two 128-slot blocks; no allocation.
func (p *RibbonPolicy) MayContain(_ pebble.FilterType, filter, key []byte) bool {
	return ribbonMayContain(filter, key)
}

func ribbonMayContain(filter, key []byte) bool {
	if !checkTrailer(filter, ribbonTrailer, tagRibbon) {
		return true
	}
	body := len(filter) - ribbonTrailer
	t := filter[body:]
	l := ribbon.RawLayout{
		Blocks:       uint64(binary.LittleEndian.Uint32(t[8:])),
		UpperStart:   uint64(binary.LittleEndian.Uint32(t[12:])),
		Seed:         binary.LittleEndian.Uint32(t[16:]),
		LowerColumns: int(t[24]),
	}
	// MayContainRaw checks the body length against the layout (a zero
	// layout, written when no filter could be built, is invalid), failing
	// open.
	return ribbon.MayContainRaw(filter[:body], l, hashing.XXH3(binary.LittleEndian.Uint64(t[0:])).Sum64(key))
}

// NewWriter returns a writer for one table's filter. Pebble calls it once
// per output table; the writer is not safe for concurrent use. It keeps a
// ribbon.Builder, so its working memory is reused across Finish calls.
func (p *RibbonPolicy) NewWriter(pebble.FilterType) pebble.FilterWriter {
	return &ribbonWriter{p: p}
}

type ribbonWriter struct {
	p      *RibbonPolicy
	hashes []uint64
	b      ribbon.Builder
}

func (w *ribbonWriter) AddKey(key []byte) {
	h := hashing.XXH3(HashSeed).Sum64(key)
	if n := len(w.hashes); n > 0 && w.hashes[n-1] == h {
		return
	}
	w.hashes = append(w.hashes, h)
}

// Finish appends the Ribbon filter of the keys added since the last Finish
// and resets the writer. If the build fails (ribbon.ErrBuildFailed has a
// vanishing probability; more than 2^32 keys per table is impossible in
// practice) it writes a trailer with zero blocks, which every reader
// treats as "may contain": the table is then read as if it had no filter.
func (w *ribbonWriter) Finish(dst []byte) []byte {
	var t [ribbonTrailer]byte
	binary.LittleEndian.PutUint64(t[0:], HashSeed)
	binary.LittleEndian.PutUint32(t[20:], math.Float32bits(float32(w.p.fpr)))
	t[25], t[26], t[27], t[28], t[29] = algXXH3, formatVersion, tagRibbon, magic0, magic1
	f, err := w.b.Build(w.hashes, ribbon.Params{FPR: w.p.fpr, Hasher: hashing.XXH3(HashSeed)})
	w.hashes = w.hashes[:0]
	if err == nil {
		l := f.RawLayout()
		if l.Blocks <= math.MaxUint32 && l.UpperStart <= math.MaxUint32 {
			dst = f.AppendRaw(dst)
			binary.LittleEndian.PutUint32(t[8:], uint32(l.Blocks))
			binary.LittleEndian.PutUint32(t[12:], uint32(l.UpperStart))
			binary.LittleEndian.PutUint32(t[16:], l.Seed)
			t[24] = byte(l.LowerColumns)
		}
	}
	return append(dst, t[:]...)
}
