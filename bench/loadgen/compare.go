package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// baselines maps each bloomery shape to the redis-server commands of the same
// shape it is compared with in the same run.
var baselines = map[string][]string{
	"bf.add":     {"redis:set"},
	"cf.add":     {"redis:set"},
	"bf.exists":  {"redis:exists"},
	"cf.exists":  {"redis:exists"},
	"bf.madd":    {"redis:mset", "redis:set-pipe"},
	"bf.mexists": {"redis:exists-multi", "redis:exists-pipe"},
}

// recorded is RedisBloom's best recorded figure for a shape and pipeline
// depth, in items/s, over its four runs (2.8 and 8.x, two each) in
// ../shared/reference/redisbloom.md §7.1 (redis-benchmark, 50 connections,
// 2-vCPU VM with background load 2.9-5.8). BF.MEXISTS was not recorded; BF.MADD's
// figure stands in for it.
var recorded = map[string]map[int]float64{
	"bf.add":     {1: 45998, 32: 664231},
	"bf.exists":  {1: 45362, 32: 682594},
	"bf.madd":    {1: 22962 * 100, 32: 53792 * 100},
	"bf.mexists": {1: 22962 * 100, 32: 53792 * 100},
	"cf.add":     {1: 42753, 32: 689655},
	"cf.exists":  {1: 44405, 32: 654665},
}

type sample struct {
	res  result
	cpu  time.Duration // server CPU during the run
	load string
}

