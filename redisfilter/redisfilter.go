// Package redisfilter keeps a blocked Bloom filter in Redis, Valkey or
// Redis Cluster, shared by every process that opens it by name: a fleet of
// application servers, crawler workers or consumers sees one set.
//
// # Layout
//
// The filter is exactly a bloom.Blocked: m = Blocks x 512 bits, a key's
// 64-bit hash h chooses block hashing.Reduce(h, Blocks) and k bits inside
// it (bloom.BlockedLocate, the code path of (*bloom.Blocked).AddHash). The
// blocks are split into Segments keys of SegmentBlocks blocks each:
//
//	<prefix>{<name>:seg:00017}   block b is in segment b/SegmentBlocks,
//	                             at byte offset 64*(b%SegmentBlocks)
//	<prefix>{<name>}:meta        hash: format, blocks, k, hash, seed,
//	                             segment_blocks, segments, capacity,
//	                             design_fpr, count
//
// Every segment has its own hash tag, so Redis Cluster places the segments
// on slots all over the cluster and one filter uses the memory and CPU of
// every master; no key comes near Redis's 512 MB string limit, so a filter
// may be far larger than 512 MB (up to bloom.MaxBytes).
//
// The bytes of a block are those of the container payload: word j of the
// block is bytes 8j..8j+7, little-endian. So bit b of a block (word b/64,
// bit b%64) is byte 8*(b/64)+(b%64)/8, and since Redis numbers the bits of
// a byte from the most significant, Redis bit offset
// 8*byte + 7 - b%8. Export and import are therefore plain byte copies
// (GETRANGE/SETRANGE) to and from the container format.
//
// # Operations and costs
//
//   - Contains: one GETRANGE of the key's 64-byte block, then the k bits
//     are tested locally. A missing or short segment reads as zeros.
//   - Add: one BITFIELD with a SET u1 per distinct probe bit. It is atomic
//     and returns the old bits, so "new" (some bit was clear) is exact
//     even with many concurrent writers.
//   - AddBatch, ContainsBatch: the same commands in one pipeline; the
//     cluster client splits it per node and runs the nodes in parallel,
//     so a batch costs about one round trip per node.
//   - Count: writers add the number of new keys of each call to the
//     metadata's count (one HINCRBY after the call, only when something
//     was new), so a single Add of a new key costs two round trips. Len
//     reads it. SetCountAdds(false) drops the HINCRBY (one round trip per
//     Add; Len then misses that handle's adds).
//
// Queries may be served by replicas (go-redis ClusterOptions.ReadOnly with
// RouteRandomly or RouteByLatency). Replication is asynchronous: a failover
// can lose the most recent adds, i.e. cause false negatives for them; use
// WAIT after critical adds if that matters.
//
// # Errors
//
// Every call takes a context, and each of its round trips is bounded by
// the handle's timeout (SetTimeout). A
// store failure (node down, timeout, CLUSTERDOWN...) is returned as an
// error wrapping ErrStore and the client's error: a query that could not
// be answered is never reported as "absent".
//
// # Concurrency
//
// A *Filter is safe for concurrent use by many goroutines; any number of
// processes may add and query the same filter at once.
package redisfilter

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/redis/go-redis/v9"
)

// DefaultTimeout bounds each round trip of a Filter (a single call, or one
// pipeline of a batch) unless SetTimeout changes it, and the metadata
// reads and writes of Create, Open and Attach.
const DefaultTimeout = 10 * time.Second

// maxPipeline bounds the commands sent in one pipeline by the batch calls;
// longer batches are sent in several pipelines, one after the other.
const maxPipeline = 4096

// Filter is a handle on a filter stored in Redis. Create it with Create,
// Open or Import.
type Filter struct {
	c       redis.UniversalClient
	name    string
	prefix  string
	metaKey string
	segKeys []string
	meta    Meta
	hasher  hashing.Hasher
	timeout time.Duration
	noCount bool
}

// createScript creates the metadata hash only if it does not exist, so
// that concurrent Creates agree on one set of parameters.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`)

