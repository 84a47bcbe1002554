package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loadConfig describes one measured run.
type loadConfig struct {
	Addr     string
	Conns    int           // concurrent connections, one goroutine each
	Pipeline int           // units in flight per connection: written at once, then all replies read
	Duration time.Duration // > 0: run for this long
	Units    int           // Duration == 0: this many units in total, spread over the connections
	Seed     uint64        // connection i draws items from PCG(Seed, i)
	// Present: every item queried was added before (a replay of an add run
	// with the same Seed, Conns, Pipeline and Units), so every query reply
	// must say present. Only meaningful with Units.
	Present bool
}

// result of one run. Throughput counts completed units over the time from
// the first write to the last reply.
type result struct {
	Units, Items, Cmds int64
	Elapsed            time.Duration
	P50, P99           time.Duration // round-trip time of one pipeline
}

func (r result) UnitsPerSec() float64 { return float64(r.Units) / r.Elapsed.Seconds() }
func (r result) ItemsPerSec() float64 { return float64(r.Items) / r.Elapsed.Seconds() }
func (r result) CmdsPerSec() float64  { return float64(r.Cmds) / r.Elapsed.Seconds() }

// runLoad drives o against cfg.Addr. Every reply is checked (o.read); the
// first wrong reply or error stops the run and is returned.
func runLoad(cfg loadConfig, ks *keyspace, o *op) (result, error) {
	if cfg.Conns < 1 || cfg.Pipeline < 1 {
		return result{}, errors.New("conns and pipeline must be >= 1")
	}
	if cfg.Duration <= 0 && cfg.Units < 1 {
		return result{}, errors.New("give a duration or a unit count")
	}
	clients := make([]*client, cfg.Conns)
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range clients {
		c, err := dial(cfg.Addr)
		if err != nil {
			return result{}, err
		}
		clients[i] = c
	}
	var (
		stop     atomic.Bool
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
		units    = make([]int64, cfg.Conns)
		lats     = make([][]time.Duration, cfg.Conns)
		startGun = make(chan struct{})
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		stop.Store(true)
	}
	var start time.Time
	for i, c := range clients {
		quota := 0
		if cfg.Duration <= 0 {
			quota = cfg.Units / cfg.Conns
			if i < cfg.Units%cfg.Conns {
				quota++
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
			items := make([][]byte, o.Items)
			lat := make([]time.Duration, 0, 1024)
			var done int64
			<-startGun
			for !stop.Load() {
				k := cfg.Pipeline
				if cfg.Duration > 0 {
					if time.Since(start) >= cfg.Duration {
						break
					}
				} else {
					k = min(k, quota-int(done))
					if k == 0 {
						break
					}
				}
				c.buf = c.buf[:0]
				for u := 0; u < k; u++ {
					for j := range items {
						items[j] = ks.item(rng.IntN(ks.n))
					}
					c.buf = o.add(c.buf, items)
				}
				t0 := time.Now()
				if _, err := c.conn.Write(c.buf); err != nil {
					fail(fmt.Errorf("conn %d: write: %w", i, err))
					return
				}
				for u := 0; u < k; u++ {
					if err := o.read(&c.r, o.Items, cfg.Present); err != nil {
						fail(fmt.Errorf("conn %d, %s: %w", i, o.Name, err))
						return
					}
				}
				lat = append(lat, time.Since(t0))
				done += int64(k)
			}
			units[i], lats[i] = done, lat
		}()
	}
	start = time.Now()
	close(startGun)
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return result{}, firstErr
	}
	var res result
	var all []time.Duration
	for i := range units {
		res.Units += units[i]
		all = append(all, lats[i]...)
	}
	res.Items = res.Units * int64(o.Items)
	res.Cmds = res.Units * int64(o.Cmds)
	res.Elapsed = elapsed
	if len(all) > 0 {
		slices.Sort(all)
		res.P50 = all[len(all)/2]
		res.P99 = all[len(all)*99/100]
	}
	return res, nil
}
