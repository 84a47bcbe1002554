package scalable

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// batchConfigs are chains that grow (or fill) within a few hundred keys,
// at error rates high enough that keys added earlier in a batch make
// later ones false positives.
var batchConfigs = []Params{
	{InitialCapacity: 40, FPR: 0.2, Sizing: SizingRedis},
	{InitialCapacity: 25, FPR: 0.05},
	{InitialCapacity: 30, FPR: 0.1, Blocked: true},
	{InitialCapacity: 10, FPR: 0.3, Expansion: 1},
	{InitialCapacity: 100, FPR: 0.1, Sizing: SizingRedis, NonScaling: true},
	{InitialCapacity: 64, FPR: 0.1, Blocked: true, NonScaling: true},
}

// randomBatch draws a batch of 0..maxLen keys from a pool of poolSize
// keys, so that batches repeat keys within and across themselves.
func randomBatch(s *filtertest.SplitMix64, poolSize, maxLen int) [][]byte {
	n := int(s.Next() % uint64(maxLen+1))
	b := make([][]byte, n)
	for i := range b {
		b[i] = []byte(fmt.Sprintf("k%d", s.Next()%uint64(poolSize)))
	}
	return b
}

func mustMarshal(t *testing.T, f *Filter) []byte {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTryAddBatchMatchesSequential: over random batches with duplicates,
// false positives, growth and (non-scaling) refusals, TryAddBatch gives
// the same replies, the same stopping point and error, the same Len and
// the same encoded bytes as TryAdd key by key; and no key it accepted is
// ever missing afterwards.
func TestTryAddBatchMatchesSequential(t *testing.T) {
	for ci, p := range batchConfigs {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			s := filtertest.SplitMix64(uint64(100 + ci))
			seq, bat := mustNew(t, p), mustNew(t, p)
			var accepted [][]byte
			refused := 0
			for round := range 300 {
				keys := randomBatch(&s, 2000, 200)
				want := make([]bool, len(keys))
				wantN, wantErr := len(keys), error(nil)
				for i, k := range keys {
					ok, err := seq.TryAdd(k)
					if err != nil {
						wantN, wantErr = i, err
						break
					}
					want[i] = ok
				}
				got := make([]bool, len(keys))
				n, err := bat.TryAddBatch(keys, got)
				if n != wantN || (err == nil) != (wantErr == nil) {
					t.Fatalf("round %d: batch handled %d keys (err %v), sequential %d (err %v)", round, n, err, wantN, wantErr)
				}
				if err != nil {
					if !errors.Is(err, bloomery.ErrFull) {
						t.Fatalf("round %d: error %v does not wrap ErrFull", round, err)
					}
					refused++
				}
				for i := range n {
					if got[i] != want[i] {
						t.Fatalf("round %d key %d (%s): batch %v, sequential %v", round, i, keys[i], got[i], want[i])
					}
				}
				accepted = append(accepted, keys[:n]...)
				if bat.Len() != seq.Len() || bat.NumLinks() != seq.NumLinks() {
					t.Fatalf("round %d: batch Len %d links %d, sequential %d, %d", round, bat.Len(), bat.NumLinks(), seq.Len(), seq.NumLinks())
				}
				if !bytes.Equal(mustMarshal(t, bat), mustMarshal(t, seq)) {
					t.Fatalf("round %d: encodings differ", round)
				}
			}
			for _, k := range accepted {
				if !bat.Contains(k) {
					t.Fatalf("false negative: %s", k)
				}
			}
			if p.NonScaling && refused == 0 {
				t.Fatal("a non-scaling chain was never refused: the test did not fill it")
			}
			if !p.NonScaling && bat.NumLinks() < 4 {
				t.Fatalf("only %d links: the test did not exercise growth", bat.NumLinks())
			}
		})
	}
}