func checkName(prefix, name string) (string, error) {
	if prefix == "" {
		prefix = "bf:"
	}
	switch {
	case name == "":
		return "", fmt.Errorf("redisfilter: empty filter name: %w", bloomery.ErrInvalidParams)
	case strings.ContainsAny(name, "{}"), strings.ContainsAny(prefix, "{}"):
		return "", fmt.Errorf("redisfilter: name %q or prefix %q contains a brace: %w", name, prefix, bloomery.ErrInvalidParams)
	}
	return prefix, nil
}

// SegmentKey returns the key of segment i of the named filter.
func SegmentKey(prefix, name string, i uint64) string {
	if prefix == "" {
		prefix = "bf:"
	}
	return fmt.Sprintf("%s{%s:seg:%05d}", prefix, name, i)
}

// MetaKey returns the key of the named filter's metadata hash.
func MetaKey(prefix, name string) string {
	if prefix == "" {
		prefix = "bf:"
	}
	return prefix + "{" + name + "}:meta"
}

func newHandle(c redis.UniversalClient, prefix, name string, m Meta, h hashing.Hasher) *Filter {
	f := &Filter{c: c, name: name, prefix: prefix, metaKey: MetaKey(prefix, name), meta: m, hasher: h, timeout: DefaultTimeout}
	f.segKeys = make([]string, m.Segments)
	for i := range f.segKeys {
		f.segKeys[i] = SegmentKey(prefix, name, uint64(i))
	}
	return f
}

// Create creates the named filter with parameters p, or attaches to it if
// it already exists with exactly the same parameters (so every member of
// a fleet may call Create at start-up). If it exists with different
// parameters (size, k, hash, seed, segments, capacity) the error wraps
// bloomery.ErrIncompatible and nothing is changed. One round trip (plus
// one to read an existing filter's metadata).
func Create(ctx context.Context, c redis.UniversalClient, name string, p Params) (*Filter, error) {
	prefix, err := checkName(p.KeyPrefix, name)
	if err != nil {
		return nil, err
	}
	m, err := layout(p)
	if err != nil {
		return nil, err
	}
	return create(ctx, c, prefix, name, m, p.Hasher)
}

func create(ctx context.Context, c redis.UniversalClient, prefix, name string, m Meta, h hashing.Hasher) (*Filter, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	key := MetaKey(prefix, name)
	created, err := createScript.Run(ctx, c, []string{key}, m.fields()...).Int()
	if err != nil {
		return nil, storeErr("create "+name, err)
	}
	if created == 1 {
		return newHandle(c, prefix, name, m, h), nil
	}
	have, err := readMeta(ctx, c, key, name)
	if err != nil {
		return nil, err
	}
	if d := m.diff(have); d != "" {
		return nil, fmt.Errorf("redisfilter: create %q: exists with other parameters (wanted vs stored: %s): %w", name, d, bloomery.ErrIncompatible)
	}
	return newHandle(c, prefix, name, have, h), nil
}

