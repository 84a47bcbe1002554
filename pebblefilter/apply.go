package pebblefilter

import (
	"fmt"

	"github.com/bloomery/bloomery"
	"github.com/cockroachdb/pebble/v2"
)

// NumLevels is the number of LSM levels Pebble has (L0 to L6).
const NumLevels = 7

// Family selects a filter format for a level.
type Family uint8

// The families. The zero Family is no filter.
const (
	None Family = iota
	BlockedBloom
	Ribbon
)

// String returns the family's short name.
func (f Family) String() string {
	switch f {
	case None:
		return "none"
	case BlockedBloom:
		return "bloom"
	case Ribbon:
		return "ribbon"
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// Spec describes one level's filter. The zero Spec is no filter.
type Spec struct {
	Family Family
	// BitsPerKey is the blocked Bloom size (Family BlockedBloom).
	BitsPerKey float64
	// FPR is the Ribbon target (Family Ribbon).
	FPR float64
}

// Bloom returns the Spec of a blocked Bloom filter at bitsPerKey.
func Bloom(bitsPerKey float64) Spec { return Spec{Family: BlockedBloom, BitsPerKey: bitsPerKey} }

// RibbonFPR returns the Spec of a Ribbon filter with target fpr.
func RibbonFPR(fpr float64) Spec { return Spec{Family: Ribbon, FPR: fpr} }

// String describes the spec ("bloom 10.00", "ribbon 0.957%", "none").
func (s Spec) String() string {
	switch s.Family {
	case BlockedBloom:
		return fmt.Sprintf("bloom %.2f", s.BitsPerKey)
	case Ribbon:
		return fmt.Sprintf("ribbon %.3g%%", 100*s.FPR)
	}
	return s.Family.String()
}

// Policy returns the Pebble policy of s: pebble.NoFilterPolicy for None.
func (s Spec) Policy() (pebble.FilterPolicy, error) {
	switch s.Family {
	case None:
		return pebble.NoFilterPolicy, nil
	case BlockedBloom:
		return NewBloom(s.BitsPerKey)
	case Ribbon:
		return NewRibbon(s.FPR)
	}
	return nil, fmt.Errorf("pebblefilter: unknown family %d: %w", s.Family, bloomery.ErrInvalidParams)
}

// Apply sets opts.Levels[i].FilterPolicy from perLevel[i] for every level
// (a zero Spec sets pebble.NoFilterPolicy, so no level inherits a policy
// by accident) and registers every Bloomery policy name (Register). It
// validates all specs before changing opts: on error opts is unchanged.
// Call it before pebble.Open.
func Apply(opts *pebble.Options, perLevel [NumLevels]Spec) error {
	var ps [NumLevels]pebble.FilterPolicy
	for i, s := range perLevel {
		p, err := s.Policy()
		if err != nil {
			return fmt.Errorf("pebblefilter: level %d: %w", i, err)
		}
		ps[i] = p
	}
	for i := range ps {
		opts.Levels[i].FilterPolicy = ps[i]
	}
	Register(opts)
	return nil
}

// Register adds a reader for every Bloomery format to opts.Filters
// without touching the per-level policies: the read-only path for a
// database some of whose tables carry Bloomery filters (after switching
// to another policy, or before switching to Bloomery). Without it Pebble
// silently ignores those filters. An entry already registered under a
// Bloomery name is kept (Pebble's own rule: the first registration wins;
// any instance reads every filter of its format, so which one does not
// matter).
func Register(opts *pebble.Options) {
	if opts.Filters == nil {
		opts.Filters = make(map[string]pebble.FilterPolicy)
	}
	for name, p := range Filters() {
		if _, ok := opts.Filters[name]; !ok {
			opts.Filters[name] = p
		}
	}
}

// Default write parameters of the policies Filters and NewFilterPolicy
// return (they matter only if Pebble writes with them).
const (
	DefaultBitsPerKey = 10
	DefaultFPR        = 0.01
)

// Filters returns a new map from each Bloomery policy name to a policy
// that reads its format (and writes with DefaultBitsPerKey or DefaultFPR).
func Filters() map[string]pebble.FilterPolicy {
	b, _ := NewBloom(DefaultBitsPerKey)
	r, _ := NewRibbon(DefaultFPR)
	return map[string]pebble.FilterPolicy{BloomName: b, RibbonName: r}
}

// NewFilterPolicy returns the Bloomery policy named name, for
// pebble.ParseHooks.NewFilterPolicy and the pebble tool when they read an
// OPTIONS file. An unknown name gives an error wrapping
// bloomery.ErrInvalidParams.
func NewFilterPolicy(name string) (pebble.FilterPolicy, error) {
	if p, ok := Filters()[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("pebblefilter: unknown filter policy %q: %w", name, bloomery.ErrInvalidParams)
}
