package redisfilter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/fpmath"
	"github.com/bloomery/bloomery/redisfilter"
	"github.com/bloomery/bloomery/redisfilter/internal/redisproc"
	"github.com/redis/go-redis/v9"
)

const millionKeys = 1_000_000

// testKeys is the number of keys of TestMillionKeys: 10^6, or 10^5 under
// the race detector.
func testKeys(t *testing.T) int {
	if raceDetector {
		t.Log("race detector: 10^5 keys (the 10^6-key run is go test without -race)")
		return millionKeys / 10
	}
	return millionKeys
}

// TestMillionKeys adds 10^6 keys through Redis (batches of 1000) and the
// same keys to an in-process bloom.Blocked with the same Params, and
// requires: identical "new" answers for every add, no false negatives,
// identical answers for 10^6 absent keys (so the FPR is the in-process
// one, checked within 15% of fpmath.BlockedFPR), the same count, and an
// Export that encodes to exactly the in-process filter's bytes. On the
// cluster it also requires segments on every master.
func TestMillionKeys(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			nkeys := testKeys(t)
			p := redisfilter.Params{Capacity: nkeys, FPR: 0.01, Hasher: hashing.XXH3(0x5eed)}
			name := "million-" + tg.name
			f, err := redisfilter.Create(ctx, tg.client, name, p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Delete(ctx)
			// A loaded CI machine (or the race detector) can stretch a
			// pipeline of 4096 commands well past the 10 s default.
			f.SetTimeout(2 * time.Minute)
			local, err := bloom.NewBlocked(bloom.Params{Capacity: p.Capacity, FPR: p.FPR, Hasher: p.Hasher})
			if err != nil {
				t.Fatal(err)
			}
			if m := f.Meta(); m.Blocks != local.Blocks() || m.K != local.K() {
				t.Fatalf("layout %d blocks k=%d, in-process %d blocks k=%d", m.Blocks, m.K, local.Blocks(), local.K())
			}
			hs := hashesOf(p.Hasher, 0, nkeys)
			added := make([]bool, 1000)
			start := time.Now()
			for i := 0; i < len(hs); i += 1000 {
				batch := hs[i : i+1000]
				if _, err := f.AddBatch(ctx, batch, added); err != nil {
					t.Fatal(err)
				}
				for j, h := range batch {
					if want := local.AddHash(h); added[j] != want {
						t.Fatalf("add %d: Redis new=%v, in-process new=%v", i+j, added[j], want)
					}
				}
			}
			t.Logf("%s: %d adds in %v", tg.name, nkeys, time.Since(start))
			out := make([]bool, len(hs))
			start = time.Now()
			if err := f.ContainsBatch(ctx, hs, out); err != nil {
				t.Fatal(err)
			}
			for i, ok := range out {
				if !ok {
					t.Fatalf("false negative for key %d", i)
				}
			}
			t.Logf("%s: %d queries in %v", tg.name, nkeys, time.Since(start))
			absent := hashesOf(p.Hasher, nkeys, nkeys)
			if err := f.ContainsBatch(ctx, absent, out); err != nil {
				t.Fatal(err)
			}
			fp := 0
			for i, h := range absent {
				if want := local.ContainsHash(h); out[i] != want {
					t.Fatalf("absent probe %d: Redis %v, in-process %v", i, out[i], want)
				}
				if out[i] {
					fp++
				}
			}
			got := float64(fp) / float64(len(absent))
			want := fpmath.BlockedFPR(float64(local.Bits()), float64(nkeys), local.K(), bloom.BlockBits)
			t.Logf("%s: FPR %.4f%% (model %.4f%%)", tg.name, 100*got, 100*want)
			if math.Abs(got-want) > 0.15*want {
				t.Fatalf("FPR %.5f outside model %.5f ±15%%", got, want)
			}
			if n, err := f.Len(ctx); err != nil || n != local.Len() {
				t.Fatalf("Len %d (%v), in-process %d", n, err, local.Len())
			}
			exp, err := f.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requireSameBytes(t, exp, local)
			if tg.name == "cluster" {
				requireSpread(t, tg.client.(*redis.ClusterClient), f)
			}
		})
	}
}

func requireSameBytes(t *testing.T, got, want *bloom.Blocked) {
	t.Helper()
	a, err := got.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("exported filter (%d bytes, %d keys) differs from the in-process one (%d bytes, %d keys)", len(a), got.Len(), len(b), want.Len())
	}
}

