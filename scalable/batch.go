package scalable

import "github.com/bloomery/bloomery/bloom"

// batchLen is how many keys the batch methods hash before probing.
const batchLen = 64

// ContainsBatch sets out[i] to Contains(keys[i]); len(out) must be at
// least len(keys). It hashes a block of keys first, then asks the links
// newest first, each for the keys of the block no newer link claimed
// (a blocked link answers the whole block with bloom.Blocked.ContainsBatch,
// which prefetches), so the memory loads of independent keys overlap
// instead of waiting key by key. It does not allocate and may run
// concurrently with other readers.
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) {
	_ = out[:len(keys)]
	var hs [batchLen]uint64
	for len(keys) > 0 {
		n := min(len(keys), batchLen)
		f.p.Hasher.Sum64Batch(keys[:n], hs[:n])
		f.claimed(hs[:n], out[:n], 0, len(f.links))
		keys, out = keys[n:], out[n:]
	}
}

// ContainsHashBatch sets out[i] to ContainsHash(hs[i]); len(out) must be
// at least len(hs). Like ContainsBatch without the hashing.
func (f *Filter) ContainsHashBatch(hs []uint64, out []bool) {
	_ = out[:len(hs)]
	for len(hs) > 0 {
		n := min(len(hs), batchLen)
		f.claimed(hs[:n], out[:n], 0, len(f.links))
		hs, out = hs[n:], out[n:]
	}
}

// claimed sets out[i] to whether any of links[from:to] claims hs[i],
// asking the newest of them first; len(hs) <= batchLen and
// len(out) == len(hs).
func (f *Filter) claimed(hs []uint64, out []bool, from, to int) {
	clear(out)
	var tmp [batchLen]bool
	for j := to - 1; j >= from; j-- {
		switch l := f.links[j].(type) {
		case *bloom.Blocked:
			// One prefetched pass over the block beats skipping the keys
			// a newer link already claimed.
			l.ContainsBatch(hs, tmp[:len(hs)])
			for i, ok := range tmp[:len(hs)] {
				out[i] = out[i] || ok
			}
		case *bloom.Filter:
			// Ask only about the keys no newer link claimed, gathered
			// into one run so that ContainsBatch can prefetch their
			// probes (it does on links of 64 MiB or more, and is a
			// ContainsHash loop below that).
			var pend [batchLen]uint64
			var at [batchLen]uint8
			n := 0
			for i, h := range hs {
				if !out[i] {
					pend[n], at[n] = h, uint8(i)
					n++
				}
			}
			if n == 0 {
				return // every key is claimed: older links cannot change out
			}
			l.ContainsBatch(pend[:n], tmp[:n])
			for c, ok := range tmp[:n] {
				out[at[c]] = ok
			}
		default:
			for i, h := range hs {
				if !out[i] {
					out[i] = l.ContainsHash(h)
				}
			}
		}
	}
}