func compareMain(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	bin := fs.String("bloomery", envOr("BLOOMERY_BIN", "/tmp/bloomery"), "bloomery binary (go build -o /tmp/bloomery ./cmd/bloomery)")
	redisBin := fs.String("redis", "/usr/bin/redis-server", "redis-server binary (empty: no baseline)")
	runs := fs.Int("runs", 3, "runs of every cell (medians are reported)")
	dur := fs.Duration("d", 3*time.Second, "duration of one run")
	conns := fs.Int("c", 50, "connections")
	pipes := fs.String("P", "1,32", "pipeline depths")
	batch := fs.Int("batch", 100, "items per batch command")
	space := fs.Int("keyspace", 1000000, "distinct items")
	pre := fs.Int("prefill", 200000, "items 0..N-1 added before each query run")
	shapes := fs.String("shapes", "bf.add,bf.exists,bf.madd,bf.mexists,cf.add,cf.exists", "bloomery shapes")
	procs := fs.Int("procs", 1, "client GOMAXPROCS")
	out := fs.String("out", "", "write the markdown report here (default stdout)")
	rb := fs.String("redis-benchmark", "", "also cross-check with this redis-benchmark binary (one run per cell)")
	fs.Parse(args)
	runtime.GOMAXPROCS(*procs)

	var depths []int
	for _, s := range strings.Split(*pipes, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || p < 1 {
			return fmt.Errorf("bad pipeline depth %q", s)
		}
		depths = append(depths, p)
	}
	all := ops(*batch)
	names := strings.Split(*shapes, ",")
	for _, n := range names {
		if o, ok := all[n]; !ok || o.Server != "bloomery" {
			return fmt.Errorf("unknown bloomery shape %q", n)
		}
	}
	ks := newKeyspace(*space)

	tmp, err := os.MkdirTemp("", "loadgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	procsUp := map[string]*proc{}
	defer func() {
		for _, p := range procsUp {
			p.Stop()
		}
	}()
	os.Mkdir(tmp+"/bloomery", 0o755)
	if procsUp["bloomery"], err = startBloomery(*bin, tmp+"/bloomery"); err != nil {
		return err
	}
	if *redisBin != "" {
		os.Mkdir(tmp+"/redis", 0o755)
		if procsUp["redis"], err = startRedis(*redisBin, tmp+"/redis"); err != nil {
			return err
		}
	}
	ctl := map[string]*client{}
	for name, p := range procsUp {
		c, err := dial(p.Addr)
		if err != nil {
			return err
		}
		defer c.Close()
		ctl[name] = c
	}

	startLoad := loadAvg()
	began := time.Now()
	// samples keys: "<bloomery shape>|<op name>/<P>", so each baseline is
	// kept with the shape it was measured next to.
	samples := map[string][]sample{}
	measure := func(shape string, o *op, p int) error {
		srv := procsUp[o.Server]
		c := ctl[o.Server]
		if err := reset(c, o.Server); err != nil {
			return fmt.Errorf("%s reset: %w", o.Server, err)
		}
		if o.Query && *pre > 0 {
			if err := prefill(c, ks, o, min(*pre, ks.n)); err != nil {
				return fmt.Errorf("%s: %w", o.Name, err)
			}
		}
		cpu0, err := srv.CPU()
		if err != nil {
			return err
		}
		ld := loadAvg()
		res, err := runLoad(loadConfig{Addr: srv.Addr, Conns: *conns, Pipeline: p, Duration: *dur,
			Seed: uint64(time.Now().UnixNano())}, ks, o)
		if err != nil {
			return fmt.Errorf("%s P=%d: %w", o.Name, p, err)
		}
		cpu1, err := srv.CPU()
		if err != nil {
			return err
		}
		key := fmt.Sprintf("%s|%s/%d", shape, o.Name, p)
		samples[key] = append(samples[key], sample{res, cpu1 - cpu0, ld})
		fmt.Fprintf(os.Stderr, "%-20s P=%-3d %10.0f cmds/s %11.0f items/s  p50 %7.3f ms  server CPU %5.2f µs/item  load %s\n",
			o.Name, p, res.CmdsPerSec(), res.ItemsPerSec(), ms(res.P50),
			float64((cpu1-cpu0).Microseconds())/float64(res.Items), ld)
		return nil
	}
	for r := 0; r < *runs; r++ {
		fmt.Fprintf(os.Stderr, "== run %d/%d\n", r+1, *runs)
		for _, n := range names {
			for _, p := range depths {
				cell := []string{n}
				if procsUp["redis"] != nil {
					cell = append(cell, baselines[n]...)
				}
				if r%2 == 1 { // alternate who goes first
					slices.Reverse(cell)
				}
				for _, on := range cell {
					if err := measure(n, all[on], p); err != nil {
						return err
					}
				}
			}
		}
	}
	endLoad := loadAvg()

	var xcheck []string
	if *rb != "" {
		if xcheck, err = crossCheck(*rb, procsUp, ctl, *conns, *batch); err != nil {
			return err
		}
	}

	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	fmt.Fprintf(w, "Measured %s UTC, %v; %d runs of %v per cell, %d connections, keyspace %d, prefill %d for queries, client GOMAXPROCS %d, %d CPUs. Load average (1, 5, 15 min) at start %s, at end %s.\n\n",
		began.UTC().Format("2006-01-02 15:04"), time.Since(began).Round(time.Second), *runs, *dur, *conns,
		*space, *pre, *procs, runtime.NumCPU(), startLoad, endLoad)
	fmt.Fprintln(w, "| shape | P | bloomery cmds/s | bloomery items/s | p50 ms | server CPU µs/item | redis-server baseline | baseline cmds/s | baseline items/s | baseline CPU µs/item | items/s ratio | RedisBloom recorded items/s | vs recorded |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range names {
		for _, p := range depths {
			bs := samples[fmt.Sprintf("%s|%s/%d", n, n, p)]
			bItems := med(bs, func(s sample) float64 { return s.res.ItemsPerSec() })
			rec := recorded[n][p]
			vsRec := "—"
			if rec > 0 {
				vsRec = fmt.Sprintf("%.2f×", bItems/rec)
			}
			base := []string{"—"}
			if procsUp["redis"] != nil {
				base = baselines[n]
			}
			for i, bn := range base {
				row := []string{"", "", "", "", "", ""}
				if i == 0 {
					row = []string{"`" + n + "`", strconv.Itoa(p),
						num(med(bs, func(s sample) float64 { return s.res.CmdsPerSec() })),
						num(bItems),
						fmt.Sprintf("%.2f", med(bs, func(s sample) float64 { return ms(s.res.P50) })),
						fmt.Sprintf("%.2f", med(bs, cpuPerItem))}
				}
				if bn == "—" {
					row = append(row, "—", "—", "—", "—", "—")
				} else {
					rs := samples[fmt.Sprintf("%s|%s/%d", n, bn, p)]
					rItems := med(rs, func(s sample) float64 { return s.res.ItemsPerSec() })
					row = append(row, "`"+all[bn].Desc+"`",
						num(med(rs, func(s sample) float64 { return s.res.CmdsPerSec() })),
						num(rItems),
						fmt.Sprintf("%.2f", med(rs, cpuPerItem)),
						fmt.Sprintf("%.2f", bItems/rItems))
				}
				if i == 0 {
					row = append(row, num(rec), vsRec)
				} else {
					row = append(row, "", "")
				}
				fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
			}
		}
	}
	fmt.Fprintln(w, "\nEvery run (items/s):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| op | P | runs | load at each run |")
	fmt.Fprintln(w, "|---|---|---|---|")
	var keys []string
	for k := range samples {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name, p, _ := strings.Cut(k, "/")
		if shape, o, _ := strings.Cut(name, "|"); shape != o {
			name = shape + " → " + o
		} else {
			name = o
		}
		var vs, ls []string
		for _, s := range samples[k] {
			vs = append(vs, num(s.res.ItemsPerSec()))
			ls = append(ls, s.load)
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", name, p, strings.Join(vs, " / "), strings.Join(ls, " / "))
	}
	if len(xcheck) > 0 {
		fmt.Fprintln(w, "\nCross-check with redis-benchmark (one run each, requests/s as it reports them):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| server | command | P | requests/s | items/s | p50 ms | server CPU µs/item |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, l := range xcheck {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

func cpuPerItem(s sample) float64 {
	return float64(s.cpu.Microseconds()) / float64(s.res.Items)
}

func med(ss []sample, f func(sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// num formats a rate with thousands separators.
func num(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// crossCheck runs redis-benchmark with custom commands against both
// servers, recreating the keys before each command like §7.1.
func crossCheck(rb string, procsUp map[string]*proc, ctl map[string]*client, conns, batch int) ([]string, error) {
	type cell struct {
		server string
		args   []string
		items  int
	}
	many := func(prefix []string, per []string) []string {
		a := append([]string(nil), prefix...)
		for i := 0; i < batch; i++ {
			a = append(a, per...)
		}
		return a
	}
	cells := []cell{
		{"bloomery", []string{"BF.ADD", bfKey, "__rand_int__"}, 1},
		{"bloomery", []string{"BF.EXISTS", bfKey, "__rand_int__"}, 1},
		{"bloomery", many([]string{"BF.MADD", bfKey}, []string{"__rand_int__"}), batch},
		{"bloomery", many([]string{"BF.MEXISTS", bfKey}, []string{"__rand_int__"}), batch},
		{"bloomery", []string{"CF.ADD", cfKey, "__rand_int__"}, 1},
		{"bloomery", []string{"CF.EXISTS", cfKey, "__rand_int__"}, 1},
		{"redis", []string{"SET", "__rand_int__", "1"}, 1},
		{"redis", []string{"EXISTS", "__rand_int__"}, 1},
		{"redis", many([]string{"MSET"}, []string{"__rand_int__", "1"}), batch},
		{"redis", many([]string{"EXISTS"}, []string{"__rand_int__"}), batch},
	}
	var lines []string
	for _, p := range []int{1, 32} {
		for _, c := range cells {
			srv := procsUp[c.server]
			if srv == nil {
				continue
			}
			if c.args[0] == "BF.ADD" || c.args[0] == "BF.MADD" || c.args[0] == "CF.ADD" || c.args[0] == "SET" || c.args[0] == "MSET" {
				if err := reset(ctl[c.server], c.server); err != nil {
					return nil, err
				}
			}
			n := 100000
			if p > 1 {
				n = 1000000
			}
			if c.items > 1 {
				n /= 10
			}
			host, port, _ := strings.Cut(srv.Addr, ":")
			argv := append([]string{"-h", host, "-p", port, "-c", strconv.Itoa(conns), "-n", strconv.Itoa(n),
				"-r", "1000000", "-P", strconv.Itoa(p), "--csv"}, c.args...)
			cpu0, err := srv.CPU()
			if err != nil {
				return nil, err
			}
			outb, err := exec.Command(rb, argv...).CombinedOutput()
			cpu1, cerr := srv.CPU()
			if err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("redis-benchmark %v: %v: %s", c.args[:2], err, outb)
			}
			rps, p50, err := parseBenchCSV(string(outb))
			if err != nil {
				return nil, fmt.Errorf("redis-benchmark %v: %v: %s", c.args[:2], err, outb)
			}
			shown := strings.Join(c.args, " ")
			if c.items > 1 {
				if c.args[0] == "BF.MADD" || c.args[0] == "BF.MEXISTS" {
					shown = fmt.Sprintf("%s %s __rand_int__ ×%d", c.args[0], bfKey, batch)
				} else if c.args[0] == "MSET" {
					shown = fmt.Sprintf("MSET (__rand_int__ 1) ×%d", batch)
				} else {
					shown = fmt.Sprintf("EXISTS __rand_int__ ×%d", batch)
				}
			}
			line := fmt.Sprintf("| %s | `%s` | %d | %s | %s | %.3f | %.2f |", c.server, shown, p, num(rps), num(rps*float64(c.items)), p50,
				float64((cpu1-cpu0).Microseconds())/float64(n*c.items))
			fmt.Fprintln(os.Stderr, line, " load", loadAvg())
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// parseBenchCSV reads redis-benchmark --csv output: a header line, then
// "name","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
func parseBenchCSV(s string) (rps, p50 float64, err error) {
	for _, l := range strings.Split(s, "\n") {
		f := strings.Split(strings.TrimSpace(l), "\",\"")
		if len(f) < 5 || strings.HasPrefix(f[0], "\"test") {
			continue
		}
		rps, err1 := strconv.ParseFloat(strings.Trim(f[1], "\""), 64)
		p50, err2 := strconv.ParseFloat(strings.Trim(f[4], "\""), 64)
		if err1 == nil && err2 == nil {
			return rps, p50, nil
		}
	}
	return 0, 0, fmt.Errorf("no result line in redis-benchmark output")
}
