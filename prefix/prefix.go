// Package prefix filters key prefixes as well as whole keys, in one
// filter, so that a seek or scan confined to one prefix (all rows of one
// user, all versions of one object) can skip a file or block whose filter
// rejects the prefix (the RocksDB prefix Bloom model).
//
// # Entries
//
// A caller-supplied [Extractor] maps a key to its prefix (Transform) and
// says which keys have one (InDomain). Add puts up to two entries into the
// wrapped filter, which can be any bloomery.Adder (a Bloom, blocked Bloom,
// cuckoo or scalable filter...):
//
//   - the whole key's hash (unless Params.PrefixOnly), for point lookups;
//   - for in-domain keys, the prefix's hash, remixed (hashing.Remix with a
//     fixed domain constant, a bijection) so that a prefix and a whole key
//     with the same bytes are different entries.
//
// Size the wrapped filter for the number of keys plus the number of
// distinct prefixes. Add skips a prefix equal to the previous Add's prefix,
// so inserting sorted keys costs about one probe sequence per key.
//
// # When a prefix skip is sound
//
// "The filter rejects prefix p" proves that no added in-domain key has
// Transform(key) = p; nothing more. So:
//
//  1. The reader must use the extractor the filter was built with. A
//     different extractor (another length, another delimiter) maps keys to
//     prefixes that were never added, and skipping on its answers loses
//     rows. [Descriptor] records the extractor's Name with the filter, and
//     [Open] refuses a mismatch with bloomery.ErrIncompatible.
//  2. Keys outside the domain have no prefix entry. A query about a key
//     that is not InDomain must bypass the prefix check
//     ([Filter.MayContainPrefixOf] answers true for them).
//  3. A range query may skip on the prefix only if every key the range can
//     contain has that same prefix: the seek is bounded to one prefix.
//     [Filter.SeekMayMatch] checks that for extractors that are
//     prefix-closed ([PrefixClosed]: every key that starts with a prefix
//     p = Transform(x) is in the domain and has Transform(key) = p), by
//     requiring the upper bound to lie at or below the first key after all
//     keys starting with p; otherwise it answers true (no skip).
//
// # Concurrency
//
// Contains* may run concurrently with each other when the wrapped filter
// allows it; Add needs exclusive access (it also keeps the last prefix).
package prefix

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// Extractor maps keys to prefixes. Its methods must be pure functions of
// their input, safe for concurrent use, and Transform must not allocate on
// the query path (returning a sub-slice of the key is ideal).
type Extractor interface {
	// Name identifies the extractor and its parameters ("fixed:8"); it
	// is recorded with the filter, so it must change whenever the
	// mapping changes.
	Name() string
	// InDomain reports whether key has a prefix.
	InDomain(key []byte) bool
	// Transform returns key's prefix. Only called for in-domain keys.
	Transform(key []byte) []byte
}

// PrefixClosed is implemented by extractors whose prefixes are literal
// byte prefixes of the key with the property that every key starting with
// a prefix p = Transform(x) is in the domain and has Transform(key) = p.
// SeekMayMatch relies on it.
type PrefixClosed interface {
	Extractor
	PrefixClosed() bool
}

// Fixed is the extractor of the first N bytes (a user id, a table id);
// keys shorter than N are out of domain. It is prefix-closed.
type Fixed int

// Name returns "fixed:N".
func (n Fixed) Name() string { return "fixed:" + strconv.Itoa(int(n)) }

// InDomain reports len(key) >= N.
func (n Fixed) InDomain(key []byte) bool { return len(key) >= int(n) }

// Transform returns key[:N].
func (n Fixed) Transform(key []byte) []byte { return key[:n] }

// PrefixClosed returns true.
func (Fixed) PrefixClosed() bool { return true }

// Delimited is the extractor of everything up to and including the first
// occurrence of the byte D ("user42:" of "user42:cart:7"); keys without D
// are out of domain. It is prefix-closed: the only D in a prefix is its
// last byte.
type Delimited byte

// Name returns "delim:0xNN".
func (d Delimited) Name() string { return fmt.Sprintf("delim:%#02x", byte(d)) }

// InDomain reports whether key contains D.
func (d Delimited) InDomain(key []byte) bool { return bytes.IndexByte(key, byte(d)) >= 0 }

// Transform returns key up to and including the first D.
func (d Delimited) Transform(key []byte) []byte { return key[:bytes.IndexByte(key, byte(d))+1] }

// PrefixClosed returns true.
func (Delimited) PrefixClosed() bool { return true }

// Params configures a prefix filter.
type Params struct {
	// Extractor maps keys to prefixes (required).
	Extractor Extractor
	// PrefixOnly adds only prefix entries (RocksDB's
	// whole_key_filtering=false): smaller, but point lookups can only be
	// answered by their prefix.
	PrefixOnly bool
}

