//go:build !purego

package bloom

// blockedAddKey is (*Blocked).Add of the n bytes at p: when f.inline.XXH3
// and 4 <= n <= 128, it hashes them with XXH3 (the macro of
// xxh3_amd64.h) and sets the probes in one leaf function
// (blocked_key_amd64.s), with atomic bit sets in concurrent mode;
// otherwise it tail-jumps to blockedAddKeyGo.
//
//go:noescape
func blockedAddKey(f *Blocked, p *byte, n int) bool

// blockedAddHash is (*Blocked).AddHash: blockedAddKey's probes, with
// atomic bit sets in concurrent mode, in one leaf function.
//
//go:noescape
func blockedAddHash(f *Blocked, h uint64) bool

// blockedContainsKey is (*Blocked).Contains of the n bytes at p, as
// blockedAddKey (concurrent mode included): the hash and the probes in
// one leaf function, or blockedContainsKeyGo.
//
//go:noescape
func blockedContainsKey(f *Blocked, p *byte, n int) bool
