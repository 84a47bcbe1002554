package redisfilter

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
)

// FormatVersion is the version of the key layout and metadata this package
// writes and reads: segment keys of 64-byte blocks in the byte order of the
// container payload (see the package doc), probes as bloom.BlockedLocate.
// A different layout gets a new number; Open refuses versions it does not
// know with an error wrapping bloomery.ErrUnsupportedVersion.
const FormatVersion = 1

// Segment sizing.
const (
	// BlockBytes is the size of one block, the unit of every read.
	BlockBytes = bloom.BlockBits / 8
	// DefaultMaxSegmentBytes caps the default segment size: big enough
	// that a 1 TiB filter needs 131072 keys, small enough that moving a
	// segment between cluster nodes (MIGRATE blocks both nodes while it
	// copies the key) stays short.
	DefaultMaxSegmentBytes = 8 << 20
	// DefaultMinSegments is the number of segments a filter is split into
	// when it is small enough (segments are never smaller than one block),
	// so that even a small filter spreads over every node of a cluster.
	DefaultMinSegments = 64
	// MaxSegmentBytes bounds Params.SegmentBytes, well below Redis's 512 MB
	// string limit (proto-max-bulk-len).
	MaxSegmentBytes = 256 << 20
)

// Errors of this package, besides the bloomery sentinels.
var (
	// ErrNotFound reports an Open of a filter whose metadata key does not
	// exist.
	ErrNotFound = errors.New("redisfilter: filter not found")
	// ErrExists reports an Import into a name that already holds a filter.
	ErrExists = errors.New("redisfilter: filter already exists")
	// ErrStore wraps every failure of the store itself (a node down, a
	// timeout, a refused command): the operation's answer is unknown, and
	// a query that fails is never reported as "absent".
	ErrStore = errors.New("redisfilter: store error")
)

// Params describes a filter to create or to open.
//
// Capacity and exactly one of FPR and BitsPerKey size the filter as
// bloom.NewBlocked does (same blocks and k, so the bits match an in-process
// bloom.Blocked built with the same Params). For Open, a zero Capacity
// accepts any size; Hasher is always checked.
type Params struct {
	Capacity   int
	FPR        float64
	BitsPerKey float64
	HashFuncs  int
	// Hasher hashes keys; the zero value is XXH3 with seed 0. A keyed
	// (SipHash) filter records only the key's fingerprint in Redis; every
	// client must supply the key.
	Hasher hashing.Hasher
	// SegmentBytes is the size of one segment key, a multiple of 64 in
	// [64, MaxSegmentBytes]; 0 chooses ceil(size/DefaultMinSegments)
	// rounded to whole blocks, capped at DefaultMaxSegmentBytes.
	SegmentBytes int64
	// KeyPrefix precedes every key of the filter; "" means "bf:". It must
	// not contain braces (the hash tag follows it).
	KeyPrefix string
}

// Meta is a filter's persisted description, stored as a hash beside the
// data (field names in parentheses). All fields but Count are immutable:
// a filter's parameters never change; a different size is a new name.
type Meta struct {
	Format        int         // format version (format)
	Blocks        uint64      // 512-bit blocks (blocks)
	K             int         // probes per key (k)
	Alg           hashing.Alg // hash algorithm (hash)
	Seed          uint64      // seed, or key fingerprint for SipHash (seed)
	SegmentBlocks uint64      // blocks per segment key (segment_blocks)
	Segments      uint64      // number of segment keys (segments)
	Capacity      int         // design number of keys (capacity)
	DesignFPR     float64     // FPR at Capacity keys (design_fpr)
	Count         int         // adds reported new, maintained by the writers (count)
}

// Bytes returns the size of the bit array.
func (m Meta) Bytes() uint64 { return m.Blocks * BlockBytes }

// diff reports the first immutable field in which m and o differ.
func (m Meta) diff(o Meta) string {
	switch {
	case m.Format != o.Format:
		return fmt.Sprintf("format %d vs %d", m.Format, o.Format)
	case m.Blocks != o.Blocks:
		return fmt.Sprintf("%d vs %d blocks", m.Blocks, o.Blocks)
	case m.K != o.K:
		return fmt.Sprintf("k=%d vs k=%d", m.K, o.K)
	case m.Alg != o.Alg || m.Seed != o.Seed:
		return fmt.Sprintf("hash %s seed %#x vs %s seed %#x", m.Alg, m.Seed, o.Alg, o.Seed)
	case m.SegmentBlocks != o.SegmentBlocks || m.Segments != o.Segments:
		return fmt.Sprintf("%d segments of %d blocks vs %d of %d", m.Segments, m.SegmentBlocks, o.Segments, o.SegmentBlocks)
	case m.Capacity != o.Capacity:
		return fmt.Sprintf("capacity %d vs %d", m.Capacity, o.Capacity)
	case m.DesignFPR != o.DesignFPR:
		return fmt.Sprintf("design FPR %v vs %v", m.DesignFPR, o.DesignFPR)
	}
	return ""
}

// layout computes the metadata for p.
func layout(p Params) (Meta, error) {
	blocks, k, err := bloom.BlockedSize(bloom.Params{
		Capacity: p.Capacity, FPR: p.FPR, BitsPerKey: p.BitsPerKey, HashFuncs: p.HashFuncs, Hasher: p.Hasher,
	})
	if err != nil {
		return Meta{}, fmt.Errorf("redisfilter: %w", err)
	}
	return layoutFor(blocks, k, p.Capacity, 0, p.Hasher, p.SegmentBytes)
}

