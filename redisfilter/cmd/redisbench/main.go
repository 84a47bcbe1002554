// Command redisbench measures redisfilter against real redis-server
// processes, side by side with a naive Redis Bloom client and with an
// in-process filter, and prints a Markdown table of keys per second (the
// figures in docs/distributed.md).
//
// By default it starts its own servers on free loopback ports (one
// standalone node and a 3-master cluster, in a temporary directory that it
// removes); -node and -cluster use existing ones instead.
//
//	go run ./cmd/redisbench                # from redisfilter/
//	go run ./cmd/redisbench -keys 200000 -single 5000
//
// Clients, for each batch size B (keys per call):
//
//   - rbbf: redisfilter, one BITFIELD (add) or GETRANGE (query) per key, B
//     commands per pipeline.
//   - naive-pipelined: a standard Bloom filter in one Redis string (as
//     Redisson and most Go libraries do), k SETBIT or GETBIT per key, B*k
//     commands per pipeline.
//   - naive-roundtrips (B = 1 only): the same, one round trip per bit, as
//     clients that issue GETBIT in a loop do.
//   - in-process: bloom.Blocked, AddHash/ContainsHash (B = 1) or
//     AddBatch/ContainsBatch.
//
// All clients use one connection at a time (no client-side parallelism):
// the figures compare round trips and server work, not connection pools.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/redisfilter"
	"github.com/bloomery/bloomery/redisfilter/internal/redisproc"
	"github.com/redis/go-redis/v9"
)

func main() {
	var (
		node     = flag.String("node", "", "address of an existing redis-server (default: start one)")
		clusterA = flag.String("cluster", "", "comma-separated addresses of an existing cluster (default: start 3 masters)")
		capacity = flag.Int("capacity", 1_000_000, "filter capacity (1% FPR)")
		nkeys    = flag.Int("keys", 200_000, "keys per measurement for batches of 100 and 1000")
		single   = flag.Int("single", 5_000, "keys per measurement for batches of 1")
		runs     = flag.Int("runs", 3, "repetitions of each measurement; the best rate is reported")
	)
	flag.Parse()
	repeats = max(1, *runs)
	if err := run(*node, *clusterA, *capacity, *nkeys, *single); err != nil {
		fmt.Fprintln(os.Stderr, "redisbench:", err)
		os.Exit(1)
	}
}

type row struct {
	target, client string
	batch          int
	add, query     float64
}

func run(node, clusterAddrs string, capacity, nkeys, single int) error {
	var stop []func()
	defer func() {
		for _, f := range stop {
			f()
		}
	}()
	if node == "" || clusterAddrs == "" {
		dir, err := os.MkdirTemp("", "redisbench-")
		if err != nil {
			return err
		}
		stop = append(stop, func() { os.RemoveAll(dir) })
		if node == "" {
			s, err := redisproc.Start(filepath.Join(dir, "node"), false, false)
			if err != nil {
				return err
			}
			stop = append([]func(){func() { s.Stop() }}, stop...)
			node = s.Addr()
		}
		if clusterAddrs == "" {
			c, err := redisproc.StartCluster(filepath.Join(dir, "cluster"), 3, false)
			if err != nil {
				return err
			}
			stop = append([]func(){c.Stop}, stop...)
			clusterAddrs = strings.Join(c.Addrs(), ",")
		}
	}
	targets := []struct {
		name string
		c    redis.UniversalClient
	}{
		{"1 node", redis.NewClient(&redis.Options{Addr: node})},
		{"3-master cluster", redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(clusterAddrs, ",")})},
	}
	var rows []row
	ctx := context.Background()
	p := redisfilter.Params{Capacity: capacity, FPR: 0.01}
	hs := make([]uint64, (repeats+1)*(nkeys+single))
	for i := range hs {
		hs[i] = hashing.XXH3(0).Sum64(strconv.AppendInt([]byte("bench-"), int64(i), 10))
	}
	for _, tg := range targets {
		defer tg.c.Close()
		for _, batch := range []int{1, 100, 1000} {
			n := nkeys
			if batch == 1 {
				n = single
			}
			name := fmt.Sprintf("bench-%d", batch)
			f, err := redisfilter.Create(ctx, tg.c, name, p)
			if err != nil {
				return err
			}
			r := row{target: tg.name, client: "rbbf (redisfilter)", batch: batch}
			if r.add, err = rate(n, batch, func(b []uint64) error {
				if len(b) == 1 {
					_, err := f.AddHash(ctx, b[0])
					return err
				}
				_, err := f.AddBatch(ctx, b, nil)
				return err
			}, hs); err != nil {
				return err
			}
			out := make([]bool, batch)
			if r.query, err = rate(n, batch, func(b []uint64) error {
				if len(b) == 1 {
					_, err := f.ContainsHash(ctx, b[0])
					return err
				}
				return f.ContainsBatch(ctx, b, out)
			}, hs); err != nil {
				return err
			}
			rows = append(rows, r)
			if batch == 1 {
				f.SetCountAdds(false)
				r = row{target: tg.name, client: "rbbf, SetCountAdds(false)", batch: 1}
				if r.add, err = rate(n, 1, func(b []uint64) error { _, err := f.AddHash(ctx, b[0]); return err }, hs[repeats*n:]); err != nil {
					return err
				}
				r.query = rows[len(rows)-1].query
				rows = append(rows, r)
			}
			if err := f.Delete(ctx); err != nil {
				return err
			}
			nv := newNaive(tg.c, "naive-"+name, capacity)
			r = row{target: tg.name, client: "naive, k SETBIT/GETBIT pipelined", batch: batch}
			if r.add, err = rate(n, batch, func(b []uint64) error { return nv.add(ctx, b) }, hs); err != nil {
				return err
			}
			if r.query, err = rate(n, batch, func(b []uint64) error { return nv.contains(ctx, b, out) }, hs); err != nil {
				return err
			}
			rows = append(rows, r)
			if batch == 1 {
				r = row{target: tg.name, client: "naive, k round trips per key", batch: 1}
				if r.add, err = rate(n, 1, func(b []uint64) error { return nv.addSeq(ctx, b[0]) }, hs); err != nil {
					return err
				}
				if r.query, err = rate(n, 1, func(b []uint64) error { _, err := nv.containsSeq(ctx, b[0]); return err }, hs); err != nil {
					return err
				}
				rows = append(rows, r)
			}
			tg.c.Del(ctx, nv.key)
		}
	}
	local, err := bloom.NewBlocked(bloom.Params{Capacity: capacity, FPR: 0.01})
	if err != nil {
		return err
	}
	for _, batch := range []int{1, 100, 1000} {
		local.Reset()
		out := make([]bool, batch)
		r := row{target: "in process", client: "bloom.Blocked", batch: batch}
		r.add, _ = rate(nkeys, batch, func(b []uint64) error {
			if len(b) == 1 {
				local.AddHash(b[0])
			} else {
				local.AddBatch(b)
			}
			return nil
		}, hs)
		r.query, _ = rate(nkeys, batch, func(b []uint64) error {
			if len(b) == 1 {
				local.ContainsHash(b[0])
			} else {
				local.ContainsBatch(b, out)
			}
			return nil
		}, hs)
		rows = append(rows, r)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("capacity %d keys at 1%% FPR (%d blocks), %s/%s, GOMAXPROCS %d, best of %d runs, %s, load average %s\n\n",
		capacity, local.Blocks(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), repeats,
		time.Now().UTC().Format(time.RFC3339), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Println("| target | client | batch | add keys/s | query keys/s |")
	fmt.Println("|---|---|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %d | %s | %s |\n", r.target, r.client, r.batch, human(r.add), human(r.query))
	}
	return nil
}

