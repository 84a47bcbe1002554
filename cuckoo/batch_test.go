package cuckoo

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// batchChunks splits hs into chunks of lengths that cover the pipeline's
// edge cases (empty, shorter than a group, exact groups, a group plus
// one, several groups, long runs), cycling through them.
// The tests below force the prefetch pipeline (pipelineMinBytes = 0) on
// their small tables.

func batchChunks(hs []uint64) [][]uint64 {
	lens := []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65, 100, 1000, 4096}
	var out [][]uint64
	for i := 0; len(hs) > 0; i++ {
		n := min(len(hs), lens[i%len(lens)])
		out = append(out, hs[:n])
		hs = hs[n:]
	}
	return out
}

func mustEncode(t *testing.T, f *Filter) []byte {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// InsertBatch must leave the table byte for byte as InsertHash on each
// hash in turn does, at every load up to and past the first failure
// (which both report at the same hash, with ErrFull), for odd and even
// bucket counts and every slot alignment, through the pipeline (forced on
// every table size) and through the plain loop small tables take.
func TestInsertBatchMatchesInsertHash(t *testing.T) {
	for _, mb := range []int{0, pipelineMinBytes} {
		t.Run(fmt.Sprintf("pipelineMinBytes=%d", mb), func(t *testing.T) {
			defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
			pipelineMinBytes = mb
			testInsertBatchMatches(t)
		})
	}
}

func testInsertBatchMatches(t *testing.T) {
	for _, n := range []int{1, 7, 1000, 10_001, sizeN(1_000_000, 100_000)} {
		for _, fb := range []int{8, 12, 13, 16} {
			name := fmt.Sprintf("n=%d f=%d", n, fb)
			one := mustNew(t, Params{Capacity: n, FingerprintBits: fb})
			bat := mustNew(t, Params{Capacity: n, FingerprintBits: fb})
			// Twice the capacity: the filter fills and refuses keys.
			hs := filtertest.Hashes(2*n+100, uint64(n*31+fb))
			stoppedAt := -1
			pos := 0
			for ci, c := range batchChunks(hs) {
				k, err := bat.InsertBatch(c)
				want := len(c)
				var wantErr error
				for i, h := range c {
					if e := one.InsertHash(h); e != nil {
						want, wantErr = i, e
						break
					}
				}
				if k != want || (err == nil) != (wantErr == nil) {
					t.Fatalf("%s: chunk at %d: InsertBatch = %d, %v; InsertHash stopped at %d, %v", name, pos, k, err, want, wantErr)
				}
				// Every chunk on small filters; every 50th and the last
				// on the large one, where each comparison reads 1.5 MB.
				if (n <= 10_001 || ci%50 == 0 || err != nil) && (!bytes.Equal(mustEncode(t, bat), mustEncode(t, one)) || bat.Len() != one.Len()) {
					t.Fatalf("%s: tables differ after the chunk at %d", name, pos)
				}
				if err != nil {
					if !errors.Is(err, bloomery.ErrFull) || !bat.Full() {
						t.Fatalf("%s: failure %v (victim slot used: %v)", name, err, bat.Full())
					}
					stoppedAt = pos + k
					break
				}
				pos += len(c)
			}
			if stoppedAt < 0 {
				t.Fatalf("%s: %d keys into a filter for %d never filled it", name, len(hs), n)
			}
			filtertest.NoFalseNegatives(t, name+" batch", bat.ContainsHash, hs[:stoppedAt])
			checkCount(t, bat)
		}
	}
}

// A batch that stops at a key that does not fit leaves the filter exactly
// as the keys before it left it, and retrying from that key changes
// nothing either.
func TestInsertBatchFullLeavesFilterUnchanged(t *testing.T) {
	defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
	pipelineMinBytes = 0
	for _, fb := range []int{8, 12} {
		f := mustNew(t, Params{Capacity: 1000, FingerprintBits: fb})
		hs := filtertest.Hashes(5000, uint64(fb))
		k, err := f.InsertBatch(hs)
		if !errors.Is(err, bloomery.ErrFull) {
			t.Fatalf("f=%d: 5000 keys into a filter for 1000: %d, %v", fb, k, err)
		}
		ref := mustNew(t, Params{Capacity: 1000, FingerprintBits: fb})
		for _, h := range hs[:k] {
			if ref.InsertHash(h) != nil {
				t.Fatal("reference insert failed early")
			}
		}
		before := mustEncode(t, f)
		if !bytes.Equal(before, mustEncode(t, ref)) {
			t.Fatalf("f=%d: filter after the failed batch differs from its first %d keys", fb, k)
		}
		if k2, err := f.InsertBatch(hs[k:]); k2 != 0 || !errors.Is(err, bloomery.ErrFull) {
			t.Fatalf("f=%d: retry from the failed key: %d, %v", fb, k2, err)
		}
		if !bytes.Equal(before, mustEncode(t, f)) {
			t.Fatalf("f=%d: retried failed batch changed the filter", fb)
		}
		filtertest.NoFalseNegatives(t, "full batch", f.ContainsHash, hs[:k])
	}
}

// AddBatch stores what AddHash in order stores, skipping the keys that do
// not fit and trying the rest.
func TestAddBatchMatchesAddHash(t *testing.T) {
	defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
	pipelineMinBytes = 0
	for _, n := range []int{7, 1000, 10_001} {
		one := mustNew(t, Params{Capacity: n, FingerprintBits: 8})
		bat := mustNew(t, Params{Capacity: n, FingerprintBits: 8})
		hs := filtertest.Hashes(3*n, uint64(n))
		stored, skipped := 0, 0
		for _, h := range hs {
			if one.AddHash(h) {
				stored++
			} else {
				skipped++
			}
		}
		if skipped == 0 {
			t.Fatalf("n=%d: no key was refused; the test does not reach the skip path", n)
		}
		if got := bat.AddBatch(hs); got != stored {
			t.Fatalf("n=%d: AddBatch stored %d, AddHash %d", n, got, stored)
		}
		if !bytes.Equal(mustEncode(t, bat), mustEncode(t, one)) {
			t.Fatalf("n=%d: tables differ", n)
		}
		checkCount(t, bat)
	}
}

// The pipeline's prefetches are hints: deleting between batches, so that
// the buckets a batch peeked at change under it, must not matter.
func TestInsertBatchInterleavedDeletes(t *testing.T) {
	defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
	pipelineMinBytes = 0
	one := mustNew(t, Params{Capacity: 20_000, FingerprintBits: 12})
	bat := mustNew(t, Params{Capacity: 20_000, FingerprintBits: 12})
	hs := filtertest.Hashes(60_000, 77)
	var live []uint64
	for i, c := range batchChunks(hs) {
		k, err := bat.InsertBatch(c)
		for _, h := range c[:k] {
			if one.InsertHash(h) != nil {
				t.Fatal("reference insert failed where the batch succeeded")
			}
		}
		live = append(live, c[:k]...)
		if err != nil {
			break
		}
		// Delete a third of what is live every other chunk.
		if i%2 == 1 {
			for j := 0; j < len(live)/3; j++ {
				if !bat.DeleteHash(live[j]) || !one.DeleteHash(live[j]) {
					t.Fatal("delete of a live key failed")
				}
			}
			live = live[len(live)/3:]
		}
		if !bytes.Equal(mustEncode(t, bat), mustEncode(t, one)) {
			t.Fatalf("chunk %d: tables differ", i)
		}
	}
	filtertest.NoFalseNegatives(t, "batch with deletes", bat.ContainsHash, live)
	checkCount(t, bat)
}

func TestBatchZeroAllocs(t *testing.T) {
	defer func(old int) { pipelineMinBytes = old }(pipelineMinBytes)
	pipelineMinBytes = 0
	f := mustNew(t, Params{Capacity: 100_000, FingerprintBits: 12})
	hs := filtertest.Hashes(1000, 6)
	filtertest.ZeroAllocs(t, "InsertBatch+Delete", func() {
		if _, err := f.InsertBatch(hs); err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			f.DeleteHash(h)
		}
	})
	filtertest.ZeroAllocs(t, "AddBatch+Delete", func() {
		f.AddBatch(hs)
		for _, h := range hs {
			f.DeleteHash(h)
		}
	})
}
