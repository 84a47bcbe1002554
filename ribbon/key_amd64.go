//go:build !purego

package ribbon

import (
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/xxh3key"
)

// inlineHash is what containsKey (query_amd64.s) reads to hash a key with
// the filter's hasher itself (see xxh3key.Key). setKernel sets it only
// when the assembly kernel serves the filter (kernel.avx2), so XXH3 is
// containsKey's one test for its assembly path; every constructor (Build,
// Decode and so UnmarshalBinary) calls setKernel after setting the hasher.
type inlineHash xxh3key.Key

// inlineHashOf is the inlineHash of hasher h: the zero value unless h is
// XXH3.
func inlineHashOf(h hashing.Hasher) inlineHash { return inlineHash(xxh3key.For(h)) }

// containsKey is (*Filter).Contains of the n bytes at p. When f.k.ih.XXH3
// (XXH3 hasher, assembly kernel) and 4 <= n <= 128 it hashes them with
// the XXH3 macro of xxh3_amd64.h and evaluates the hash with the kernel
// of containsAVX2 in the same function, with no call in between; other
// hashers, other lengths, filters the kernel does not serve and the rare
// rows next to the lower/upper boundary tail-jump to containsKeyGo.
//
//go:noescape
func containsKey(f *Filter, p *byte, n int) bool
