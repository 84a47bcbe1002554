package bloomery

import "errors"

// Sentinel errors shared by every family. Family packages wrap them with
// context ("bloom: decode: ...: %w"), so callers test with [errors.Is].
var (
	// ErrCorrupt reports bytes that are not a valid encoding: a bad magic,
	// a checksum mismatch, a truncated input, or lengths that disagree.
	ErrCorrupt = errors.New("bloomery: corrupt data")

	// ErrUnsupportedVersion reports a container format version, or a
	// family layout version, that this build does not know how to read.
	ErrUnsupportedVersion = errors.New("bloomery: unsupported format version")

	// ErrUnknownKind reports a family kind byte or name that this build
	// does not know.
	ErrUnknownKind = errors.New("bloomery: unknown filter kind")

	// ErrKindMismatch reports a container that holds a different family
	// than the decoder that was asked to read it.
	ErrKindMismatch = errors.New("bloomery: filter kind mismatch")

	// ErrIncompatible reports two filters, or a filter and a caller's
	// expectation, that differ in size, probe count, hash function, seed
	// or key, so that merging them or querying with the expected hash would
	// give wrong answers.
	ErrIncompatible = errors.New("bloomery: incompatible filters")

	// ErrKeyRequired reports a filter persisted with keyed (SipHash)
	// hashing that is being loaded without its secret key.
	ErrKeyRequired = errors.New("bloomery: filter uses keyed hashing; key required")

	// ErrInvalidParams reports parameters that cannot describe a filter
	// (zero capacity, an FPR outside (0, 1), an absurd size...).
	ErrInvalidParams = errors.New("bloomery: invalid parameters")

	// ErrFull reports an insert that a filter could not accept. A filter
	// that returns ErrFull is left exactly as it was before the call.
	ErrFull = errors.New("bloomery: filter is full")

	// ErrBuildFailed reports a static filter construction that did not
	// succeed within its bounded number of attempts.
	ErrBuildFailed = errors.New("bloomery: construction failed")
)