// AddHashBatch adds hashes (computed with Hasher()) in order, exactly as
// successive TryAddHash calls would, and sets out[i] to whether hs[i] was
// new; len(out) must be at least len(hs). It returns how many hashes it
// handled, n: it stops before the first new hash that needs a new link
// (the newest link holds its capacity), changing nothing for it, so that
// the caller can check its own limits and hand that one hash to TryAddHash
// (which grows the chain or refuses) before calling again with hs[n+1:].
// It never appends a link, so it does not allocate.
//
// Equivalence with one-at-a-time adds: a block of up to 64 hashes is first
// checked against the older links (overlapping the memory loads of
// independent keys); they do not change while the block is taken. The
// hashes none of them claims are then added to the newest link in order,
// and its AddHash reports false, changing nothing, exactly when all of a
// hash's bits are already set there, which is when TryAddHash's test of
// the newest link would have claimed it (the argument of TryAddHash). So
// a duplicate later in the batch, or a key that earlier adds of the batch
// made a false positive, answers false, as in the sequential path; and
// growth happens at the same hash, so the replies, Len and the bit arrays
// are identical to sequential TryAddHash calls. When the newest link has
// room for every unclaimed hash of the block (each takes at most one
// place) they go to it in one bloom.Filter.AddHashBatch, which prefetches
// their probe words ahead of setting them; otherwise they are taken one
// at a time, testing the newest link before stopping for a hash it would
// not take.
//
// Cost: one probe of every older link per hash (early exit per link), and
// one add to the newest link for each hash no older link claimed.
func (f *Filter) AddHashBatch(hs []uint64, out []bool) int {
	_ = out[:len(hs)]
	done := 0
	var claimed, fresh [batchLen]bool
	var pend [batchLen]uint64
	var at [batchLen]uint8
	for len(hs) > 0 {
		n := min(len(hs), batchLen)
		older := len(f.links) - 1
		f.claimed(hs[:n], claimed[:n], 0, older)
		last := f.links[older]
		room := last.Cap() - last.Len() // new keys the newest link takes before growth
		np := 0
		for i, h := range hs[:n] {
			out[i] = false
			if !claimed[i] {
				pend[np], at[np] = h, uint8(i)
				np++
			}
		}
		if l, ok := last.(*bloom.Filter); ok && np <= room {
			f.count += l.AddHashBatch(pend[:np], fresh[:np])
			for c, ok := range fresh[:np] {
				out[at[c]] = ok
			}
		} else {
			for i, h := range hs[:n] {
				if claimed[i] {
					continue
				}
				if room <= 0 {
					if last.ContainsHash(h) {
						continue // the newest link claims it: no growth
					}
					return done + i
				}
				if last.AddHash(h) {
					f.count++
					room--
					out[i] = true
				}
			}
		}
		done += n
		hs, out = hs[n:], out[n:]
	}
	return done
}

// TryAddBatch adds keys in order exactly as successive TryAdd calls
// would, setting out[i] to whether keys[i] was new (len(out) must be at
// least len(keys)), and returns how many keys it handled. It stops at the
// first key TryAdd would refuse and returns its index with that error
// (wrapping bloomery.ErrFull); out[:n] and the filter then hold the
// results of the keys before it. Batches overlap the memory loads of
// independent keys (see AddHashBatch). It allocates only when it appends
// a link.
func (f *Filter) TryAddBatch(keys [][]byte, out []bool) (int, error) {
	_ = out[:len(keys)]
	var hs [batchLen]uint64
	done := 0
	for len(keys) > 0 {
		n := min(len(keys), batchLen)
		f.p.Hasher.Sum64Batch(keys[:n], hs[:n])
		for i := 0; i < n; {
			i += f.AddHashBatch(hs[i:n], out[i:n])
			if i == n {
				break
			}
			added, err := f.TryAddHash(hs[i])
			if err != nil {
				return done + i, err
			}
			out[i] = added
			i++
		}
		done += n
		keys, out = keys[n:], out[n:]
	}
	return done, nil
}

// AddBatch adds keys in order exactly as successive Add calls would
// (a full non-scaling filter is overfilled rather than losing keys),
// sets out[i] to whether keys[i] was new (len(out) must be at least
// len(keys)) and returns how many were. See AddHashBatch for the
// equivalence and costs.
func (f *Filter) AddBatch(keys [][]byte, out []bool) int {
	_ = out[:len(keys)]
	var hs [batchLen]uint64
	added := 0
	for len(keys) > 0 {
		n := min(len(keys), batchLen)
		f.p.Hasher.Sum64Batch(keys[:n], hs[:n])
		for i := 0; i < n; {
			i += f.AddHashBatch(hs[i:n], out[i:n])
			if i == n {
				break
			}
			out[i] = f.AddHash(hs[i])
			i++
		}
		for _, ok := range out[:n] {
			if ok {
				added++
			}
		}
		keys, out = keys[n:], out[n:]
	}
	return added
}