// Open attaches to an existing filter. p.Hasher must match the stored
// hash algorithm and seed (for SipHash, the key's fingerprint); if
// p.Capacity is set, the layout p describes must also match the stored
// one. A mismatch wraps bloomery.ErrIncompatible; a missing filter wraps
// ErrNotFound; metadata of an unknown format wraps
// bloomery.ErrUnsupportedVersion. One round trip.
func Open(ctx context.Context, c redis.UniversalClient, name string, p Params) (*Filter, error) {
	prefix, err := checkName(p.KeyPrefix, name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	have, err := readMeta(ctx, c, MetaKey(prefix, name), name)
	if err != nil {
		return nil, err
	}
	if _, err := hashing.Restore(have.Alg, have.Seed, hashing.Want(p.Hasher)); err != nil {
		return nil, fmt.Errorf("redisfilter: open %q: %w", name, err)
	}
	if p.Capacity != 0 {
		want, err := layout(p)
		if err != nil {
			return nil, err
		}
		if d := want.diff(have); d != "" {
			return nil, fmt.Errorf("redisfilter: open %q: stored with other parameters (wanted vs stored: %s): %w", name, d, bloomery.ErrIncompatible)
		}
	}
	return newHandle(c, prefix, name, have, p.Hasher), nil
}

// Attach opens an existing filter with whatever parameters and hash are
// stored, without checking them against the caller's expectations: for
// tools that copy bits (Export) or inspect Meta. A keyed (SipHash)
// filter's handle has no key: only the *Hash methods, Export, Len and
// Delete work, and the key-taking methods return an error wrapping
// bloomery.ErrKeyRequired.
func Attach(ctx context.Context, c redis.UniversalClient, name, keyPrefix string) (*Filter, error) {
	prefix, err := checkName(keyPrefix, name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	m, err := readMeta(ctx, c, MetaKey(prefix, name), name)
	if err != nil {
		return nil, err
	}
	h, err := hashing.Restore(m.Alg, m.Seed, hashing.Expect{Keyless: true})
	if err != nil {
		return nil, fmt.Errorf("redisfilter: attach %q: %w", name, err)
	}
	return newHandle(c, prefix, name, m, h), nil
}

// sum hashes a key, refusing a keyed hasher without its key (whose Sum64
// would panic).
func (f *Filter) sum(key []byte) (uint64, error) {
	if f.hasher.Keyed() && !f.hasher.HasKey() {
		return 0, fmt.Errorf("redisfilter: %q hashes with SipHash and this handle has no key: %w", f.name, bloomery.ErrKeyRequired)
	}
	return f.hasher.Sum64(key), nil
}

func readMeta(ctx context.Context, c redis.UniversalClient, key, name string) (Meta, error) {
	h, err := c.HGetAll(ctx, key).Result()
	if err != nil {
		return Meta{}, storeErr("read metadata of "+name, err)
	}
	if len(h) == 0 {
		return Meta{}, fmt.Errorf("redisfilter: %q (key %s): %w", name, key, ErrNotFound)
	}
	m, err := parseMeta(h)
	if err != nil {
		return Meta{}, fmt.Errorf("%w (filter %q)", err, name)
	}
	return m, nil
}

func storeErr(op string, err error) error {
	return fmt.Errorf("redisfilter: %s: %w: %w", op, ErrStore, err)
}

// SetTimeout sets the deadline applied to each round trip (a single
// call, or one pipeline of a batch call), on top of the caller's context,
// which bounds the whole call; d <= 0 leaves only the context's. Not safe to call
// concurrently with other methods.
func (f *Filter) SetTimeout(d time.Duration) { f.timeout = d }

func (f *Filter) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, f.timeout)
}

// SetCountAdds turns the maintenance of the shared count on (the
// default) or off for this handle. Off, an Add costs one round trip
// instead of two when the key is new, and Len and the count of an Export
// do not include this handle's adds. Not safe to call concurrently with
// other methods.
func (f *Filter) SetCountAdds(on bool) { f.noCount = !on }

// Meta returns the filter's metadata as read when it was opened (Count is
// not refreshed; see Len).
func (f *Filter) Meta() Meta { return f.meta }

// Name returns the filter's name.
func (f *Filter) Name() string { return f.name }

// Hasher returns the hasher keys are hashed with.
func (f *Filter) Hasher() hashing.Hasher { return f.hasher }

// SegmentKeys returns the keys of the data segments, in block order.
func (f *Filter) SegmentKeys() []string { return append([]string(nil), f.segKeys...) }

// locate returns the segment and the byte offset of h's block and the
// probe masks.
func (f *Filter) locate(h uint64) (seg, off uint64, masks [8]uint64) {
	block, masks := bloom.BlockedLocate(h, f.meta.Blocks, f.meta.K)
	return block / f.meta.SegmentBlocks, (block % f.meta.SegmentBlocks) * BlockBytes, masks
}

// bitfieldArgs returns the BITFIELD arguments that set the probe bits of
// a block at byte offset off (see the package doc for the bit order).
func bitfieldArgs(off uint64, masks *[8]uint64) []any {
	n := 0
	for _, m := range masks {
		n += bits.OnesCount64(m)
	}
	args := make([]any, 0, 4*n)
	for j, m := range masks {
		for m != 0 {
			b := uint64(bits.TrailingZeros64(m))
			m &= m - 1
			byteOff := off + 8*uint64(j) + b/8
			args = append(args, "SET", "u1", strconv.FormatUint(8*byteOff+7-b%8, 10), 1)
		}
	}
	return args
}