// requireSpread checks that every master of the cluster holds some of the
// filter's segments, and that every segment is on exactly one master.
func requireSpread(t *testing.T, c *redis.ClusterClient, f *redisfilter.Filter) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	perNode := map[string]int{}
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		cnt := 0
		for _, k := range f.SegmentKeys() {
			slot, err := n.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				return err
			}
			keys, err := n.ClusterCountKeysInSlot(ctx, int(slot)).Result()
			if err != nil {
				return err
			}
			if keys > 0 {
				if e, err := n.Exists(ctx, k).Result(); err == nil && e == 1 {
					cnt++
				}
			}
		}
		mu.Lock()
		perNode[n.Options().Addr] = cnt
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for addr, n := range perNode {
		if n == 0 {
			t.Errorf("master %s holds none of the %d segments", addr, len(f.SegmentKeys()))
		}
		total += n
	}
	t.Logf("segments per master: %v", perNode)
	if len(perNode) != 3 || total != len(f.SegmentKeys()) {
		t.Fatalf("%d masters hold %d segments, want 3 masters and %d", len(perNode), total, len(f.SegmentKeys()))
	}
}

// TestImportExportRoundTrip builds a filter in process, imports it, queries
// it through Redis and exports it back: the answers match and the container
// bytes are identical.
func TestImportExportRoundTrip(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			local, err := bloom.NewBlocked(bloom.Params{Capacity: 50000, FPR: 0.02, Hasher: hashing.XXH3(42)})
			if err != nil {
				t.Fatal(err)
			}
			hs := hashesOf(local.Hasher(), 0, 50000)
			for _, h := range hs {
				local.AddHash(h)
			}
			f, err := redisfilter.Import(ctx, tg.client, "import-"+tg.name, local, redisfilter.ImportOptions{SegmentBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Delete(ctx)
			probe := append(hs[:20000:20000], hashesOf(local.Hasher(), 1<<30, 200000)...)
			out := make([]bool, len(probe))
			if err := f.ContainsBatch(ctx, probe, out); err != nil {
				t.Fatal(err)
			}
			for i, h := range probe {
				if out[i] != local.ContainsHash(h) {
					t.Fatalf("probe %d: Redis %v, in-process %v", i, out[i], !out[i])
				}
			}
			for _, h := range probe[:100] { // the single-key path
				ok, err := f.ContainsHash(ctx, h)
				if err != nil || ok != local.ContainsHash(h) {
					t.Fatalf("ContainsHash = %v, %v", ok, err)
				}
			}
			g, err := redisfilter.Open(ctx, tg.client, "import-"+tg.name, redisfilter.Params{Hasher: hashing.XXH3(42)})
			if err != nil {
				t.Fatal(err)
			}
			exp, err := g.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requireSameBytes(t, exp, local)
			if _, err := redisfilter.Import(ctx, tg.client, "import-"+tg.name, local, redisfilter.ImportOptions{}); !errors.Is(err, redisfilter.ErrExists) {
				t.Fatalf("import over an existing filter: %v, want ErrExists", err)
			}
		})
	}
}