// TestAddBatchMatchesSequential: AddBatch is Add key by key, including
// overfilling a full non-scaling chain.
func TestAddBatchMatchesSequential(t *testing.T) {
	for ci, p := range batchConfigs {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			s := filtertest.SplitMix64(uint64(200 + ci))
			seq, bat := mustNew(t, p), mustNew(t, p)
			for round := range 200 {
				keys := randomBatch(&s, 2000, 200)
				want := make([]bool, len(keys))
				wantAdded := 0
				for i, k := range keys {
					want[i] = seq.Add(k)
					if want[i] {
						wantAdded++
					}
				}
				got := make([]bool, len(keys))
				if added := bat.AddBatch(keys, got); added != wantAdded {
					t.Fatalf("round %d: AddBatch added %d, sequential %d", round, added, wantAdded)
				}
				for i := range keys {
					if got[i] != want[i] {
						t.Fatalf("round %d key %d: batch %v, sequential %v", round, i, got[i], want[i])
					}
				}
				if !bytes.Equal(mustMarshal(t, bat), mustMarshal(t, seq)) {
					t.Fatalf("round %d: encodings differ", round)
				}
				for _, k := range keys {
					if !bat.Contains(k) {
						t.Fatalf("round %d: false negative %s", round, k)
					}
				}
			}
		})
	}
}

// TestAddHashBatchStopsBeforeGrowth: AddHashBatch never appends a link; it
// stops at the first new hash that would need one, having changed nothing
// for it.
func TestAddHashBatchStopsBeforeGrowth(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 100, FPR: 0.01, Sizing: SizingRedis})
	hs := filtertest.Hashes(300, 7)
	out := make([]bool, len(hs))
	n := f.AddHashBatch(hs, out)
	if f.NumLinks() != 1 || f.Len() != 100 {
		t.Fatalf("after the batch: %d links, Len %d; want 1 link holding 100", f.NumLinks(), f.Len())
	}
	if n >= len(hs) || f.ContainsHash(hs[n]) {
		t.Fatalf("stopped at %d of %d", n, len(hs))
	}
	before := mustMarshal(t, f)
	if m := f.AddHashBatch(hs[n:], out[n:]); m != 0 {
		t.Fatalf("a full newest link took %d more hashes", m)
	}
	if !bytes.Equal(before, mustMarshal(t, f)) {
		t.Fatal("a stopped batch changed the filter")
	}
	if ok, err := f.TryAddHash(hs[n]); !ok || err != nil || f.NumLinks() != 2 {
		t.Fatalf("TryAddHash after the stop: %v %v, %d links", ok, err, f.NumLinks())
	}
	if m := f.AddHashBatch(hs[n+1:], out[n+1:]); n+1+m != len(hs) {
		t.Fatalf("after growth the batch handled %d of %d", m, len(hs)-n-1)
	}
}

// TestBatchFullSize: 10^6 keys through TryAddBatch in batches of 100 on a
// chain that grows from 1000 keys give the same filter bytes as TryAdd,
// no false negatives, and ContainsBatch/ContainsHashBatch agree with
// Contains on present and absent keys.
func TestBatchFullSize(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	p := Params{InitialCapacity: 1000, FPR: 0.01, Sizing: SizingRedis}
	seq, bat := mustNew(t, p), mustNew(t, p)
	keys := filtertest.Keys(n, 5)
	out := make([]bool, 100)
	for i := 0; i < n; i += 100 {
		b := keys[i:min(i+100, n)]
		if m, err := bat.TryAddBatch(b, out); m != len(b) || err != nil {
			t.Fatalf("batch at %d: %d, %v", i, m, err)
		}
		for j, k := range b {
			ok, err := seq.TryAdd(k)
			if err != nil || ok != out[j] {
				t.Fatalf("key %d: sequential %v %v, batch %v", i+j, ok, err, out[j])
			}
		}
	}
	if !bytes.Equal(mustMarshal(t, bat), mustMarshal(t, seq)) {
		t.Fatal("encodings differ")
	}
	if bat.NumLinks() < 7 { // 10^5 keys from 1000 need 7 links, 10^6 need 10
		t.Fatalf("%d links: no growth exercised", bat.NumLinks())
	}
	hashes := make([]uint64, n)
	for i, k := range keys {
		hashes[i] = bat.Hasher().Sum64(k)
	}
	filtertest.NoFalseNegatives(t, "TryAddBatch", bat.ContainsHash, hashes)
	probe := append(filtertest.Keys(n/10, 6), keys[:n/10]...)
	got := make([]bool, len(probe))
	bat.ContainsBatch(probe, got)
	gotH := make([]bool, len(probe))
	ph := make([]uint64, len(probe))
	for i, k := range probe {
		ph[i] = bat.Hasher().Sum64(k)
	}
	bat.ContainsHashBatch(ph, gotH)
	for i, k := range probe {
		if want := bat.Contains(k); got[i] != want || gotH[i] != want {
			t.Fatalf("probe %d: ContainsBatch %v ContainsHashBatch %v, Contains %v", i, got[i], gotH[i], want)
		}
	}
}

