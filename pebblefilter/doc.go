// Package pebblefilter plugs Bloomery's blocked Bloom and Ribbon filters
// into Pebble (github.com/cockroachdb/pebble/v2) as table filter policies,
// and sizes them per level with the Monkey allocator weighted by the block
// cache.
//
// It is its own module, so the core module never depends on Pebble.
//
// # Using it
//
//	opts := &pebble.Options{}
//	var specs [pebblefilter.NumLevels]pebblefilter.Spec
//	for i := range specs {
//		specs[i] = pebblefilter.Bloom(10) // or RibbonFPR(0.01), or the zero Spec: no filter
//	}
//	if err := pebblefilter.Apply(opts, specs); err != nil { ... }
//	db, err := pebble.Open(dir, opts)
//
// Apply sets every level's FilterPolicy and registers both Bloomery policy
// names in Options.Filters. Registration matters: Pebble looks a table's
// filter up by the policy name stored with it, and silently ignores a
// filter whose name it does not know (no error; reads stay correct but
// every filter probe is skipped). A database written with these policies
// and opened without them still works, only slower; [Register] adds the
// names without changing which policy writes new tables, for migrating
// databases in either direction.
//
// # Names and formats
//
// Two names, one per on-disk format, never carrying parameters:
// "bloomery.blockedbloom.v1" and "bloomery.ribbon.v1". Pebble keeps one
// reader per name, while different levels write the same format with
// different bits per key, so every parameter a query needs (block count,
// probes or ribbon layout, hash algorithm and seed, format version) is in a
// trailer at the end of each filter block, and MayContain depends only on
// the filter bytes and the key.
//
// Keys (the prefixes Pebble passes, key[:Comparer.Split(key)]) are hashed
// with XXH3-64 and the fixed seed [HashSeed]: deterministic on every
// platform and in every process, never hash/maphash.
//
// Blocked Bloom filter block (bloomery.blockedbloom.v1):
//
//	body     blocks*64 bytes: bloom.BlockedAddRaw's layout (512-bit blocks,
//	         one per key, k probes inside it)
//	trailer  20 bytes, little-endian:
//	  0  8   hash seed (XXH3)
//	  8  4   blocks
//	  12 2   configured bits per key * 100 (informational)
//	  14 1   k, probes per key
//	  15 1   hash algorithm (1 = XXH3-64)
//	  16 1   format version (1)
//	  17 1   family tag 'B'
//	  18 2   magic "bm"
//
// Ribbon filter block (bloomery.ribbon.v1):
//
//	body     the solution words, little-endian (ribbon.Filter.AppendRaw)
//	trailer  30 bytes, little-endian:
//	  0  8   hash seed (XXH3)
//	  8  4   blocks of 128 slots (0: no filter was built, match everything)
//	  12 4   first block with lower+1 columns
//	  16 4   banding seed
//	  20 4   target FPR (float32, informational)
//	  24 1   lower columns
//	  25 1   hash algorithm (1 = XXH3-64)
//	  26 1   format version (1)
//	  27 1   family tag 'R'
//	  28 2   magic "bm"
//
// # Reading safely
//
// MayContain never panics, never allocates, keeps no reference to its
// arguments and is safe for concurrent use. On bytes it does not recognise
// (too short, wrong magic or tag, unknown version or hash algorithm, a body
// whose length does not match the trailer) it answers true: a filter can
// only cost reads, never lose a key.
//
// # Allocation
//
// [Allocate] splits a filter memory budget across levels with package
// monkey, weighting each level by the probability that a false positive
// there turns into a real block read (levels whose data blocks stay in the
// block cache cost little when their filter errs), and has a mode for
// Get-heavy workloads, whose last-level filters Pebble never consults.
// The weights come from a static cache model ([MissCosts]) or, better,
// from a pilot run of the workload ([PilotCounts]: per level, data-block
// reads per false positive and filter checks per lookup), so the
// allocation follows what the cache actually holds. Since a level's
// weight itself changes with its FPR (rarer false positives find its
// blocks evicted), [Elasticities] can estimate from several pilot rounds
// how fast each level's reads fall with its FPR, and
// AllocOptions.Elasticity makes Allocate minimise that cost instead of
// the constant-weight one (on the bench's shape this changed nothing
// measurable; docs/lsm.md, run G).
package pebblefilter
