// Command loadgen is a Redis-protocol load generator for `bloomery serve`,
// with Debian's redis-server as the same-run baseline.
//
//	loadgen compare [flags]   start both servers, run every shape at each
//	                          pipeline depth, several runs, print a report
//	loadgen run [flags]       one shape against a server already running
//
// The client is a raw RESP2 pipelined client (resp.go): each connection
// writes a whole pipeline of P units in one system call, then reads and
// checks all P replies before writing again (the way redis-benchmark
// pipelines). Every reply is checked for its type and range; a wrong reply
// fails the run. Items are 12-digit decimal strings drawn uniformly from a
// keyspace (default 10^6), like redis-benchmark's __rand_int__.
//
// See docs/server-benchmarks.md for the figures and how they were made.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, `usage: loadgen compare [flags]   (loadgen compare -h for flags)
       loadgen run [flags]       (loadgen run -h for flags)`)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "compare":
		err = compareMain(os.Args[2:])
	case "run":
		err = runMain(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func runMain(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:6380", "server address")
	shape := fs.String("shape", "bf.add", "shape: "+strings.Join(shapeNames(), ", "))
	conns := fs.Int("c", 50, "connections")
	pipe := fs.Int("P", 1, "pipeline depth (units in flight per connection)")
	dur := fs.Duration("d", 3*time.Second, "run time (0: use -n)")
	units := fs.Int("n", 0, "units in total when -d 0")
	batch := fs.Int("batch", 100, "items per batch command")
	space := fs.Int("keyspace", 1000000, "distinct items")
	pre := fs.Int("prefill", 200000, "for query shapes: items 0..N-1 added first")
	doReset := fs.Bool("reset", true, "FLUSHALL (and re-create bench:bf, bench:cf on bloomery) first")
	procs := fs.Int("procs", 1, "client GOMAXPROCS")
	seed := fs.Uint64("seed", 1, "item stream seed")
	present := fs.Bool("present", false, "every query must find its item (replay of an add run with the same -seed -c -P -n)")
	fs.Parse(args)
	runtime.GOMAXPROCS(*procs)
	o, ok := ops(*batch)[*shape]
	if !ok {
		return fmt.Errorf("unknown shape %q", *shape)
	}
	ks := newKeyspace(*space)
	c, err := dial(*addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if *doReset {
		if err := reset(c, o.Server); err != nil {
			return err
		}
		if o.Query && *pre > 0 {
			if err := prefill(c, ks, o, min(*pre, ks.n)); err != nil {
				return err
			}
		}
	}
	res, err := runLoad(loadConfig{Addr: *addr, Conns: *conns, Pipeline: *pipe, Duration: *dur,
		Units: *units, Seed: *seed, Present: *present}, ks, o)
	if err != nil {
		return err
	}
	fmt.Printf("%s (%s): c=%d P=%d  %.0f units/s  %.0f items/s  %.0f cmds/s  p50 %.3f ms  p99 %.3f ms  (%d units in %v, load %s)\n",
		o.Name, o.Desc, *conns, *pipe, res.UnitsPerSec(), res.ItemsPerSec(), res.CmdsPerSec(),
		ms(res.P50), ms(res.P99), res.Units, res.Elapsed.Round(time.Millisecond), loadAvg())
	return nil
}

func shapeNames() []string {
	return []string{"bf.add", "bf.exists", "bf.madd", "bf.mexists", "cf.add", "cf.exists",
		"redis:set", "redis:exists", "redis:mset", "redis:exists-multi", "redis:set-pipe", "redis:exists-pipe"}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
