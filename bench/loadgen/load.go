package main

import (
	"bytes"
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
			tpl := newTemplate(o, cfg.Pipeline)
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
				var out []byte
				if tpl != nil {
					out = tpl.fill(k, ks, rng)
				} else {
					c.buf = c.buf[:0]
					for u := 0; u < k; u++ {
						for j := range items {
							items[j] = ks.item(rng.IntN(ks.n))
						}
						c.buf = o.add(c.buf, items)
					}
					out = c.buf
				}
				t0 := time.Now()
				if _, err := c.conn.Write(out); err != nil {
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

// template is a whole pipeline of one op encoded once, with the byte
// offsets of its item slots: since every item has itemLen bytes, the
// encoding of a unit has the same length and layout whatever its items,
// so a pipeline is sent by copying the drawn items into their slots
// (itemLen bytes each) instead of encoding every command again. Items
// are drawn in the same order as encoding unit by unit would draw them.
type template struct {
	buf     []byte
	slots   []int // offsets of the item slots, unit by unit
	unitLen int
	items   int // items per unit
}

// newTemplate encodes p units of o with placeholder items of itemLen zero
// bytes and finds their slots; nil when the layout is not the fixed one
// (then the caller encodes every unit).
func newTemplate(o *op, p int) *template {
	ph := make([][]byte, o.Items)
	for j := range ph {
		ph[j] = make([]byte, itemLen)
	}
	unit := o.add(nil, ph)
	t := &template{unitLen: len(unit), items: o.Items}
	for u := 0; u < p; u++ {
		t.buf = append(t.buf, unit...)
	}
	zero := make([]byte, itemLen)
	for i := 0; i+itemLen <= len(t.buf); {
		if bytes.Equal(t.buf[i:i+itemLen], zero) {
			t.slots = append(t.slots, i)
			i += itemLen
			continue
		}
		i++
	}
	if len(t.slots) != p*o.Items {
		return nil
	}
	return t
}

// fill draws the items of k units into their slots and returns the bytes
// of those k units (valid until the next fill).
func (t *template) fill(k int, ks *keyspace, rng *rand.Rand) []byte {
	for _, off := range t.slots[:k*t.items] {
		putItem(t.buf[off:off+itemLen], uint64(rng.IntN(ks.n)))
	}
	return t.buf[:k*t.unitLen]
}

// digitPairs holds "00" to "99".
var digitPairs = func() (d [200]byte) {
	for i := range 100 {
		d[2*i], d[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return d
}()

// putItem writes item v (v < 10^itemLen) into dst[:itemLen]: the same
// bytes as ks.item(v), formatted two digits at a time instead of read from
// the table, whose random rows miss the cache.
func putItem(dst []byte, v uint64) {
	_ = dst[itemLen-1]
	for i := itemLen - 2; i >= 0; i -= 2 {
		q := v / 100
		r := v - q*100
		dst[i], dst[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		v = q
	}
}