// TestCreateOpen checks the metadata rules: Create is idempotent for equal
// parameters and refuses others; Open checks hasher and layout; missing
// and corrupt metadata are reported.
func TestCreateOpen(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := newStandaloneClient(t, standalone.Addr())
	p := redisfilter.Params{Capacity: 10000, FPR: 0.01, Hasher: hashing.XXH3(9)}
	f, err := redisfilter.Create(ctx, c, "meta", p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Delete(ctx)
	if _, err := f.AddString(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if g, err := redisfilter.Create(ctx, c, "meta", p); err != nil || g.Meta().Blocks != f.Meta().Blocks {
		t.Fatalf("second Create with the same params: %v", err)
	}
	f.SetCountAdds(false)
	if added, err := f.AddString(ctx, "y"); err != nil || !added {
		t.Fatalf("uncounted add: %v, %v", added, err)
	}
	if n, err := f.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len %d (%v) after one counted and one uncounted add", n, err)
	}
	if ok, err := f.ContainsString(ctx, "y"); err != nil || !ok {
		t.Fatalf("uncounted key: %v, %v", ok, err)
	}
	for name, q := range map[string]redisfilter.Params{
		"capacity": {Capacity: 20000, FPR: 0.01, Hasher: hashing.XXH3(9)},
		"fpr":      {Capacity: 10000, FPR: 0.001, Hasher: hashing.XXH3(9)},
		"k":        {Capacity: 10000, FPR: 0.01, HashFuncs: 3, Hasher: hashing.XXH3(9)},
		"seed":     {Capacity: 10000, FPR: 0.01, Hasher: hashing.XXH3(10)},
		"alg":      {Capacity: 10000, FPR: 0.01, Hasher: hashing.XXH64(9)},
		"segments": {Capacity: 10000, FPR: 0.01, Hasher: hashing.XXH3(9), SegmentBytes: 64},
	} {
		if _, err := redisfilter.Create(ctx, c, "meta", q); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("Create with other %s: %v, want ErrIncompatible", name, err)
		}
		if _, err := redisfilter.Open(ctx, c, "meta", q); !errors.Is(err, bloomery.ErrIncompatible) {
			t.Errorf("Open with other %s: %v, want ErrIncompatible", name, err)
		}
	}
	if _, err := redisfilter.Open(ctx, c, "meta", redisfilter.Params{Hasher: hashing.XXH3(9)}); err != nil {
		t.Fatalf("Open with any size: %v", err)
	}
	if _, err := redisfilter.Open(ctx, c, "meta", redisfilter.Params{}); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("Open with the default hasher: %v, want ErrIncompatible", err)
	}
	keyed, err := redisfilter.Create(ctx, c, "keyed", redisfilter.Params{Capacity: 100, FPR: 0.01, Hasher: hashing.SipHash([16]byte{7})})
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Delete(ctx)
	if _, err := redisfilter.Open(ctx, c, "keyed", redisfilter.Params{Hasher: hashing.SipHash([16]byte{8})}); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("Open with another SipHash key: %v", err)
	}
	att, err := redisfilter.Attach(ctx, c, "keyed", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := att.ContainsString(ctx, "x"); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Fatalf("keyless handle query: %v", err)
	}
	if _, err := redisfilter.Open(ctx, c, "nope", p); !errors.Is(err, redisfilter.ErrNotFound) {
		t.Fatalf("Open of a missing filter: %v", err)
	}
	if _, err := redisfilter.Create(ctx, c, "bad{name}", p); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Fatalf("brace in name: %v", err)
	}
	mk := redisfilter.MetaKey("", "meta")
	c.HSet(ctx, mk, "format", "99")
	if _, err := redisfilter.Open(ctx, c, "meta", p); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Fatalf("format 99: %v", err)
	}
	c.HSet(ctx, mk, "format", "1", "segments", "7")
	if _, err := redisfilter.Open(ctx, c, "meta", p); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("inconsistent segments: %v", err)
	}
	c.HDel(ctx, mk, "segments")
	if _, err := redisfilter.Open(ctx, c, "meta", p); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatalf("missing field: %v", err)
	}
}

// TestLargerThan512MB creates a 640 MB filter (beyond one Redis string)
// and adds keys at chosen blocks: the first block of several segments and
// the very last block, so the segments stay small in memory.
func TestLargerThan512MB(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			p := redisfilter.Params{Capacity: 512_000_000, BitsPerKey: 10}
			f, err := redisfilter.Create(ctx, tg.client, "huge-"+tg.name, p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Delete(ctx)
			m := f.Meta()
			if m.Bytes() <= 512<<20 || m.SegmentBlocks*64 > redisfilter.DefaultMaxSegmentBytes {
				t.Fatalf("%d bytes in segments of %d", m.Bytes(), m.SegmentBlocks*64)
			}
			// h = ceil(b * 2^64 / blocks) maps to block b under
			// hashing.Reduce; Mix64 of it still scatters the bits.
			hashFor := func(b uint64) uint64 {
				q, r := bits.Div64(b, 0, m.Blocks) // b < blocks, so no overflow
				if r != 0 {
					q++
				}
				return q
			}
			var hs []uint64
			for s := uint64(0); s < m.Segments; s += m.Segments / 7 {
				hs = append(hs, hashFor(s*m.SegmentBlocks))
			}
			hs = append(hs, hashFor(m.Blocks-1))
			if hashing.Reduce(hs[len(hs)-1], m.Blocks) != m.Blocks-1 {
				t.Fatal("hashFor does not reach the last block")
			}
			if n, err := f.AddBatch(ctx, hs, nil); err != nil || n != len(hs) {
				t.Fatalf("AddBatch: %d new, %v", n, err)
			}
			for _, h := range hs {
				if ok, err := f.ContainsHash(ctx, h); err != nil || !ok {
					t.Fatalf("ContainsHash = %v, %v", ok, err)
				}
			}
			last := f.SegmentKeys()[m.Segments-1]
			n, err := tg.client.StrLen(ctx, last).Result()
			if err != nil || n == 0 || uint64(n) > m.SegmentBlocks*64 {
				t.Fatalf("last segment length %d, %v", n, err)
			}
			if ok, err := f.ContainsHash(ctx, hashFor(m.SegmentBlocks/2)); err != nil || ok {
				t.Fatalf("probe of an empty block = %v, %v", ok, err)
			}
		})
	}
}

