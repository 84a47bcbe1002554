package bloomery

import (
	"fmt"
	"math"
	"strings"
)

// Kind names a filter family. Its numeric value is written in the container
// header (docs/format.md) and its name is used by the CLI and the server, so
// neither may ever change once released.
type Kind uint8

// The families. Values are persisted; append only.
const (
	KindInvalid  Kind = 0
	KindBloom    Kind = 1  // standard Bloom, package bloom (Filter)
	KindBlocked  Kind = 2  // cache-line blocked Bloom, package bloom (Blocked)
	KindCounting Kind = 3  // counting Bloom, package counting
	KindCuckoo   Kind = 4  // cuckoo filter, package cuckoo
	KindQuotient Kind = 5  // rank-and-select quotient filter, package quotient
	KindRibbon   Kind = 6  // standard 128-bit Ribbon, package ribbon
	KindXor8     Kind = 7  // xor filter, 8-bit fingerprints, package xor
	KindFuse8    Kind = 8  // binary fuse, 3-wise, 8-bit, package fuse
	KindFuse16   Kind = 9  // binary fuse, 3-wise, 16-bit
	KindFuse8x4  Kind = 10 // binary fuse, 4-wise, 8-bit
	KindFuse16x4 Kind = 11 // binary fuse, 4-wise, 16-bit
	KindGCS      Kind = 12 // Golomb-coded set, package gcs
	KindSBBF     Kind = 13 // Parquet split-block Bloom, package sbbf
	KindScalable Kind = 14 // scalable Bloom, package scalable
	KindRotating Kind = 15 // time-rotating generations, package rotating
	// kindEnd is one past the last kind. (A bare "kindEnd" here would
	// repeat "Kind = 15" and silently make KindRotating invalid.)
	kindEnd = KindRotating + 1
)

var kindNames = [...]string{
	KindInvalid:  "invalid",
	KindBloom:    "bloom",
	KindBlocked:  "blocked",
	KindCounting: "counting",
	KindCuckoo:   "cuckoo",
	KindQuotient: "quotient",
	KindRibbon:   "ribbon",
	KindXor8:     "xor8",
	KindFuse8:    "fuse8",
	KindFuse16:   "fuse16",
	KindFuse8x4:  "fuse8-4",
	KindFuse16x4: "fuse16-4",
	KindGCS:      "gcs",
	KindSBBF:     "sbbf",
	KindScalable: "scalable",
	KindRotating: "rotating",
}