// hasherOf is what every family offers besides bloomery.Adder.
type hasherOf interface {
	Hasher() hashing.Hasher
}

// prefixDomain separates prefix entries from whole-key entries.
const prefixDomain = 0x70726566_69780001 // "prefix" v1

func prefixHash(h uint64) uint64 { return hashing.Remix(h, prefixDomain) }

// Filter is a prefix filter over a wrapped filter.
type Filter struct {
	f        bloomery.Adder
	hs       hashing.Hasher
	ex       Extractor
	closed   bool
	only     bool
	last     uint64
	haveLast bool
}

var _ bloomery.Adder = (*Filter)(nil)

// New wraps f, which must be empty or hold only entries added through a
// prefix filter with the same Params, and must have a Hasher method (every
// Bloomery family has one).
func New(f bloomery.Adder, p Params) (*Filter, error) {
	if f == nil || p.Extractor == nil {
		return nil, fmt.Errorf("prefix: a filter and an extractor are required: %w", bloomery.ErrInvalidParams)
	}
	ho, ok := f.(hasherOf)
	if !ok {
		return nil, fmt.Errorf("prefix: %T has no Hasher method: %w", f, bloomery.ErrInvalidParams)
	}
	if strings.TrimSpace(p.Extractor.Name()) == "" || strings.ContainsAny(p.Extractor.Name(), ";\n") {
		return nil, fmt.Errorf("prefix: extractor name %q must be non-empty without ';' or newlines: %w", p.Extractor.Name(), bloomery.ErrInvalidParams)
	}
	pf := &Filter{f: f, hs: ho.Hasher(), ex: p.Extractor, only: p.PrefixOnly}
	if pc, ok := p.Extractor.(PrefixClosed); ok {
		pf.closed = pc.PrefixClosed()
	}
	return pf, nil
}

// Descriptor is what must be stored with a prefix filter for a reader to
// use it soundly (RocksDB keeps the same in the table properties): the
// extractor's name and whether whole keys were added.
type Descriptor struct {
	Extractor  string
	PrefixOnly bool
}

// String returns "extractor=NAME;whole_keys=1" (or 0), the form
// ParseDescriptor reads.
func (d Descriptor) String() string {
	w := 1
	if d.PrefixOnly {
		w = 0
	}
	return fmt.Sprintf("extractor=%s;whole_keys=%d", d.Extractor, w)
}

// ParseDescriptor reads the String form. Errors wrap bloomery.ErrCorrupt.
func ParseDescriptor(s string) (Descriptor, error) {
	var d Descriptor
	name, rest, ok := strings.Cut(s, ";")
	ext, found := strings.CutPrefix(name, "extractor=")
	if !ok || !found || ext == "" {
		return d, fmt.Errorf("prefix: descriptor %q: %w", s, bloomery.ErrCorrupt)
	}
	d.Extractor = ext
	switch rest {
	case "whole_keys=1":
	case "whole_keys=0":
		d.PrefixOnly = true
	default:
		return d, fmt.Errorf("prefix: descriptor %q: %w", s, bloomery.ErrCorrupt)
	}
	return d, nil
}

// Descriptor returns the filter's descriptor.
func (p *Filter) Descriptor() Descriptor {
	return Descriptor{Extractor: p.ex.Name(), PrefixOnly: p.only}
}

// Open wraps a filter that was built (and perhaps persisted) by a prefix
// filter described by d, using the extractor ex. It fails with
// bloomery.ErrIncompatible when ex is not the extractor d names.
func Open(f bloomery.Adder, ex Extractor, d Descriptor) (*Filter, error) {
	if ex == nil || ex.Name() != d.Extractor {
		name := "<nil>"
		if ex != nil {
			name = ex.Name()
		}
		return nil, fmt.Errorf("prefix: filter was built with extractor %q, reader has %q: %w", d.Extractor, name, bloomery.ErrIncompatible)
	}
	return New(f, Params{Extractor: ex, PrefixOnly: d.PrefixOnly})
}

// Unwrap returns the wrapped filter (to persist it with AppendBinary).
func (p *Filter) Unwrap() bloomery.Adder { return p.f }

// Extractor returns the extractor.
func (p *Filter) Extractor() Extractor { return p.ex }

// Add inserts key's entries and reports whether any was new.
func (p *Filter) Add(key []byte) bool {
	added := false
	if !p.only {
		added = p.f.AddHash(p.hs.Sum64(key))
	}
	if p.ex.InDomain(key) {
		h := prefixHash(p.hs.Sum64(p.ex.Transform(key)))
		if !p.haveLast || h != p.last {
			added = p.f.AddHash(h) || added
			p.last, p.haveLast = h, true
		}
	}
	return added
}