// layoutFor computes the metadata of a filter of the given shape. A zero
// design is computed as bloom.NewBlocked does.
func layoutFor(blocks uint64, k, capacity int, design float64, h hashing.Hasher, segmentBytes int64) (Meta, error) {
	var segBlocks uint64
	switch {
	case segmentBytes == 0:
		segBlocks = min(max(1, (blocks+DefaultMinSegments-1)/DefaultMinSegments), DefaultMaxSegmentBytes/BlockBytes)
	case segmentBytes < BlockBytes || segmentBytes > MaxSegmentBytes || segmentBytes%BlockBytes != 0:
		return Meta{}, fmt.Errorf("redisfilter: segment size %d is not a multiple of %d in [%d, %d]: %w",
			segmentBytes, BlockBytes, BlockBytes, MaxSegmentBytes, bloomery.ErrInvalidParams)
	default:
		segBlocks = uint64(segmentBytes) / BlockBytes
	}
	if design == 0 {
		design = fpmath.BlockedFPR(float64(blocks*bloom.BlockBits), float64(capacity), k, bloom.BlockBits)
	}
	m := Meta{
		Format:        FormatVersion,
		Blocks:        blocks,
		K:             k,
		Alg:           h.Alg(),
		Seed:          h.Seed(),
		SegmentBlocks: segBlocks,
		Segments:      (blocks + segBlocks - 1) / segBlocks,
		Capacity:      capacity,
		DesignFPR:     design,
	}
	return m, m.validate()
}

// validate checks the invariants of a metadata record (read from the
// store, so possibly written by anyone).
func (m Meta) validate() error {
	switch {
	case m.Format != FormatVersion:
		return fmt.Errorf("redisfilter: metadata format %d (this build reads %d): %w", m.Format, FormatVersion, bloomery.ErrUnsupportedVersion)
	case m.Blocks == 0 || m.Blocks > bloom.MaxBytes/BlockBytes:
		return fmt.Errorf("redisfilter: metadata: %d blocks outside [1, %d]: %w", m.Blocks, uint64(bloom.MaxBytes/BlockBytes), bloomery.ErrCorrupt)
	case m.K < 1 || m.K > bloom.MaxHashFuncs:
		return fmt.Errorf("redisfilter: metadata: k=%d outside [1, %d]: %w", m.K, bloom.MaxHashFuncs, bloomery.ErrCorrupt)
	case !m.Alg.Valid():
		return fmt.Errorf("redisfilter: metadata: hash algorithm %d: %w", m.Alg, bloomery.ErrUnsupportedVersion)
	case m.SegmentBlocks == 0 || m.SegmentBlocks > MaxSegmentBytes/BlockBytes:
		return fmt.Errorf("redisfilter: metadata: %d blocks per segment outside [1, %d]: %w", m.SegmentBlocks, MaxSegmentBytes/BlockBytes, bloomery.ErrCorrupt)
	case m.Segments != (m.Blocks+m.SegmentBlocks-1)/m.SegmentBlocks:
		return fmt.Errorf("redisfilter: metadata: %d segments cannot hold %d blocks of %d per segment: %w", m.Segments, m.Blocks, m.SegmentBlocks, bloomery.ErrCorrupt)
	case m.Capacity < 1:
		return fmt.Errorf("redisfilter: metadata: capacity %d: %w", m.Capacity, bloomery.ErrCorrupt)
	case !(m.DesignFPR > 0 && m.DesignFPR <= 1):
		return fmt.Errorf("redisfilter: metadata: design FPR %v: %w", m.DesignFPR, bloomery.ErrCorrupt)
	case m.Count < 0:
		return fmt.Errorf("redisfilter: metadata: count %d: %w", m.Count, bloomery.ErrCorrupt)
	}
	return nil
}

// fields returns the metadata as HSET arguments (field, value, ...).
func (m Meta) fields() []any {
	return []any{
		"format", strconv.Itoa(m.Format),
		"blocks", strconv.FormatUint(m.Blocks, 10),
		"k", strconv.Itoa(m.K),
		"hash", strconv.Itoa(int(m.Alg)),
		"seed", strconv.FormatUint(m.Seed, 10),
		"segment_blocks", strconv.FormatUint(m.SegmentBlocks, 10),
		"segments", strconv.FormatUint(m.Segments, 10),
		"capacity", strconv.Itoa(m.Capacity),
		"design_fpr", strconv.FormatFloat(m.DesignFPR, 'g', -1, 64),
		"count", strconv.Itoa(m.Count),
	}
}

// parseMeta reads a metadata hash. Missing or malformed fields wrap
// bloomery.ErrCorrupt; the result is validated.
func parseMeta(h map[string]string) (Meta, error) {
	var bad []string
	u := func(name string) uint64 {
		v, err := strconv.ParseUint(h[name], 10, 64)
		if err != nil {
			bad = append(bad, name)
		}
		return v
	}
	var m Meta
	m.Format = int(min(u("format"), math.MaxInt32))
	m.Blocks = u("blocks")
	m.K = int(min(u("k"), math.MaxInt32))
	m.Alg = hashing.Alg(min(u("hash"), 255))
	m.Seed = u("seed")
	m.SegmentBlocks = u("segment_blocks")
	m.Segments = u("segments")
	m.Capacity = int(min(u("capacity"), 1<<62))
	m.Count = int(min(u("count"), 1<<62))
	d, err := strconv.ParseFloat(h["design_fpr"], 64)
	if err != nil {
		bad = append(bad, "design_fpr")
	}
	m.DesignFPR = d
	if len(bad) > 0 {
		return Meta{}, fmt.Errorf("redisfilter: metadata: missing or malformed %s: %w", strings.Join(bad, ", "), bloomery.ErrCorrupt)
	}
	return m, m.validate()
}
