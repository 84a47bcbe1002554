package bloom

import (
	"encoding/binary"

	"github.com/bloomery/bloomery/hashing"
)

// This file exposes the Blocked filter's bit layout over raw bytes, for
// engines that store a filter inside their own files and query it in
// place (the Pebble adapter keeps it in an sstable's filter block and gets
// it back as a slice of a cache buffer): no decode, no copy, no
// allocation.
//
// The raw form of a Blocked filter with `blocks` blocks is blocks*64 bytes:
// block i is bytes [64i, 64i+64), holding its eight uint64 words in
// little-endian order, exactly the words of (*Blocked) in memory on a
// little-endian machine. A key with hash h uses block Reduce(h, blocks)
// and the k in-block positions of the probe sequence documented on
// Blocked, so a raw filter answers exactly like a Blocked filter with the
// same blocks, k and hasher holding the same keys.

// BlockedRawSize returns the size in bytes of the raw form of a blocked
// filter with the given number of blocks (64 bytes per block).
func BlockedRawSize(blocks uint64) uint64 { return blocks * (BlockBits / 8) }

// blockedRawValid reports whether (words, blocks, k) describe a raw filter
// the probe code can read without going out of bounds.
func blockedRawValid(words []byte, blocks uint64, k int) bool {
	return blocks > 0 && blocks <= uint64(len(words))/64 && uint64(len(words)) == blocks*64 &&
		k >= 1 && k <= MaxHashFuncs
}

// BlockedAddRaw sets the k probe bits of hash h in the raw filter words of
// `blocks` blocks. It reports false, changing nothing, when len(words) is
// not blocks*64 or k is outside [1, MaxHashFuncs]. It touches one 64-byte
// block and does not allocate. Not safe for concurrent use with other
// writers or readers of the same bytes.
func BlockedAddRaw(words []byte, blocks uint64, k int, h uint64) bool {
	if !blockedRawValid(words, blocks, k) {
		return false
	}
	off := hashing.Reduce(h, blocks) * 64
	line := words[off : off+64 : off+64]
	ps := newProbeSeq(h)
	for range k {
		p := ps.next()
		i := (p >> 6) * 8
		w := binary.LittleEndian.Uint64(line[i:])
		binary.LittleEndian.PutUint64(line[i:], w|1<<(p&63))
	}
	return true
}

// BlockedMayContain reports whether a key with hash h may be in the raw
// filter words of `blocks` blocks with k probes: false means certainly
// not. It gives the same answer as (*Blocked).ContainsHash on a filter
// with the same blocks, k and keys. Invalid input (len(words) != blocks*64,
// blocks == 0, k outside [1, MaxHashFuncs]) answers true, failing open, so
// it never panics and never gives a false negative because of bad
// parameters. It reads one 64-byte block, stops at the first clear bit,
// does not allocate, and is safe for concurrent use (it only reads).
func BlockedMayContain(words []byte, blocks uint64, k int, h uint64) bool {
	if !blockedRawValid(words, blocks, k) {
		return true
	}
	off := hashing.Reduce(h, blocks) * 64
	line := words[off : off+64 : off+64]
	ps := newProbeSeq(h)
	for range k {
		p := ps.next()
		if line[p>>3]&(1<<(p&7)) == 0 {
			return false
		}
	}
	return true
}
