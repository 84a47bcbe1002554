// Package codec reads any Bloomery filter from the container format
// (docs/format.md) and holds the catalog of families: for each Kind, how to
// plan it, create or build it, decode it and merge two of them. The CLI and
// the server reach every family through this catalog, so adding a family is
// one file here (codec/<family>.go) that calls Register from init.
package codec

import (
	"fmt"
	"slices"
	"sync"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/container"
)

// Mutability says what a family allows after construction.
type Mutability uint8

const (
	// Static filters are built once from the complete key set.
	Static Mutability = iota
	// Insert filters accept adds.
	Insert
	// InsertDelete filters accept adds and deletes.
	InsertDelete
)

func (m Mutability) String() string {
	switch m {
	case Static:
		return "static"
	case Insert:
		return "add"
	case InsertDelete:
		return "add+delete"
	}
	return "?"
}

// Plan is a family's sizing for n keys at a target FPR.
type Plan struct {
	Kind       bloomery.Kind
	BitsPerKey float64
	Bytes      int64
	// HashFuncs is the probe count k (Bloom families), FingerprintBits the
	// stored fingerprint width (fingerprint families); the other is 0.
	HashFuncs       int
	FingerprintBits int
	// FPR is the expected false-positive rate at n keys.
	FPR float64
	// CacheLines is the number of distinct cache lines a negative query
	// touches (on average, for families with early exit).
	CacheLines float64
	Mutability Mutability
	// Note is a short remark shown by `bloomery plan` ("fixed FPR 2^-8").
	Note string
}

// Family is one catalog entry. Decode and Plan are always set; a dynamic
// family sets New, a static family sets Build; Merge is nil for families
// that cannot merge.
type Family struct {
	Kind       bloomery.Kind
	Mutability Mutability
	// Description is a one-line summary for help texts.
	Description string
	// Plan sizes the family for n keys at target FPR p.
	Plan func(n int, p float64) (Plan, error)
	// Decode reads one encoded filter of this family.
	Decode func(data []byte, want hashing.Expect) (bloomery.Filter, error)
	// New returns an empty filter designed for n keys at FPR p.
	New func(n int, p float64, h hashing.Hasher) (bloomery.Adder, error)
	// NewAtLoad, set by families whose table has a tunable load factor
	// (cuckoo), is New with a table that n keys fill to load, in (0, 1):
	// a lower load than the family's default takes more space and makes
	// inserts faster. It returns an error wrapping
	// bloomery.ErrInvalidParams for a load the family does not accept.
	NewAtLoad func(n int, p, load float64, h hashing.Hasher) (bloomery.Adder, error)
	// PlanAtLoad, set with NewAtLoad, is Plan for the filter NewAtLoad
	// makes, with the same error for a load the family does not accept.
	PlanAtLoad func(n int, p, load float64) (Plan, error)
	// Build builds a static filter from key hashes made with h
	// (duplicates allowed) for a target FPR p.
	Build func(hashes []uint64, p float64, h hashing.Hasher) (bloomery.Filter, error)
	// Merge returns the union of two filters of this family, or an error
	// wrapping bloomery.ErrIncompatible. Neither input is modified.
	Merge func(a, b bloomery.Filter) (bloomery.Filter, error)
}

var (
	mu       sync.RWMutex
	families = map[bloomery.Kind]Family{}
)

// Register adds a family to the catalog. It is called from init functions
// in this package only, and panics on a duplicate or malformed entry (a
// programming error).
func Register(f Family) {
	mu.Lock()
	defer mu.Unlock()
	if !f.Kind.Valid() || f.Decode == nil || f.Plan == nil || (f.New == nil) == (f.Build == nil) || (f.NewAtLoad != nil && f.New == nil) || (f.NewAtLoad == nil) != (f.PlanAtLoad == nil) {
		panic(fmt.Sprintf("codec: malformed family %v", f.Kind))
	}
	if _, dup := families[f.Kind]; dup {
		panic(fmt.Sprintf("codec: family %v registered twice", f.Kind))
	}
	families[f.Kind] = f
}

// Lookup returns the catalog entry for k.
func Lookup(k bloomery.Kind) (Family, error) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := families[k]
	if !ok {
		return Family{}, fmt.Errorf("codec: %v: %w", k, bloomery.ErrUnknownKind)
	}
	return f, nil
}

// Families returns every registered family in Kind order.
func Families() []Family {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Family, 0, len(families))
	for _, f := range families {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Family) int { return int(a.Kind) - int(b.Kind) })
	return out
}

// Header is the decoded container header of a filter.
type Header = container.Header

// ReadHeader decodes and checks the envelope of data (magic, version,
// lengths, checksum) without decoding the family payload.
func ReadHeader(data []byte) (Header, error) {
	h, _, _, err := container.Parse(data)
	return h, err
}

// Decode reads a filter of any registered family. want says which hash the
// caller expects (see hashing.Expect); the zero value accepts any unkeyed
// filter and refuses keyed ones with bloomery.ErrKeyRequired.
func Decode(data []byte, want hashing.Expect) (bloomery.Filter, error) {
	h, err := container.Peek(data)
	if err != nil {
		return nil, err
	}
	f, err := Lookup(h.Kind)
	if err != nil {
		return nil, err
	}
	return f.Decode(data, want)
}

// Merge returns the union of filters, which must all be of one mergeable
// family with identical parameters and hashing; otherwise the error wraps
// bloomery.ErrIncompatible and no input is modified.
func Merge(filters ...bloomery.Filter) (bloomery.Filter, error) {
	if len(filters) == 0 {
		return nil, fmt.Errorf("codec: merge of no filters: %w", bloomery.ErrInvalidParams)
	}
	k := filters[0].Kind()
	fam, err := Lookup(k)
	if err != nil {
		return nil, err
	}
	if fam.Merge == nil {
		return nil, fmt.Errorf("codec: %v filters cannot be merged: %w", k, bloomery.ErrIncompatible)
	}
	out := filters[0]
	for i, g := range filters[1:] {
		if g.Kind() != k {
			return nil, fmt.Errorf("codec: input %d is %v, input 1 is %v: %w", i+2, g.Kind(), k, bloomery.ErrIncompatible)
		}
		out, err = fam.Merge(out, g)
		if err != nil {
			return nil, fmt.Errorf("codec: merge input %d: %w", i+2, err)
		}
	}
	return out, nil
}