func TestBatchZeroAllocs(t *testing.T) {
	f := mustNew(t, Params{InitialCapacity: 1 << 20, FPR: 0.01, Sizing: SizingRedis})
	g := mustNew(t, Params{InitialCapacity: 1 << 20, FPR: 0.01, Blocked: true})
	keys := filtertest.Keys(100, 3)
	out := make([]bool, len(keys))
	filtertest.ZeroAllocs(t, "TryAddBatch", func() { f.TryAddBatch(keys, out) })
	filtertest.ZeroAllocs(t, "AddBatch blocked", func() { g.AddBatch(keys, out) })
	filtertest.ZeroAllocs(t, "ContainsBatch", func() { f.ContainsBatch(keys, out) })
	filtertest.ZeroAllocs(t, "ContainsBatch blocked", func() { g.ContainsBatch(keys, out) })
}

// BenchmarkMAdd compares 100-key batches against TryAdd key by key on a
// filter the size of the server benchmark's (BF.RESERVE 0.01 1000000)
// with the load generator's items (12 decimal digits drawn from 10^6, so
// most are present after the first 10^6), laid out in the order they are
// used, as a server finds them in its read buffer.
func BenchmarkMAdd(b *testing.B) {
	const draws = 1 << 20
	buf := make([]byte, 0, draws*12)
	pick := filtertest.SplitMix64(12)
	for range draws {
		buf = fmt.Appendf(buf, "%012d", pick.Next()%1_000_000)
	}
	items := make([][]byte, draws)
	for i := range items {
		items[i] = buf[12*i : 12*i+12 : 12*i+12]
	}
	out := make([]bool, 100)
	for _, mode := range []string{"batch", "sequential"} {
		b.Run(mode, func(b *testing.B) {
			f := mustNew(b, Params{InitialCapacity: 1_000_000, FPR: 0.01, Sizing: SizingRedis})
			for _, it := range items {
				f.Add(it)
			}
			i := 0
			for b.Loop() {
				batch := items[i : i+100]
				if i += 100; i+100 > len(items) {
					i = 0
				}
				if mode == "batch" {
					f.TryAddBatch(batch, out)
				} else {
					for _, k := range batch {
						f.TryAdd(k)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/key")
		})
	}
}

// BenchmarkBatchLargeLink runs 100-hash ContainsHashBatch and
// AddHashBatch calls on a chain whose one link holds 10^7 keys (12 MB at
// 1%, where bloom.Filter.ContainsBatch prefetches), with hashes drawn
// from the added ones (present) or fresh (absent, ContainsHashBatch only,
// so the chain does not change between calls).
func BenchmarkBatchLargeLink(b *testing.B) {
	const n = 10_000_000
	f := mustNew(b, Params{InitialCapacity: n, FPR: 0.01, Sizing: SizingRedis})
	pick := filtertest.SplitMix64(21)
	added := make([]uint64, n)
	for i := range added {
		added[i] = pick.Next()
		f.AddHash(added[i])
	}
	present := make([]uint64, 1<<16)
	absent := make([]uint64, 1<<16)
	for i := range present {
		present[i] = added[pick.Next()%n]
		absent[i] = pick.Next()
	}
	out := make([]bool, 100)
	run := func(name string, hs []uint64, add bool) {
		b.Run(name, func(b *testing.B) {
			off := 0
			for b.Loop() {
				if add {
					f.AddHashBatch(hs[off:off+100], out)
				} else {
					f.ContainsHashBatch(hs[off:off+100], out)
				}
				off = (off + 100) % (len(hs) - 100)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/key")
		})
	}
	run("contains/present", present, false)
	run("contains/absent", absent, false)
	run("add/present", present, true)
}
