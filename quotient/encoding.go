package quotient

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
	"github.com/bloomery/bloomery/internal/wire"
)

// layout is the payload and index-derivation version: quotient = the high
// q bits and remainder = the next r bits of the 64-bit hash.
const layout = 1

// AppendBinary appends the filter in the container format.
//
// Format: params = q (u8), r (u8), spare doublings (u8), resizes (u8),
// capacity (u64), design FPR (f64), stored count n (u64); payload =
// occupieds, runends and packed remainders as little-endian uint64 words
// (xslots/64, xslots/64 and ceil(xslots*r/64)+1 words; xslots is derived
// from q), then one offset byte per 64-slot block.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) {
	params := make([]byte, 0, 28)
	params = append(params, byte(f.q), byte(f.r), byte(f.doublings), byte(f.resizes))
	params = binary.LittleEndian.AppendUint64(params, uint64(f.capacity))
	params = wire.AppendF64(params, f.design)
	params = binary.LittleEndian.AppendUint64(params, uint64(f.n))
	size := 8*(len(f.occupieds)+len(f.runends)+len(f.rems)) + len(f.offsets)
	b, start := container.Begin(b, bloomery.KindQuotient, layout, f.h, params, size)
	b = wire.AppendUint64s(b, f.occupieds)
	b = wire.AppendUint64s(b, f.runends)
	b = wire.AppendUint64s(b, f.rems)
	b = append(b, f.offsets...)
	return container.Finish(b, start), nil
}

// MarshalBinary encodes the filter in the container format.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// UnmarshalBinary decodes an unkeyed filter into f.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := Decode(data, hashing.Expect{})
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Decode reads a filter encoded by AppendBinary. It validates every length
// before allocating and checks the run metadata for consistency, so a
// decoded filter cannot misbehave on any input.
func Decode(data []byte, want hashing.Expect) (*Filter, error) {
	hdr, h, params, payload, err := container.Open(data, bloomery.KindQuotient, want)
	if err != nil {
		return nil, fmt.Errorf("quotient: %w", err)
	}
	if hdr.Layout != layout {
		return nil, fmt.Errorf("quotient: layout %d: %w", hdr.Layout, bloomery.ErrUnsupportedVersion)
	}
	pr := wire.NewReader(params, "quotient: params")
	q, r := uint(pr.U8("q")), uint(pr.U8("r"))
	doublings, resizes := int(pr.U8("doublings")), int(pr.U8("resizes"))
	capacity := pr.U64("capacity")
	design := pr.F64("design FPR")
	n := pr.U64("count")
	pr.Done()
	if err := pr.Err(); err != nil {
		return nil, err
	}
	if q < 6 || q > 40 || r < 1 || r > 58 || q+r > 64 || capacity == 0 || capacity > 1<<40 ||
		!(design > 0 && design <= 1) || math.IsNaN(design) {
		return nil, fmt.Errorf("quotient: params q=%d r=%d capacity=%d fpr=%v out of range: %w", q, r, capacity, design, bloomery.ErrCorrupt)
	}
	nslots := uint64(1) << q
	xslots, words, remWords := geometry(q, r)
	if want := 8*(2*words+remWords) + words; uint64(len(payload)) != want {
		return nil, fmt.Errorf("quotient: payload is %d bytes, q=%d r=%d needs %d: %w", len(payload), q, r, want, bloomery.ErrCorrupt)
	}
	rd := wire.NewReader(payload, "quotient: payload")
	f := &Filter{
		q: q, r: r, p: q + r, nslots: nslots, xslots: xslots,
		occupieds: rd.Uint64s(words, "occupieds"),
		runends:   rd.Uint64s(words, "runends"),
		rems:      rd.Uint64s(remWords, "remainders"),
		n:         int(n), capacity: int(capacity), design: design,
		doublings: doublings, resizes: resizes, h: h,
	}
	f.offsets = append([]uint8(nil), rd.Bytes(words, "offsets")...)
	rd.Done()
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// validate checks that the metadata describes well-formed runs: occupied
// quotients only among home slots, one run end per occupied quotient, runs
// in order within the table, offsets that match, and the stored count.
func (f *Filter) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("quotient: "+format+": %w", append(args, bloomery.ErrCorrupt)...)
	}
	for w := f.nslots / 64; w < uint64(len(f.occupieds)); w++ {
		if f.occupieds[w] != 0 {
			return bad("occupied bit beyond the home slots")
		}
	}
	var cursor uint64
	var count uint64
	runEndWords := 0
	for _, w := range f.runends {
		runEndWords += bits.OnesCount64(w)
	}
	occ := 0
	for w, word := range f.occupieds {
		for word != 0 {
			x := uint64(w)<<6 + uint64(bits.TrailingZeros64(word))
			word &= word - 1
			occ++
			i := max(cursor, x)
			// Slots between cursor and x must hold no run end.
			for ; ; i++ {
				if i >= f.xslots {
					return bad("run of quotient %d runs past the table", x)
				}
				count++
				if getBit(f.runends, i) {
					break
				}
			}
			cursor = i + 1
		}
	}
	if occ != runEndWords {
		return bad("%d occupied quotients but %d run ends", occ, runEndWords)
	}
	if count != uint64(f.n) {
		return bad("runs hold %d fingerprints, header says %d", count, f.n)
	}
	// Remainders within each run must be sorted.
	var prevQ, prevR uint64 = ^uint64(0), 0
	sorted := true
	f.walk(func(x, rm uint64) bool {
		if x == prevQ && rm < prevR {
			sorted = false
			return false
		}
		prevQ, prevR = x, rm
		return true
	})
	if !sorted {
		return bad("unsorted run")
	}
	for b := range f.offsets {
		if b == 0 {
			if f.offsets[0] != 0 {
				return bad("offset of block 0 is %d", f.offsets[0])
			}
			continue
		}
		d := f.blockStartSlow(uint64(b)) - uint64(b)<<6
		if f.offsets[b] != uint8(min(d, 255)) {
			return bad("offset of block %d is %d, runs say %d", b, f.offsets[b], d)
		}
	}
	return nil
}
