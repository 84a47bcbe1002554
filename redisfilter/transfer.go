package redisfilter

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/redis/go-redis/v9"
)

// transferBytes bounds the segment bytes moved by one pipeline of Import
// or Export.
const transferBytes = 64 << 20

// ImportOptions controls where Import writes.
type ImportOptions struct {
	// KeyPrefix and SegmentBytes as in Params.
	KeyPrefix    string
	SegmentBytes int64
}

// Import stores src under name: same blocks, k, hasher, capacity, design
// FPR and count, so queries through the returned handle answer exactly as
// src does, and Export returns a filter that encodes to the same bytes.
// The segments are written first (SET of each segment's bytes, trailing
// zero bytes dropped, all-zero segments not stored) and the metadata last,
// so no client can open the filter before its bits are in place. If the
// name already holds a filter the error wraps ErrExists (Delete it first
// to replace it). Memory: one copy of src's words plus one segment.
func Import(ctx context.Context, c redis.UniversalClient, name string, src *bloom.Blocked, o ImportOptions) (*Filter, error) {
	prefix, err := checkName(o.KeyPrefix, name)
	if err != nil {
		return nil, err
	}
	img := src.Image()
	m, err := layoutFor(uint64(len(img.Words))/8, img.K, img.Capacity, img.DesignFPR, img.Hasher, o.SegmentBytes)
	if err != nil {
		return nil, err
	}
	m.Count = img.Count
	f := newHandle(c, prefix, name, m, img.Hasher)
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout+transferTimeout(m.Bytes()))
	defer cancel()
	n, err := c.Exists(ctx, f.metaKey).Result()
	if err != nil {
		return nil, storeErr("import "+name, err)
	}
	if n != 0 {
		return nil, fmt.Errorf("redisfilter: import %q: %w", name, ErrExists)
	}
	segWords := m.SegmentBlocks * 8
	perPipe := max(1, transferBytes/(segWords*8))
	buf := make([]byte, 0, segWords*8)
	for s := uint64(0); s < m.Segments; s += perPipe {
		p := c.Pipeline()
		for i := s; i < min(m.Segments, s+perPipe); i++ {
			words := img.Words[i*segWords : min(uint64(len(img.Words)), (i+1)*segWords)]
			end := len(words)
			for end > 0 && words[end-1] == 0 {
				end--
			}
			if end == 0 {
				p.Del(ctx, f.segKeys[i])
				continue
			}
			buf = buf[:0]
			for _, w := range words[:end] {
				buf = binary.LittleEndian.AppendUint64(buf, w)
			}
			for len(buf) > 0 && buf[len(buf)-1] == 0 {
				buf = buf[:len(buf)-1]
			}
			// go-redis copies the argument into its write buffer when the
			// pipeline is sent, so buf must stay unchanged until Exec:
			// give each segment its own copy.
			p.Set(ctx, f.segKeys[i], append([]byte(nil), buf...), 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			return nil, storeErr(fmt.Sprintf("import %q: write segments %d..", name, s), err)
		}
	}
	created, err := createScript.Run(ctx, c, []string{f.metaKey}, m.fields()...).Int()
	if err != nil {
		return nil, storeErr("import "+name+": write metadata", err)
	}
	if created != 1 {
		return nil, fmt.Errorf("redisfilter: import %q: created concurrently by another client (its segments may now hold both filters' bits): %w", name, ErrExists)
	}
	return f, nil
}

// transferTimeout allows 1 s per 16 MiB moved (loopback moves hundreds of
// MB/s; a slow link gets the rest from the caller's context).
func transferTimeout(bytes uint64) time.Duration { return time.Duration(bytes>>24) * time.Second }

// Export reads the whole filter into an in-process bloom.Blocked with the
// same bits, parameters, hasher and count (re-read from the metadata), for
// writing in the container format. Segments are read in pipelines of at
// most 64 MiB. With concurrent writers the result holds every key added
// before Export began and any subset of those added meanwhile. A segment
// longer than its blocks wraps bloomery.ErrCorrupt; the filter must fit
// in memory (twice: the words and the filter).
func (f *Filter) Export(ctx context.Context) (*bloom.Blocked, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout+transferTimeout(f.meta.Bytes()))
	defer cancel()
	m, err := readMeta(ctx, f.c, f.metaKey, f.name)
	if err != nil {
		return nil, err
	}
	if d := f.meta.diff(m); d != "" {
		return nil, fmt.Errorf("redisfilter: export %q: metadata changed since open (%s): %w", f.name, d, bloomery.ErrIncompatible)
	}
	words := make([]uint64, m.Blocks*8)
	segBytes := m.SegmentBlocks * BlockBytes
	perPipe := max(1, transferBytes/segBytes)
	for s := uint64(0); s < m.Segments; s += perPipe {
		p := f.c.Pipeline()
		cmds := make([]*redis.StringCmd, 0, perPipe)
		for i := s; i < min(m.Segments, s+perPipe); i++ {
			cmds = append(cmds, p.GetRange(ctx, f.segKeys[i], 0, -1))
		}
		if _, err := p.Exec(ctx); err != nil {
			return nil, storeErr(fmt.Sprintf("export %q: read segments %d..", f.name, s), err)
		}
		for j, c := range cmds {
			i := s + uint64(j)
			dst := words[i*m.SegmentBlocks*8 : min(uint64(len(words)), (i+1)*m.SegmentBlocks*8)]
			data := c.Val()
			if uint64(len(data)) > uint64(len(dst))*8 {
				return nil, fmt.Errorf("redisfilter: export %q: segment %s holds %d bytes, its blocks %d: %w", f.name, f.segKeys[i], len(data), len(dst)*8, bloomery.ErrCorrupt)
			}
			var w [8]byte
			for k := 0; k*8 < len(data); k++ {
				clear(w[:])
				copy(w[:], data[8*k:])
				dst[k] = binary.LittleEndian.Uint64(w[:])
			}
		}
	}
	return bloom.NewBlockedFromImage(bloom.BlockedImage{
		Words: words, K: m.K, Capacity: m.Capacity, DesignFPR: m.DesignFPR, Count: m.Count, Hasher: f.hasher,
	})
}