// TestWriterProcesses runs three writer processes (the test binary in
// writer mode) that add overlapping key ranges to one cluster filter at
// the same time; the result must equal, bit for bit, an in-process filter
// holding the union, with every key present and an exact-or-lower count.
func TestWriterProcesses(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := newClusterClient(t, cluster.Addrs())
	capacity, per, overlap := 300000, 100000, 20000
	if raceDetector {
		capacity, per, overlap = 90000, 30000, 6000
	}
	p := redisfilter.Params{Capacity: capacity, FPR: 0.01}
	f, err := redisfilter.Create(ctx, c, "writers", p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Delete(ctx)
	type result struct {
		out string
		err error
	}
	res := make([]result, 3)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := fmt.Sprintf("%s|writers|%d|%d|%d|500", strings.Join(cluster.Addrs(), ","), capacity, w*(per-overlap), per)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), writerEnv+"="+spec)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, stderr.String())
			}
			res[w] = result{strings.TrimSpace(string(out)), err}
		}()
	}
	wg.Wait()
	total := 0
	for w, r := range res {
		if r.err != nil {
			t.Fatalf("writer %d: %v", w, r.err)
		}
		n, err := strconv.Atoi(r.out)
		if err != nil {
			t.Fatalf("writer %d printed %q", w, r.out)
		}
		total += n
	}
	distinct := 3*per - 2*overlap
	local, _ := bloom.NewBlocked(bloom.Params{Capacity: capacity, FPR: 0.01})
	hs := hashesOf(local.Hasher(), 0, distinct)
	for _, h := range hs {
		local.AddHash(h)
	}
	out := make([]bool, len(hs))
	if err := f.ContainsBatch(ctx, hs, out); err != nil {
		t.Fatal(err)
	}
	for i, ok := range out {
		if !ok {
			t.Fatalf("false negative for key %d after concurrent writers", i)
		}
	}
	n, err := f.Len(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each distinct key is reported new by at most one writer (BITFIELD
	// is atomic); only keys that were false positives when added are
	// not counted, about FPR x distinct.
	if n != total || n > distinct || float64(n) < float64(distinct)*0.98 {
		t.Fatalf("count %d (writers reported %d) for %d distinct keys", n, total, distinct)
	}
	exp, err := f.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := exp.Image().Words, local.Image().Words
	if len(a) != len(b) {
		t.Fatalf("%d words, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("word %d: %#x, in-process %#x", i, a[i], b[i])
		}
	}
}

// TestConcurrentHandle shares one handle between goroutines that add and
// query at once (for the race detector) and checks every key afterwards.
func TestConcurrentHandle(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := newStandaloneClient(t, standalone.Addr())
	f, err := redisfilter.Create(ctx, c, "shared-handle", redisfilter.Params{Capacity: 40000, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Delete(ctx)
	hs := hashesOf(f.Hasher(), 0, 40000)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := hs[g*10000 : (g+1)*10000]
			out := make([]bool, 500)
			for i := 0; i < len(part); i += 500 {
				if _, err := f.AddBatch(ctx, part[i:i+500], nil); err != nil {
					errs <- err
					return
				}
				if err := f.ContainsBatch(ctx, part[i:i+500], out); err != nil {
					errs <- err
					return
				}
				for j, ok := range out {
					if !ok {
						errs <- fmt.Errorf("goroutine %d: key %d absent right after its add", g, i+j)
						return
					}
				}
				if _, err := f.AddHash(ctx, part[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := make([]bool, len(hs))
	if err := f.ContainsBatch(ctx, hs, out); err != nil {
		t.Fatal(err)
	}
	for i, ok := range out {
		if !ok {
			t.Fatalf("false negative for key %d", i)
		}
	}
}

// TestRestartPersistence adds keys to a server with appendonly yes, stops
// it (queries then fail with ErrStore, never "absent"), restarts it and
// finds every key and the same bits.
func TestRestartPersistence(t *testing.T) {
	needRedis(t)
	s, err := redisproc.Start(filepath.Join(tmpRoot, "persist"), true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx := context.Background()
	c := newStandaloneClient(t, s.Addr())
	p := redisfilter.Params{Capacity: 100000, FPR: 0.01}
	f, err := redisfilter.Create(ctx, c, "persist", p)
	if err != nil {
		t.Fatal(err)
	}
	local, _ := bloom.NewBlocked(bloom.Params{Capacity: p.Capacity, FPR: p.FPR})
	hs := hashesOf(local.Hasher(), 0, 100000)
	for i := 0; i < len(hs); i += 1000 {
		if _, err := f.AddBatch(ctx, hs[i:i+1000], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hs {
		local.AddHash(h)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	f.SetTimeout(2 * time.Second)
	for _, h := range hs[:3] {
		ok, err := f.ContainsHash(ctx, h)
		if err == nil || !errors.Is(err, redisfilter.ErrStore) {
			t.Fatalf("query with the server down: %v, %v; want an ErrStore error", ok, err)
		}
	}
	out := make([]bool, 100)
	if err := f.ContainsBatch(ctx, hs[:100], out); !errors.Is(err, redisfilter.ErrStore) {
		t.Fatalf("batch query with the server down: %v", err)
	}
	if _, err := f.AddHash(ctx, hs[0]); !errors.Is(err, redisfilter.ErrStore) {
		t.Fatalf("add with the server down: %v", err)
	}
	t.Logf("error with the server down: %v", f.ContainsBatch(ctx, hs[:1], out))
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	g, err := redisfilter.Open(ctx, c, "persist", p)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]bool, len(hs))
	if err := g.ContainsBatch(ctx, hs, all); err != nil {
		t.Fatal(err)
	}
	for i, ok := range all {
		if !ok {
			t.Fatalf("key %d lost across the restart", i)
		}
	}
	exp, err := g.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	requireSameBytes(t, exp, local)
}

// TestClusterNodeDown stops one master of a cluster of its own (the
// shared one stays whole for the other tests, and for the next run under
// -count): every query either answers "present" for an added key or fails
// with ErrStore, and queries of keys whose segment lives on the stopped
// node fail.
func TestClusterNodeDown(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	own, err := redisproc.StartCluster(t.TempDir(), 3, false)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	c := newClusterClient(t, own.Addrs())
	f, err := redisfilter.Create(ctx, c, "down", redisfilter.Params{Capacity: 10000, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	hs := hashesOf(f.Hasher(), 0, 2000)
	if _, err := f.AddBatch(ctx, hs, nil); err != nil {
		t.Fatal(err)
	}
	dead := own.Nodes[2]
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	keySlot := map[string]int{}
	for _, k := range f.SegmentKeys() {
		s, err := c.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		keySlot[k] = int(s)
	}
	if err := dead.Stop(); err != nil {
		t.Fatal(err)
	}
	f.SetTimeout(3 * time.Second)
	onDead, live := 0, 0
	for _, h := range hs {
		if onDead >= 3 && live >= 3 {
			break
		}
		block, _ := bloom.BlockedLocate(h, f.Meta().Blocks, f.Meta().K)
		segKey := f.SegmentKeys()[block/f.Meta().SegmentBlocks]
		slot := keySlot[segKey]
		isDead := false
		for _, sh := range shards {
			onDeadNode := false
			for _, n := range sh.Nodes {
				if n.Role == "master" && n.Port == int64(dead.Port) {
					onDeadNode = true
				}
			}
			for _, r := range sh.Slots {
				if onDeadNode && slot >= int(r.Start) && slot <= int(r.End) {
					isDead = true
				}
			}
		}
		ok, err := f.ContainsHash(ctx, h)
		switch {
		case err != nil && !errors.Is(err, redisfilter.ErrStore):
			t.Fatalf("error not wrapping ErrStore: %v", err)
		case err == nil && !ok:
			t.Fatalf("an added key answered absent with a node down")
		case isDead && err == nil:
			t.Fatalf("query of a segment on the stopped node answered %v", ok)
		}
		if isDead {
			onDead++
		} else {
			live++
		}
	}
	if onDead == 0 {
		t.Fatal("no probed key lives on the stopped node")
	}
	out := make([]bool, len(hs))
	if err := f.ContainsBatch(ctx, hs, out); !errors.Is(err, redisfilter.ErrStore) {
		t.Fatalf("batch with a node down: %v", err)
	}
}