// AddString is Add for a string key, without copying it.
func (p *Filter) AddString(key string) bool { return p.Add(stringBytes(key)) }

// AddHash adds a whole-key entry by its hash. It cannot add the prefix
// (the key is needed for that), so it fails for a PrefixOnly filter by
// reporting false and adding nothing; use Add.
func (p *Filter) AddHash(h uint64) bool {
	if p.only {
		return false
	}
	return p.f.AddHash(h)
}

// AddPrefix adds a prefix entry directly (p as returned by Transform).
func (p *Filter) AddPrefix(prefix []byte) bool {
	return p.f.AddHash(prefixHash(p.hs.Sum64(prefix)))
}

// Contains answers a point lookup. With whole-key entries it asks for the
// whole key; a PrefixOnly filter asks for the key's prefix and must answer
// true for out-of-domain keys.
func (p *Filter) Contains(key []byte) bool {
	if !p.only {
		return p.f.ContainsHash(p.hs.Sum64(key))
	}
	return p.MayContainPrefixOf(key)
}

// ContainsString is Contains for a string key, without copying it.
func (p *Filter) ContainsString(key string) bool { return p.Contains(stringBytes(key)) }

// stringBytes views s as a byte slice without copying. The slice is only
// read (by the hasher and the extractor, whose contract is to be pure).
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ContainsHash asks for a whole-key entry by hash; a PrefixOnly filter
// has none and answers true.
func (p *Filter) ContainsHash(h uint64) bool {
	if p.only {
		return true
	}
	return p.f.ContainsHash(h)
}

// ContainsPrefix reports whether any added in-domain key may have the
// prefix (as returned by Transform). False is a proof that none has.
func (p *Filter) ContainsPrefix(prefix []byte) bool {
	return p.f.ContainsHash(prefixHash(p.hs.Sum64(prefix)))
}

// MayContainPrefixOf reports whether any added key may share key's prefix;
// for an out-of-domain key it answers true (no prefix, no skip).
func (p *Filter) MayContainPrefixOf(key []byte) bool {
	if !p.ex.InDomain(key) {
		return true
	}
	return p.ContainsPrefix(p.ex.Transform(key))
}

// SeekMayMatch reports whether the range [lower, upper) may hold an added
// key, answering false only when that is provable from one prefix entry:
// the extractor is prefix-closed, lower is in the domain, and upper is at
// or below the first key after every key that starts with
// p = Transform(lower) (an empty upper means unbounded: no skip).
func (p *Filter) SeekMayMatch(lower, upper []byte) bool {
	if !p.closed || !p.ex.InDomain(lower) || len(upper) == 0 {
		return true
	}
	pre := p.ex.Transform(lower)
	if !bytes.HasPrefix(lower, pre) {
		return true // not a literal prefix: the extractor lied
	}
	if succ := successor(pre); succ != nil && bytes.Compare(upper, succ) > 0 {
		return true // the range runs past the prefix
	}
	return p.ContainsPrefix(pre)
}

// successor returns the smallest byte string greater than every string
// that starts with p, or nil when there is none (p is all 0xff).
func successor(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			s := append([]byte(nil), p[:i+1]...)
			s[i]++
			return s
		}
	}
	return nil
}

// Kind returns the wrapped filter's kind.
func (p *Filter) Kind() bloomery.Kind { return p.f.Kind() }

// Len returns the wrapped filter's Len: entries, not keys.
func (p *Filter) Len() int { return p.f.Len() }

// Cap returns the wrapped filter's capacity in entries.
func (p *Filter) Cap() int { return p.f.Cap() }

// SizeBytes returns the wrapped filter's size.
func (p *Filter) SizeBytes() int { return p.f.SizeBytes() }

// EstimatedFPR returns the wrapped filter's estimate (per entry probe).
func (p *Filter) EstimatedFPR() float64 { return p.f.EstimatedFPR() }

// AppendBinary appends the wrapped filter; store Descriptor().String()
// with it and reopen with Open.
func (p *Filter) AppendBinary(b []byte) ([]byte, error) { return p.f.AppendBinary(b) }

// MarshalBinary returns the wrapped filter's encoding (see AppendBinary).
func (p *Filter) MarshalBinary() ([]byte, error) { return p.f.MarshalBinary() }

// Stats returns the wrapped filter's Stats with "prefix_only" (0/1) in
// Extra.
func (p *Filter) Stats() bloomery.Stats {
	s := p.f.Stats()
	v := 0.0
	if p.only {
		v = 1
	}
	s.Extra = append(s.Extra, bloomery.Stat{Name: "prefix_only", Value: v})
	return s
}