// blockHas reports whether a block read from the store (possibly shorter
// than 64 bytes: missing bytes are zeros) has every bit of masks.
func blockHas(block string, masks *[8]uint64) bool {
	var buf [BlockBytes]byte
	copy(buf[:], block)
	for j, m := range masks {
		if m != 0 && binary.LittleEndian.Uint64(buf[8*j:])&m != m {
			return false
		}
	}
	return true
}

// Add inserts key and reports whether it was new (false: the filter
// already claimed it). One BITFIELD round trip, plus one HINCRBY of the
// count when the key was new.
func (f *Filter) Add(ctx context.Context, key []byte) (bool, error) {
	h, err := f.sum(key)
	if err != nil {
		return false, err
	}
	return f.AddHash(ctx, h)
}

// AddString is Add for a string key.
func (f *Filter) AddString(ctx context.Context, key string) (bool, error) {
	return f.Add(ctx, []byte(key))
}

// AddHash inserts a key by its hash (computed with f.Hasher()).
func (f *Filter) AddHash(ctx context.Context, h uint64) (bool, error) {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	seg, off, masks := f.locate(h)
	old, err := f.c.BitField(ctx, f.segKeys[seg], bitfieldArgs(off, &masks)...).Result()
	if err != nil {
		return false, storeErr(fmt.Sprintf("add to %q (segment %s)", f.name, f.segKeys[seg]), err)
	}
	added := anyZero(old)
	if added && !f.noCount {
		if err := f.c.HIncrBy(ctx, f.metaKey, "count", 1).Err(); err != nil {
			return true, storeErr(fmt.Sprintf("count add to %q (the key was added)", f.name), err)
		}
	}
	return added, nil
}

func anyZero(old []int64) bool {
	for _, v := range old {
		if v == 0 {
			return true
		}
	}
	return false
}