// repeats is the number of runs of each measurement (-runs).
var repeats = 3

// rate calls fn on consecutive batches of n hashes, repeats times, each
// run on the next n hashes (so every add is of a new key), and returns the
// best rate in keys per second. The best of several runs filters out the
// scheduling noise of a shared machine.
func rate(n, batch int, fn func([]uint64) error, hs []uint64) (float64, error) {
	best := 0.0
	for r := range repeats {
		run := hs[r*n : (r+1)*n]
		start := time.Now()
		for i := 0; i < n; i += batch {
			if err := fn(run[i:min(n, i+batch)]); err != nil {
				return 0, err
			}
		}
		best = max(best, float64(n)/time.Since(start).Seconds())
	}
	return best, nil
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.1f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// naive is the common Redis Bloom client design: one string of m bits
// (one key, so one shard), k bit positions per key spread over the whole
// string (a standard, not blocked, Bloom filter with optimal k), one
// SETBIT/GETBIT per position.
type naive struct {
	c   redis.UniversalClient
	key string
	m   uint64
	k   int
}

func newNaive(c redis.UniversalClient, name string, capacity int) *naive {
	// m and k of a standard Bloom filter at 1%: 9.59 bits/key, k = 7.
	return &naive{c: c, key: "{" + name + "}:bits", m: uint64(float64(capacity) * 9.59), k: 7}
}

func (n *naive) pos(h uint64, i int) int64 {
	// Kirsch-Mitzenmacher double hashing, as Guava and Redisson-style
	// clients do, mapped with multiply-shift.
	g := h + uint64(i)*hashing.Remix(h, 1)
	hi, _ := bits.Mul64(g, n.m)
	return int64(hi)
}

func (n *naive) add(ctx context.Context, hs []uint64) error {
	p := n.c.Pipeline()
	for _, h := range hs {
		for i := range n.k {
			p.SetBit(ctx, n.key, n.pos(h, i), 1)
		}
	}
	_, err := p.Exec(ctx)
	return err
}

func (n *naive) contains(ctx context.Context, hs []uint64, out []bool) error {
	p := n.c.Pipeline()
	cmds := make([]*redis.IntCmd, 0, len(hs)*n.k)
	for _, h := range hs {
		for i := range n.k {
			cmds = append(cmds, p.GetBit(ctx, n.key, n.pos(h, i)))
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	for j := range hs {
		out[j] = true
		for i := range n.k {
			if cmds[j*n.k+i].Val() == 0 {
				out[j] = false
			}
		}
	}
	return nil
}

func (n *naive) addSeq(ctx context.Context, h uint64) error {
	for i := range n.k {
		if err := n.c.SetBit(ctx, n.key, n.pos(h, i), 1).Err(); err != nil {
			return err
		}
	}
	return nil
}

func (n *naive) containsSeq(ctx context.Context, h uint64) (bool, error) {
	for i := range n.k {
		v, err := n.c.GetBit(ctx, n.key, n.pos(h, i)).Result()
		if err != nil {
			return false, err
		}
		if v == 0 {
			return false, nil // a naive client stops at the first clear bit
		}
	}
	return true, nil
}
