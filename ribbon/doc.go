// Package ribbon is a static standard Ribbon filter with 128-bit bands, the
// design of Dillinger and Walzer ("Ribbon filter: practically smaller than
// Bloom and Xor", 2021) as shipped in RocksDB's Standard128Ribbon, re-derived
// for Bloomery. At equal false-positive rate it is about 30 % smaller than a
// cache-line blocked Bloom filter, builds up to about twice as slowly
// (and faster at 10^7 keys), and answers queries about as fast (see
// Measured). Build it once from the complete key set:
//
//	f, err := ribbon.BuildKeys(keys, ribbon.Params{FPR: 0.01})
//	ok := f.Contains(key) // false: certainly absent; true: maybe present
//
// # Model
//
// A Ribbon filter stores a static function over GF(2). Each key, through
// its 64-bit hash, gets an equation: a start s in [0, m-127), a 128-bit
// coefficient row c (bit k stands for slot s+k; bit 0 is always 1) and a
// result row r of b bits. Building finds an m-row, b-column bit matrix S,
// the solution, such that for every key
//
//	XOR over k with c_k = 1 of S[s+k]  =  r        (b bits at once)
//
// and a query recomputes the left side and compares it with r. A member
// always matches. For a non-member, r is a pseudo-random function of its
// hash that does not depend linearly on c, so each of the b result columns
// matches with probability 1/2 independently: FPR = 2^-b, whatever S is.
// The filter stores only S: m·b bits for n keys, so the space is
// (m/n)·log2(1/FPR) bits per key, the information-theoretic floor
// log2(1/FPR) times the slot overhead m/n (a few per cent, see Sizing).
//
// What makes it a *Ribbon* (rather than an Xor filter, which solves the
// same kind of system with three random positions per key) is that all of
// a key's coefficients lie in one window of 128 consecutive slots. The
// matrix, sorted by start, is a band of width 128, which gives an
// incremental solver, sequential memory access while building, and one
// run of adjacent memory per query.
//
// # Row derivation (layout 1)
//
// The key hash h (package hashing; XXH3 with seed 0 by default) is first
// remixed for the banding seed σ: x = hashing.Remix(h, σ+1), a bijection of
// h that looks independent for every σ, so a seed that failed gives a fresh
// system. Then
//
//	s  = Reduce(x, m-127)                  high bits of x, uniform
//	c  = (lo, hi): lo = x·K1 | 1,  hi = (x ^ x>>31)·K2
//	r  = high 32 bits of x·K3, masked to the columns in use
//
// with three odd 64-bit multipliers (ribbon.go). The three products are not
// GF(2)-linear in one another, which the FPR argument above needs.
//
// # Banding: on-the-fly Gaussian elimination
//
// The builder keeps one row (c, r) per slot, all empty at first, with the
// invariant that a stored row has its leading 1 at its own slot, so the
// stored rows form an upper-triangular matrix with a unit diagonal. To add
// an equation at i = s: if row i is empty, store it there; otherwise XOR
// the stored row into it, which clears bit 0, shift c right by its
// trailing zeros (moving i forward to c's new leading 1) and repeat. If c
// becomes zero the equation was a combination of earlier ones: consistent
// when r became zero too (an exact duplicate always is, and is harmless),
// otherwise the system has no solution for this seed. Each step is two
// 64-bit XORs, a trailing-zero count and a shift; a key takes 6.8 steps on
// average at 1 % FPR and 10^6 keys (it travels 11.6 slots beyond its start).
//
// Keys are banded bucket by bucket in ascending order of x, hence of
// start (Reduce is monotone): one counting-sort pass on the top bits of
// the remixed hashes groups them into buckets of about 1000 keys, so the
// banding pass walks the matrix front to back and a bucket's rows stay
// in the cache. Inside a bucket the keys are not sorted, because the
// order of the equations does not change the result: the occupied slots
// are the leading positions of the span of the equations, which every
// echelon basis shares, consistency is a property of the system, and the
// solution with 0 in every free slot is unique. For the same reason the
// amd64 builder eliminates two equations at once, alternating their steps
// so that the processor overlaps their chains of dependent loads. Exact
// duplicates are harmless to banding (a second copy always vanishes
// consistently); when a key vanishes the builder looks for a copy of it in
// its bucket, and only if it finds one counts the distinct keys with a
// pass of its own (sorting each bucket): Len counts distinct keys and the
// filter is sized for them, repeating the first attempt when the count
// changes the size. A filter is thus a function of the set of keys and
// the parameters: the order and multiplicity of the input change nothing
// (TestBuildMatchesReference compares it bit for bit with a plain
// construction).
//
// # Back-substitution
//
// Going from the last slot to the first, S[i] = r_i XOR (c_i's bits beyond
// the first, AND-ed with S[i+1..i+127]): those slots are already solved.
// An empty slot is a free variable and gets 0 (any value works: a
// non-member's result is independent of S). The solver writes directly
// into the storage below. On amd64 it keeps, as RocksDB's interleaved
// solver does, a 128-bit window of the solution per column (bit k = slot
// i+k while row i is solved), shifts it by one slot per row and sets the
// new bit to r_i XOR parity(c_i AND window), four columns at a time in
// registers; after a block's first row the window's two words are the
// block's two words of that column. The portable solver precomputes each
// row's coefficients shifted into block coordinates and builds each
// column's two words bit by bit, four columns at a time.
//
// # Interleaved storage
//
// Slots are grouped in blocks of 128, and a block's slots in two halves of
// 64. Every block stores its columns' bits interleaved: for each column j,
// one 64-bit word per half (bit o = column j of the half's slot o), blocks
// one after another, block k from word 2·(k·L + max(0, k - U)) (L lower
// columns, U upper start block); the persisted order
// (docs/format/ribbon.md) puts column j's two words next to each other.
// A query with start s covers the slots s..s+127: with g = s/64 and
// t = s mod 64 it meets half g through the coefficient word lo<<t, half
// g+1 through hi<<t | lo>>(64-t) and half g+2 through hi>>(64-t), and
// evaluates column j as the parity of
//
//	S_g[j] AND lo<<t   XOR   S_g+1[j] AND (hi<<t | lo>>(64-t))   XOR   S_g+2[j] AND hi>>(64-t)
//
// where S_h[j] is column j's word in half h. It evaluates every column and
// has no branch that depends on the key, so the out-of-order core overlaps
// the cache misses of consecutive queries (stopping at the first column
// that differs would save a non-member work, but the exit is mispredicted
// about every other query, and the pipeline flush also discards the next
// queries' loads).
//
// In memory the words are rearranged so that a query touches as few cache
// lines as the bits it needs allow: every block keeps its place, but
// inside it the solution is stored by quarters of 32 slots, quarter Q
// holding its cols columns as consecutive 32-bit words from 32-bit word
// Q·(L+1) - min(Q, 4U). A row then meets five adjacent quarters (four and
// a bit), 5·cols 32-bit words: 140 bytes at 7 columns, about 3.2 cache
// lines, where whole 64-bit words per half (3·cols of them, 168 bytes)
// took about 3.6. Decode, AppendBinary and AppendRaw convert between this
// order and the persisted one (ribbon.go explains both). On amd64 with
// AVX2 a filter with at most 8 columns is queried by an assembly kernel
// (query_amd64.s) that loads each quarter's columns in one 256-bit word
// and evaluates all 8 columns in its 32-bit lanes: 82 instructions and
// 21 loads per query, against about 260 instructions for the Go loop.
// Solutions of 8 MiB and more are put on transparent huge pages, so that
// a query of a large filter does not also walk the page table.
//
// # Fractional result bits
//
// A whole number of columns gives only FPRs that are powers of 1/2. For a
// target ε the filter uses L = ⌊log2(1/ε)⌋ columns in the lower blocks and
// L+1 in the upper ones, and puts the boundary (upper start block) where
// the fraction lp of starts in lower blocks satisfies
//
//	ε = lp·2^-L + (1-lp)·2^-(L+1),  i.e.  lp = (ε - 2^-(L+1)) / 2^-(L+1).
//
// Starts are uniform, so this is the FPR exactly (up to rounding the
// boundary to a block), and EstimatedFPR reports the realised mix. At
// ε = 1 %: L = 6, lp = 0.28, 6.72 columns per slot on average, against
// log2(100) = 6.64 for an ideal fractional width (1.2 % more). Banding
// solves L+1 columns for every key (the matrix is the same for all
// columns), and the back-substitution computes column L only in upper
// blocks: a key whose start is in an upper block reaches only upper blocks,
// so the lower blocks never need it.
//
// # Sizing and retries
//
// With m slots for n keys, banding succeeds unless some window of slots
// receives more independent equations than it can hold; the probability of
// failure falls steeply with the overhead m/n - 1, and for a fixed band
// width the overhead needed grows slowly with n (the reach of a 128-bit row
// is fixed while the number of windows grows). The sizing table
// (params.go; RocksDB's measurements for w = 128, confirmed for this
// package's hashing by TestOverheadTable) chooses m/n so that one seed
// fails about 1 time in 20: 1.029 at 2^8 slots, 1.023 from 2^10 to 2^12,
// 1.033 at 2^16, 1.036 at 2^17, then +0.0038 per doubling; slots are
// rounded up to a multiple of 128 and at least 256. Measured failures per
// seed at these sizes: 15 of 400 seeds at 10^3 keys, 12/300 at 5·10^3,
// 6/200 at 2·10^4, 5/100 at 10^5, 2/40 at 10^6.
//
// When a seed fails the builder clears the matrix and tries the next seed.
// After 16 consecutive failures at one size (which does not happen by
// chance at the table's sizes: 0.05^16) it adds 1/32 to the slot count and
// starts over with new seeds, up to 8 times, and only then returns an error
// wrapping bloomery.ErrBuildFailed. It never drops a key. Unlike RocksDB
// there is no fallback to a Bloom filter (families do not depend on one
// another).
//
// Very small sets pay for the 256-slot minimum: one to 128 keys take 224
// bytes at 1 % FPR (and get 0.78 %, the 7-column rate, because no block
// boundary falls inside so few starts).
//
// # Measured
//
// At FPR 1 % (TestBitsPerKey, TestBitsPerKey1e7, TestFPR): 7.039 bits/key
// at 10^6 keys (1.047 slots per key, 1.059x the entropy floor of 6.64) and
// 7.124 at 10^7 keys (1.060 slots per key); measured FPR 1.006 % at 10^6
// keys over 2·10^6 absent probes and 1.005 % at 10^7 keys over 10^6.
// With BloomBitsPerKey 10 (the blocked Bloom FPR 0.957 % with 7 probes) a
// Ribbon filter takes 7.10 bits/key at 10^6 keys: 29 % less. Building
// needs about 20 bytes per slot of banding matrix (16 of coefficients, 4
// of results) and 8 per key of grouped hashes (about 230 bits per key)
// and a histogram of at most 32 KiB, which a Builder keeps between
// builds.
//
// Against this repository's blocked Bloom filter (package bloom, FPR 1 %,
// 9.90 bits/key), in one process, on a shared 2-vCPU AMD EPYC under heavy
// load, so treat the ratios as the result and the nanoseconds as ±50 %.
// Builds, timed by thread CPU time (the median of 11 rounds at 10^6 keys
// and 3 at 10^7, Build and BuildKeys with a fresh Builder each time, load
// average about 13; "was": the builder before the bucketing, two-lane
// banding and window back-substitution, in the same process):
//
//	                         10^6 keys                 10^7 keys
//	                         Bloom  Ribbon  ratio  was  Bloom  Ribbon  ratio  was
//	build from hashes ns/key  25.6   46.4   1.81  3.76   92.6   50.3   0.54  1.34
//	build from keys   ns/key  72.4   65.7   0.91  1.81  166.6   68.5   0.41  0.95
//
// Load inflates Bloom's build (random cache-line writes) more than
// Ribbon's, so on a quiet machine the 10^6 ratio is higher: at load
// average 0.2 the previous builder took 90.8 ns/key against Bloom's 22.8
// (3.98x); the current one takes 0.44-0.55x the previous one's time at
// 10^6 keys in every loaded run (0.35-0.43x at 10^7), which puts it near
// 2x there.
//
// Queries of uint64 hashes through a func value (one call per key, as
// bench/cmd/benchreport does), the two filters alternating in chunks of
// 8192 keys, 400 chunks each, the fastest chunk and the median of the
// per-chunk ratios (quarter-major kernel; "was": the half-major table
// kernel before it, in a run of its own; the portable loop, -tags purego,
// takes about 3 times as long at 10^6 keys):
//
//	                  10^6 keys                              10^7 keys
//	                  Bloom  Ribbon  ratio  was: Ribbon ratio   Bloom  Ribbon  ratio
//	present  ns/key   12.1   15.7    1.29        18.1   1.27    68.8   46.2   0.95
//	absent   ns/key   10.7   15.8    1.44        18.2   1.55    47.1   46.3   1.37
//
// These are the best conditions for Ribbon: with the solution in the
// last-level cache and nothing else evicting it. On the shared machine
// bench/cmd/benchreport's whole passes of 10^6 queries measured 1.1-2.7
// times Bloom's time, probably because other processes evict part of the
// solution and then some of Ribbon's 3.2 lines per query come from
// memory where Bloom needs one.
//
// At 10^6 keys the build splits into about 55 % banding, 21 %
// back-substitution, 19 % grouping the hashes and 5 % clearing rows (CPU
// profile, reused Builder). At 10^7 keys Ribbon builds faster than
// Bloom: its passes are sequential, while every Bloom insert misses the
// cache. A Ribbon query reads about 3.2 cache lines where a
// blocked Bloom query reads one, but the loads are independent and issue
// together, so a query waits about one miss latency, like Bloom's; Ribbon
// pays in cache-line traffic and instructions (99 per query with the
// kernel and the method-value wrapper, against 91 for Bloom averaged over
// members and non-members, counted with callgrind). Those instructions
// are what bounds the overlap: while one query waits for its lines, the
// next ones issue their loads only as far as the reorder buffer reaches,
// so the time per query is about the wait times the instructions per
// query over the buffer's size, and even in the L1 cache a Ribbon query
// takes 1.23 (member) to 1.41 (non-member) times a Bloom query. In one
// process, the two filters alternating in chunks of 8192 uint64 keys,
// the fastest Ribbon chunk at 10^6 keys took 16.0-16.1 ns per key with
// the quarter-major kernel against 18.0-18.3 with the half-major table
// kernel before it (11.0-11.1 against 11.2 in the L1 cache); the median
// per-chunk ratio to Bloom swings with the machine's load, which slows
// Bloom more (1.10-1.26 members, 1.33-1.39 non-members in the quieter
// runs). A
// non-member costs Ribbon exactly what a member costs, while Bloom's early
// exit on a non-member is a mispredicted branch.
//
// # Format
//
// Persisted in the container envelope (docs/format.md) with kind ribbon
// and layout 1. Params (37 bytes, little-endian): keys u64, blocks u64,
// upper start block u64, lower columns u8 (1..31), seed u32, design FPR
// f64. Payload: the solution words, u64 little-endian, in storage order;
// block k starts at word 2·(k·L + max(0, k - upper start)). An empty
// filter has zero blocks and answers false. docs/format/ribbon.md has the
// details.
//
// # Concurrency
//
// A Filter is immutable: any number of goroutines may query it. A Builder
// is not safe for concurrent use; the filters it returns own their memory.
package ribbon