// Contains reports whether key may have been added (false: certainly
// not). One GETRANGE round trip. An error means the answer is unknown.
func (f *Filter) Contains(ctx context.Context, key []byte) (bool, error) {
	h, err := f.sum(key)
	if err != nil {
		return false, err
	}
	return f.ContainsHash(ctx, h)
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(ctx context.Context, key string) (bool, error) {
	return f.Contains(ctx, []byte(key))
}

// ContainsHash is Contains for a hash computed with f.Hasher().
func (f *Filter) ContainsHash(ctx context.Context, h uint64) (bool, error) {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	seg, off, masks := f.locate(h)
	block, err := f.c.GetRange(ctx, f.segKeys[seg], int64(off), int64(off+BlockBytes-1)).Result()
	if err != nil {
		return false, storeErr(fmt.Sprintf("query %q (segment %s)", f.name, f.segKeys[seg]), err)
	}
	return blockHas(block, &masks), nil
}

// Hashes returns the hashes of keys (with f.Hasher()), for the batch
// calls.
func (f *Filter) Hashes(keys [][]byte) ([]uint64, error) {
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		h, err := f.sum(k)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return hs, nil
}

// AddBatch inserts the keys with the given hashes, pipelined (at most
// 4096 commands per pipeline), and returns how many were new; if added is
// not nil (len(added) >= len(hashes)), added[i] reports whether hashes[i]
// was new. A batch costs about one round trip per node per 4096 keys,
// plus one HINCRBY of the count. On error some keys may have been added
// and others not; adding them again is harmless.
func (f *Filter) AddBatch(ctx context.Context, hashes []uint64, added []bool) (int, error) {
	if added != nil && len(added) < len(hashes) {
		return 0, fmt.Errorf("redisfilter: add batch: added has %d slots for %d hashes: %w", len(added), len(hashes), bloomery.ErrInvalidParams)
	}
	total := 0
	cmds := make([]*redis.IntSliceCmd, 0, min(len(hashes), maxPipeline))
	for start := 0; start < len(hashes); start += maxPipeline {
		chunk := hashes[start:min(len(hashes), start+maxPipeline)]
		var sub []bool
		if added != nil {
			sub = added[start : start+len(chunk)]
		}
		n, err := f.addChunk(ctx, chunk, sub, cmds[:0])
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// addChunk sends one pipeline (and the count), under one timeout.
func (f *Filter) addChunk(ctx context.Context, chunk []uint64, added []bool, cmds []*redis.IntSliceCmd) (int, error) {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	p := f.c.Pipeline()
	for _, h := range chunk {
		seg, off, masks := f.locate(h)
		cmds = append(cmds, p.BitField(ctx, f.segKeys[seg], bitfieldArgs(off, &masks)...))
	}
	if _, err := p.Exec(ctx); err != nil {
		return 0, storeErr(fmt.Sprintf("add batch of %d to %q", len(chunk), f.name), err)
	}
	n := 0
	for i, c := range cmds {
		isNew := anyZero(c.Val())
		if isNew {
			n++
		}
		if added != nil {
			added[i] = isNew
		}
	}
	if n > 0 && !f.noCount {
		if err := f.c.HIncrBy(ctx, f.metaKey, "count", int64(n)).Err(); err != nil {
			return n, storeErr(fmt.Sprintf("count add batch to %q (the keys were added)", f.name), err)
		}
	}
	return n, nil
}

// ContainsBatch sets out[i] to whether hashes[i] may have been added
// (len(out) >= len(hashes)), with the GETRANGEs pipelined (at most 4096
// per pipeline). If any query fails the error wraps ErrStore and out must
// not be used.
func (f *Filter) ContainsBatch(ctx context.Context, hashes []uint64, out []bool) error {
	if len(out) < len(hashes) {
		return fmt.Errorf("redisfilter: contains batch: out has %d slots for %d hashes: %w", len(out), len(hashes), bloomery.ErrInvalidParams)
	}
	cmds := make([]*redis.StringCmd, 0, min(len(hashes), maxPipeline))
	masks := make([][8]uint64, 0, min(len(hashes), maxPipeline))
	for start := 0; start < len(hashes); start += maxPipeline {
		chunk := hashes[start:min(len(hashes), start+maxPipeline)]
		if err := f.containsChunk(ctx, chunk, out[start:start+len(chunk)], cmds[:0], masks[:0]); err != nil {
			return err
		}
	}
	return nil
}

// containsChunk sends one pipeline of queries, under one timeout.
func (f *Filter) containsChunk(ctx context.Context, chunk []uint64, out []bool, cmds []*redis.StringCmd, masks [][8]uint64) error {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	p := f.c.Pipeline()
	for _, h := range chunk {
		seg, off, m := f.locate(h)
		masks = append(masks, m)
		cmds = append(cmds, p.GetRange(ctx, f.segKeys[seg], int64(off), int64(off+BlockBytes-1)))
	}
	if _, err := p.Exec(ctx); err != nil {
		return storeErr(fmt.Sprintf("query batch of %d in %q", len(chunk), f.name), err)
	}
	for i, c := range cmds {
		out[i] = blockHas(c.Val(), &masks[i])
	}
	return nil
}

// Len returns the stored count of adds reported new (one HGET).
func (f *Filter) Len(ctx context.Context) (int, error) {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	n, err := f.c.HGet(ctx, f.metaKey, "count").Int()
	if err != nil {
		return 0, storeErr("read count of "+f.name, err)
	}
	return n, nil
}

// Delete removes the filter's data and metadata (metadata first, so that
// no client can open a half-deleted filter). Handles already open keep
// working on the emptied keys; do not Delete a filter in use.
func (f *Filter) Delete(ctx context.Context) error {
	ctx, cancel := f.bound(ctx)
	defer cancel()
	if err := f.c.Del(ctx, f.metaKey).Err(); err != nil {
		return storeErr("delete "+f.name, err)
	}
	for start := 0; start < len(f.segKeys); start += maxPipeline {
		p := f.c.Pipeline()
		for _, k := range f.segKeys[start:min(len(f.segKeys), start+maxPipeline)] {
			p.Del(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil {
			return storeErr("delete segments of "+f.name, err)
		}
	}
	return nil
}