// String returns the kind's stable name ("bloom", "fuse8-4", ...), the same
// name the CLI, the server and the format documentation use.
func (k Kind) String() string {
	if k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k names a known family.
func (k Kind) Valid() bool { return k > KindInvalid && k < kindEnd }

// Kinds returns every known family kind in numeric order.
func Kinds() []Kind {
	ks := make([]Kind, 0, kindEnd-1)
	for k := KindBloom; k < kindEnd; k++ {
		ks = append(ks, k)
	}
	return ks
}

// ParseKind maps a kind name (case-insensitive) to its Kind. It returns an
// error wrapping ErrUnknownKind for a name it does not know.
func ParseKind(name string) (Kind, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for k := KindBloom; k < kindEnd; k++ {
		if kindNames[k] == n {
			return k, nil
		}
	}
	return KindInvalid, fmt.Errorf("%w: %q", ErrUnknownKind, name)
}

// Filter is what every family offers: a membership query that never answers
// false for a key that was added. A true answer means "maybe": the caller
// must confirm it against the authoritative data.
//
// Contains hashes the key with the filter's own hasher (its algorithm and
// seed, or its secret key); ContainsHash takes a hash that the caller already
// computed with the same hasher, so one hash can probe many filters.
type Filter interface {
	Kind() Kind
	Contains(key []byte) bool
	ContainsString(key string) bool
	ContainsHash(h uint64) bool
	// Len is the number of keys the filter holds (added, or built from).
	// For dynamic filters it counts adds that reported the key as new.
	Len() int
	// SizeBytes is the memory held by the filter's tables.
	SizeBytes() int
	// EstimatedFPR is the false-positive rate expected at the current
	// contents, computed from the actual fill where the family can.
	EstimatedFPR() float64
	// AppendBinary appends the filter in the container format.
	AppendBinary(b []byte) ([]byte, error)
	MarshalBinary() ([]byte, error)
	// Stats describes the filter for inspection and monitoring.
	Stats() Stats
}

// Adder is a filter that accepts keys after construction.
type Adder interface {
	Filter
	// Add inserts key and reports whether it was new: false means the
	// filter already claimed the key (it may be a false positive).
	Add(key []byte) bool
	AddString(key string) bool
	AddHash(h uint64) bool
	// Cap is the design capacity: the number of keys at which the filter
	// meets its design FPR.
	Cap() int
}

// Deleter is a filter that can remove keys. Deleting a key that was never
// added can remove another key's trace and cause false negatives; callers
// must delete only what they added.
type Deleter interface {
	Delete(key []byte) bool
	DeleteHash(h uint64) bool
}

// Counter is a filter that estimates how many times a key was added.
type Counter interface {
	Count(key []byte) int
	CountHash(h uint64) int
}

// BatchQuerier is a filter whose batch query overlaps memory misses.
// out must have len(out) >= len(hashes).
type BatchQuerier interface {
	ContainsBatch(hashes []uint64, out []bool)
}

// Stats is a snapshot of a filter's state. Fields that do not apply to a
// family are zero.
type Stats struct {
	Kind Kind
	// Len is the number of keys held; Cap the design capacity (static
	// filters: the number of keys they were built from).
	Len, Cap int
	// SizeBytes is the memory held by the filter's tables.
	SizeBytes int
	// BitsPerKey is SizeBytes*8 divided by Cap (or Len when Cap is zero).
	BitsPerKey float64
	// HashFuncs is the number of probes per key (Bloom families) and
	// FingerprintBits the stored fingerprint width (fingerprint families).
	HashFuncs, FingerprintBits int
	// FillRatio is the fraction of bits set (Bloom families) or of slots
	// used (fingerprint families).
	FillRatio float64
	// DesignFPR is the false-positive rate the filter was sized for;
	// EstimatedFPR the rate expected at the current fill.
	DesignFPR, EstimatedFPR float64
	// Overfilled is true once EstimatedFPR exceeds twice DesignFPR.
	Overfilled bool
	// Extra holds family-specific figures (e.g. "saturated" counters,
	// "links" of a scalable filter), in a stable order of insertion.
	Extra []Stat
}

// Stat is one named family-specific figure.
type Stat struct {
	Name  string
	Value float64
}

// MaxTableBytes is the largest table a filter's constructor allocates in
// one piece: 1 TiB, or 1 GiB where int has 32 bits (a 32-bit process has
// 2-4 GiB of address space in all). A constructor asked for more returns
// an error wrapping ErrInvalidParams instead of allocating.
const MaxTableBytes = min(1<<40, math.MaxInt/2+1)

// CheckTableBytes returns an error wrapping ErrInvalidParams, naming the
// caller's context, when a table of n bytes exceeds MaxTableBytes.
func CheckTableBytes(ctx string, n uint64) error {
	if n > MaxTableBytes {
		return fmt.Errorf("%s: a %d-byte table exceeds the %d-byte limit: %w", ctx, n, uint64(MaxTableBytes), ErrInvalidParams)
	}
	return nil
}

// OverfillFactor is the multiple of the design FPR beyond which a filter
// reports itself overfilled.
const OverfillFactor = 2.0

// IsOverfilled reports whether an estimated FPR exceeds OverfillFactor
// times the design FPR.
func IsOverfilled(estimated, design float64) bool {
	return design > 0 && estimated > OverfillFactor*design
}
