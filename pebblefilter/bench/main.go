// Command bench measures Bloomery's Pebble filter policies against
// Pebble's built-in Bloom filter on a fixed LSM shape, and prints the
// results as Markdown (docs/lsm.md holds a run).
//
// The shape is deterministic: every key is assigned to a level by a hash
// of its index; levels 6, 5, 4, 3 are written as sstables with the
// database's own per-level writer options (opts.MakeWriterOptions, the
// path compactions use, so each level's filter policy writes its tables)
// and ingested bottom-up, so each batch lands one level above the data it
// overlaps; L0 comes from two memtable flushes. Automatic compactions and
// read sampling are off, so the shape never changes, and it is printed.
//
// For each configuration and block-cache size the database is reopened
// with a fresh cache (runs times), warmed up, and then measured in four
// phases: Get of missing keys, SeekPrefixGE (with UseL6Filters) of other
// missing keys, Get of present keys, SeekPrefixGE of present keys. Reads
// are counted by a vfs.FS wrapper around ReadAt on .sst files (data block
// = offset below the table's DataSize). Counts come from the first run
// (the program checks that the other runs give the same counts); latency
// is the median over runs of each run's median.
//
// Configuration monkey-pilot allocates with weights measured by a pilot
// (pilot.go): per cache size, a separate database with the uniform filters
// replays the warm-up, Get-miss and Seek-miss phases with keys the measured
// runs never use, counting per level filter checks, false positives and
// data-block reads; round r > 1 replays it with round r-1's plan. The
// weights (reads per false positive) and probes (checks per lookup) go to
// pebblefilter.Allocate at the uniform budget; the report prints them and
// checks that every allocated configuration spends uniform's filter memory.
// With -pilot-tol the rounds continue (up to -pilot-rounds) until a fixed
// point: a round whose re-allocation would lower the modelled reads by less
// than the tolerance. Configuration monkey-pilot-elastic runs the same
// pilot but also estimates, per level, how fast its reads fall with its
// FPR (pebblefilter.Elasticities, from the rounds so far) and allocates
// with that elasticity (AllocOptions.Elasticity): the fixed point of
// "allocate with measured weights" is not the optimum of the true cost
// when a level's weight depends on its FPR. Pilot databases are measured
// once per process per filter set, so both pilots share their first
// rounds. -keyset selects other samples of measured lookup keys (never
// the pilot's), one or several (1-5: each cell is measured on each set),
// to see how much a result owes to the sample.
//
//	cd pebblefilter && go run ./bench -dir /tmp/lsm > out.md
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bloomery/bloomery/pebblefilter"
	"github.com/bloomery/bloomery/ribbon"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var (
	dirFlag         = flag.String("dir", "", "working directory for the databases (default: a new temporary directory, removed at exit)")
	keysFlag        = flag.Int("keys", 2_000_000, "keys in the database")
	missingFlag     = flag.Int("missing", 500_000, "lookups of missing keys per phase")
	presentFlag     = flag.Int("present", 200_000, "lookups of present keys per phase")
	warmFlag        = flag.Int("warmup", 100_000, "warm-up lookups after each open (not measured)")
	runsFlag        = flag.Int("runs", 3, "runs per configuration and cache size (latency is the median)")
	cachesFlag      = flag.String("caches", "4,16,64", "block cache sizes in MiB")
	configsFlag     = flag.String("configs", "none,pebble-bloom10,bloom10,monkey,monkey-pilot,ribbon-l6,monkey-get", "configurations to run")
	latFlag         = flag.String("latency-caches", "4,16,64", "cache sizes (MiB) measured -runs times; the others run once (counts are deterministic, only latency needs repeats)")
	bitsFlag        = flag.Float64("bits", 10, "bits per key of the uniform configurations and the budget of the allocated ones")
	minWFlag        = flag.Float64("min-weight", 0.01, "floor of the pilot-measured weights (monkey-pilot)")
	pilotRoundsFlag = flag.Int("pilot-rounds", 8, "pilot rounds of monkey-pilot: round 1 measures the uniform configuration, round r the plan of round r-1 (with -pilot-tol: the most rounds)")
	pilotTolFlag    = flag.Float64("pilot-tol", 0.005, "if > 0, stop the pilot early at the first round whose re-allocation lowers the modelled reads (at that round's measured weights) by less than this fraction: the plan is a fixed point")
	keysetFlag      = flag.String("keyset", "1", "key sets of the measured runs, 1-29, as a list (1,3,4) or a range (1-5): set k uses missing-key streams 2k+1 and 2k+2 for k > 1 (1: streams 1 and 2), disjoint from the pilot's 3 and 4, and a different draw of present keys; to see how much a result depends on the lookup sample. With several sets every cell is measured once per set (same database and filters) and its rows are labelled with the set")
)

const (
	valueLen = 64
	keyLen   = 16
)

// Level shares of the keys (the rest goes to L6) and tables per level.
var (
	shares = map[int]float64{0: 0.0067, 3: 0.001, 4: 0.009, 5: 0.09}
	tables = map[int]int{3: 1, 4: 1, 5: 5, 6: 12}
)

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// genKey writes key i of a stream: 16 pseudo-random bytes. Streams:
// 0 present keys, 1 and 2 missing keys (phases, warm-up), 3 and 4 missing
// keys of pilot runs (phases, warm-up). A collision
// between streams has probability about 2^-100.
func genKey(dst []byte, stream, i uint64) []byte {
	a := splitmix(stream<<58 ^ i)
	b := splitmix(a ^ 0x5851f42d4c957f2d)
	dst = binary.BigEndian.AppendUint64(dst[:0], a)
	return binary.BigEndian.AppendUint64(dst, b)
}

func levelOf(i uint64) int {
	u := float64(splitmix(i^0x243f6a8885a308d3)>>11) / (1 << 53)
	for _, l := range []int{0, 3, 4, 5} {
		if u < shares[l] {
			return l
		}
		u -= shares[l]
	}
	return 6
}

func value(dst []byte, i uint64) []byte {
	dst = dst[:0]
	x := i
	for len(dst) < valueLen {
		x = splitmix(x)
		dst = binary.LittleEndian.AppendUint64(dst, x)
	}
	return dst
}

// config is one filter configuration.
type config struct {
	name string
	// perCache: the filters depend on the cache size (rebuilt per size).
	perCache bool
	// getOnly: only the Get phases are meaningful.
	getOnly bool
	apply   func(o *pebble.Options, cacheBytes uint64) error
	// describe returns the per-level specs, for the report.
	describe func(cacheBytes uint64) string
}

var levelInfo [pebblefilter.NumLevels]pebblefilter.LevelInfo

func uniform(s pebblefilter.Spec) (p [pebblefilter.NumLevels]pebblefilter.Spec) {
	for i := range p {
		p[i] = s
	}
	return p
}

func specsString(p [pebblefilter.NumLevels]pebblefilter.Spec) string {
	var parts []string
	for i, s := range p {
		if levelInfo[i].Keys > 0 || levelInfo == ([pebblefilter.NumLevels]pebblefilter.LevelInfo{}) {
			parts = append(parts, fmt.Sprintf("L%d %s", i, s))
		}
	}
	return strings.Join(parts, ", ")
}

type planKey struct {
	cache uint64
	w     pebblefilter.Workload
}

var plans = map[planKey]pebblefilter.Plan{}

// allocate returns the Monkey plan for a cache size and workload, computed
// once (the numeric solver takes about a second).
func allocate(cacheBytes uint64, w pebblefilter.Workload) (pebblefilter.Plan, error) {
	k := planKey{cacheBytes, w}
	if p, ok := plans[k]; ok {
		return p, nil
	}
	p, err := pebblefilter.Allocate(levelInfo, pebblefilter.AllocOptions{BitsPerKey: *bitsFlag, CacheBytes: cacheBytes, Workload: w})
	if err == nil {
		plans[k] = p
	}
	return p, err
}

func configs() map[string]config {
	b := *bitsFlag
	ribbonFPR := ribbon.BloomEquivalentFPR(b)
	return map[string]config{
		"none": {name: "none", apply: func(o *pebble.Options, _ uint64) error {
			for i := range o.Levels {
				o.Levels[i].FilterPolicy = pebble.NoFilterPolicy
			}
			return nil
		}, describe: func(uint64) string { return "no filters" }},
		"pebble-bloom10": {name: fmt.Sprintf("pebble bloom(%g)", b), apply: func(o *pebble.Options, _ uint64) error {
			for i := range o.Levels {
				o.Levels[i].FilterPolicy = bloom.FilterPolicy(int(b))
			}
			return nil
		}, describe: func(uint64) string { return fmt.Sprintf("bloom.FilterPolicy(%d) on every level", int(b)) }},
		"bloom10": {name: fmt.Sprintf("ours uniform %g", b), apply: func(o *pebble.Options, _ uint64) error {
			return pebblefilter.Apply(o, uniform(pebblefilter.Bloom(b)))
		}, describe: func(uint64) string { return fmt.Sprintf("blocked bloom %g bits/key on every level", b) }},
		"ribbon-l6": {name: "ours bloom + ribbon L6", apply: func(o *pebble.Options, _ uint64) error {
			p := uniform(pebblefilter.Bloom(b))
			p[6] = pebblefilter.RibbonFPR(ribbonFPR)
			return pebblefilter.Apply(o, p)
		}, describe: func(uint64) string {
			return fmt.Sprintf("blocked bloom %g on L0-L5, ribbon at FPR %.3f%% (bloom %g's FPR) on L6", b, 100*ribbonFPR, b)
		}},
		"monkey": {name: "ours monkey (cache-weighted)", perCache: true, apply: func(o *pebble.Options, c uint64) error {
			p, err := allocate(c, pebblefilter.Seek)
			if err != nil {
				return err
			}
			return pebblefilter.Apply(o, p.Specs)
		}, describe: func(c uint64) string {
			p, _ := allocate(c, pebblefilter.Seek)
			return fmt.Sprintf("%s (weights %.2f)", specsString(p.Specs), p.Weights)
		}},
		"monkey-pilot": {name: "ours monkey (pilot-measured weights)", perCache: true, apply: func(o *pebble.Options, c uint64) error {
			p, err := pilotPlan(c, false)
			if err != nil {
				return err
			}
			return pebblefilter.Apply(o, p.plan.Specs)
		}, describe: func(c uint64) string {
			p, _ := pilotPlan(c, false)
			return fmt.Sprintf("%s (measured weights %.3f, probes %.2f)", specsString(p.plan.Specs), p.plan.Weights, p.probes)
		}},
		"monkey-pilot-elastic": {name: "ours monkey (pilot, elastic)", perCache: true, apply: func(o *pebble.Options, c uint64) error {
			p, err := pilotPlan(c, true)
			if err != nil {
				return err
			}
			return pebblefilter.Apply(o, p.plan.Specs)
		}, describe: func(c uint64) string {
			p, _ := pilotPlan(c, true)
			last := p.rounds[len(p.rounds)-1]
			return fmt.Sprintf("%s (measured weights %.3f, elasticities %.2f, probes %.2f)", specsString(p.plan.Specs), p.plan.Weights, last.elasticity, p.probes)
		}},
		"monkey-get": {name: "ours monkey, Get mode", perCache: true, getOnly: true, apply: func(o *pebble.Options, c uint64) error {
			p, err := allocate(c, pebblefilter.Get)
			if err != nil {
				return err
			}
			return pebblefilter.Apply(o, p.Specs)
		}, describe: func(c uint64) string {
			p, _ := allocate(c, pebblefilter.Get)
			return fmt.Sprintf("%s (weights %.2f)", specsString(p.Specs), p.Weights)
		}},
	}
}

type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }
func baseOptions() *pebble.Options {
	o := &pebble.Options{
		FormatMajorVersion:          pebble.FormatNewest,
		DisableAutomaticCompactions: true,
		Logger:                      quiet{},
		// A small LBaseMaxBytes puts the base level at L1, so ingestion
		// places each batch just above the data it overlaps instead of in
		// L0 (compactions are off, so it triggers nothing).
		LBaseMaxBytes: 64 << 10,
	}
	o.Experimental.ReadSamplingMultiplier = -1
	return o
}

// dataset holds the keys sorted per level.
type dataset struct {
	byLevel [pebblefilter.NumLevels][]uint64 // key indexes, sorted by key
}

func newDataset(n int) *dataset {
	d := &dataset{}
	for i := range uint64(n) {
		l := levelOf(i)
		d.byLevel[l] = append(d.byLevel[l], i)
	}
	var a, b []byte
	for l := range d.byLevel {
		slices.SortFunc(d.byLevel[l], func(x, y uint64) int {
			a, b = genKey(a, 0, x), genKey(b, 0, y)
			return bytes.Compare(a, b)
		})
	}
	return d
}

// build creates the database of one configuration in dir.
func build(dir string, d *dataset, cfg config, cacheBytes uint64) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	o := baseOptions()
	if err := cfg.apply(o, cacheBytes); err != nil {
		return err
	}
	o.EnsureDefaults()
	db, err := pebble.Open(dir, o)
	if err != nil {
		return err
	}
	var k, v []byte
	for _, level := range []int{6, 5, 4, 3} {
		idx := d.byLevel[level]
		nt := tables[level]
		var paths []string
		for t := range nt {
			lo, hi := t*len(idx)/nt, (t+1)*len(idx)/nt
			if lo == hi {
				continue
			}
			path := filepath.Join(dir, fmt.Sprintf("ingest-L%d-%02d.sst", level, t))
			f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
			if err != nil {
				return err
			}
			w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), o.MakeWriterOptions(level, db.TableFormat()))
			for _, i := range idx[lo:hi] {
				if err := w.Set(genKey(k, 0, i), value(v, i)); err != nil {
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			paths = append(paths, path)
		}
		if err := db.Ingest(context.Background(), paths); err != nil {
			return fmt.Errorf("ingest L%d: %w", level, err)
		}
	}
	l0 := d.byLevel[0]
	for half := range 2 {
		for _, i := range l0[half*len(l0)/2 : (half+1)*len(l0)/2] {
			if err := db.Set(genKey(k, 0, i), value(v, i), pebble.NoSync); err != nil {
				return err
			}
		}
		if err := db.Flush(); err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	for _, l := range []int{6, 5, 4, 3} {
		for t := range tables[l] {
			os.Remove(filepath.Join(dir, fmt.Sprintf("ingest-L%d-%02d.sst", l, t)))
		}
	}
	return nil
}

// levelStats summarises the tables of one level.
type levelStats struct {
	tables                    int
	keys, dataBytes, filterBy uint64
	policy                    string
}

// phase results.
type phaseResult struct {
	ops                 int
	filterHits, filterM int64
	cacheHits, cacheM   int64
	io                  snapshot
	p50, p99            time.Duration
}

type runResult struct {
	levels [pebblefilter.NumLevels]levelStats
	phases [4]phaseResult
}

var phaseNames = [4]string{"Get miss", "Seek+L6 miss", "Get hit", "Seek+L6 hit"}

// keyStreams selects the lookup keys of a run: measured runs and pilot
// runs use disjoint missing keys and different draws of present keys.
type keyStreams struct {
	missing, warm uint64 // genKey streams of missing keys
	presentSalt   uint64
}

var (
	measuredKeys = keySet(1)
	pilotKeys    = keyStreams{missing: 3, warm: 4, presentSalt: 0xa4093822299f31d0}
)

// keySet returns the streams of measured key set k (1 to 29): set 1 is
// streams 1 and 2, set k > 1 streams 2k+1 and 2k+2 (5 and 6, 7 and 8,
// ...), so no set shares a missing-key stream with another or with the
// pilot (3 and 4), and every stream fits genKey's 6 stream bits.
func keySet(k int) keyStreams {
	if k == 1 {
		return keyStreams{missing: 1, warm: 2, presentSalt: 0x13198a2e03707344}
	}
	return keyStreams{missing: uint64(2*k + 1), warm: uint64(2*k + 2), presentSalt: splitmix(0x082efa98ec4e6c89 ^ uint64(k))}
}

// measure opens the database in dir with a fresh block cache and runs the
// warm-up and the four phases. A pilot run uses pilotKeys, wraps the
// Bloomery reader policies to count filter checks and positives per level,
// and skips the present-key phases.
func measure(dir string, d *dataset, cfg config, cacheBytes uint64, pilot bool) (runResult, error) {
	var res runResult
	fs := &countingFS{FS: vfs.Default}
	o := baseOptions()
	if err := cfg.apply(o, cacheBytes); err != nil {
		return res, err
	}
	ks := measuredKeys
	if pilot {
		ks = pilotKeys
		for name, pol := range o.Filters {
			if name == pebblefilter.BloomName || name == pebblefilter.RibbonName {
				o.Filters[name] = &countingPolicy{FilterPolicy: pol, fs: fs}
			}
		}
	}
	o.FS = fs
	c := pebble.NewCache(int64(cacheBytes))
	defer c.Unref()
	o.Cache = c
	db, err := pebble.Open(dir, o)
	if err != nil {
		return res, err
	}
	defer db.Close()
	lv, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return res, err
	}
	m := map[uint64]tableInfo{}
	for l, ts := range lv {
		for _, t := range ts {
			p := t.Properties
			m[uint64(t.BackingSSTNum)] = tableInfo{level: l, dataSize: p.DataSize, filterSize: p.FilterSize}
			s := &res.levels[l]
			s.tables++
			s.keys += p.NumEntries
			s.dataBytes += p.DataSize
			s.filterBy += p.FilterSize
			s.policy = p.FilterPolicyName
		}
	}
	fs.tables.Store(&m)

	var kb []byte
	n := uint64(*keysFlag)
	present := func(j uint64) []byte { return genKey(kb, 0, splitmix(j^ks.presentSalt)%n) }
	// Warm-up: Gets of present keys and seeks of missing keys.
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return res, err
	}
	for j := range uint64(*warmFlag) {
		if j%2 == 0 {
			if _, cl, err := db.Get(present(1<<40 + j)); err == nil {
				cl.Close()
			}
		} else {
			it.SeekPrefixGE(genKey(kb, ks.warm, j))
		}
	}
	lat := make([]int64, max(*missingFlag, *presentFlag))
	nm, np := uint64(*missingFlag), uint64(*presentFlag)
	for ph := range 4 {
		ops := nm
		if ph >= 2 {
			ops = np
		}
		if cfg.getOnly && ph%2 == 1 || pilot && ph >= 2 {
			continue
		}
		m0, io0 := db.Metrics(), fs.c.snap()
		for j := range ops {
			var key []byte
			switch ph {
			case 0:
				key = genKey(kb, ks.missing, j)
			case 1:
				key = genKey(kb, ks.missing, nm+j)
			default:
				key = present(uint64(ph)<<32 + j)
			}
			t0 := time.Now()
			switch ph % 2 {
			case 0:
				_, cl, err := db.Get(key)
				if err == nil {
					cl.Close()
				}
				if (ph == 0) != errors.Is(err, pebble.ErrNotFound) {
					return res, fmt.Errorf("%s: key %x: %v", phaseNames[ph], key, err)
				}
			case 1:
				if it.SeekPrefixGE(key) != (ph == 3) {
					return res, fmt.Errorf("%s: key %x: wrong answer", phaseNames[ph], key)
				}
			}
			lat[j] = int64(time.Since(t0))
		}
		m1, io1 := db.Metrics(), fs.c.snap()
		l := lat[:ops]
		slices.Sort(l)
		res.phases[ph] = phaseResult{
			ops:        int(ops),
			filterHits: m1.Filter.Hits - m0.Filter.Hits,
			filterM:    m1.Filter.Misses - m0.Filter.Misses,
			cacheHits:  m1.BlockCache.Hits - m0.BlockCache.Hits,
			cacheM:     m1.BlockCache.Misses - m0.BlockCache.Misses,
			io:         io1.sub(io0),
			p50:        time.Duration(l[len(l)/2]),
			p99:        time.Duration(l[len(l)*99/100]),
		}
	}
	if err := it.Close(); err != nil {
		return res, err
	}
	return res, nil
}

func sameCounts(a, b runResult) bool {
	for i := range a.phases {
		x, y := a.phases[i], b.phases[i]
		if x.filterHits != y.filterHits || x.filterM != y.filterM || x.io.reads != y.io.reads {
			return false
		}
	}
	return true
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	keysets, err := parseKeysets(*keysetFlag)
	if err != nil {
		log.Fatal(err)
	}
	if !(*pilotTolFlag >= 0 && *pilotTolFlag < 1) {
		log.Fatalf("-pilot-tol %v outside [0, 1)", *pilotTolFlag)
	}
	dir := *dirFlag
	if dir == "" {
		if dir, err = os.MkdirTemp("", "pebblefilter-bench"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	var caches []uint64
	for _, s := range strings.Split(*cachesFlag, ",") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			log.Fatalf("bad cache size %q", s)
		}
		caches = append(caches, uint64(v*(1<<20)))
	}
	all := configs()
	var cfgs []config
	for _, name := range strings.Split(*configsFlag, ",") {
		c, ok := all[name]
		if !ok {
			log.Fatalf("unknown configuration %q", name)
		}
		cfgs = append(cfgs, c)
	}
	start := time.Now()
	d := newDataset(*keysFlag)
	benchDir, benchData = dir, d
	out := os.Stdout
	fmt.Fprintf(out, "## Run\n\n`go run ./bench %s` (Go %s, %s), %d keys of %d bytes with %d-byte values, %d missing and %d present lookups per phase, %d warm-up lookups, %d runs per cell.\n\n",
		strings.Join(os.Args[1:], " "), strings.TrimPrefix(runtimeVersion(), "go"), hostDescription(), *keysFlag, keyLen, valueLen, *missingFlag, *presentFlag, *warmFlag, *runsFlag)

	var cells []cellView
	for _, cfg := range cfgs {
		sizes := caches
		if !cfg.perCache {
			sizes = []uint64{0}
		}
		for _, buildCache := range sizes {
			if levelInfo == ([pebblefilter.NumLevels]pebblefilter.LevelInfo{}) && cfg.perCache {
				// The allocation needs the shape: build it once without
				// filters and read the tables' properties.
				if err := readShape(filepath.Join(dir, "db"), d, all["none"], out); err != nil {
					log.Fatalf("shape: %v", err)
				}
			}
			db := filepath.Join(dir, "db")
			t0 := time.Now()
			if err := build(db, d, cfg, buildCache); err != nil {
				log.Fatalf("%s: build: %v", cfg.name, err)
			}
			log.Printf("%s (cache %d MiB): built in %v", cfg.name, buildCache>>20, time.Since(t0).Round(time.Millisecond))
			targets := caches
			if cfg.perCache {
				targets = []uint64{buildCache}
			}
			for _, c := range targets {
				for _, ks := range keysets {
					measuredKeys = keySet(ks)
					ce := cellView{cfg: cfg, cache: c, keyset: ks}
					if len(keysets) > 1 {
						ce.label = fmt.Sprintf(" [key set %d]", ks)
					}
					runs := 1
					for _, s := range strings.Split(*latFlag, ",") {
						if v, err := strconv.ParseFloat(s, 64); err == nil && uint64(v*(1<<20)) == c {
							runs = *runsFlag
						}
					}
					for r := range runs {
						t1 := time.Now()
						res, err := measure(db, d, cfg, c, false)
						if err != nil {
							log.Fatalf("%s: %v", cfg.name, err)
						}
						log.Printf("  cache %d MiB key set %d run %d: %v", c>>20, ks, r+1, time.Since(t1).Round(time.Millisecond))
						ce.runs = append(ce.runs, res)
						if levelInfo == ([pebblefilter.NumLevels]pebblefilter.LevelInfo{}) {
							for l, s := range res.levels {
								levelInfo[l] = pebblefilter.LevelInfo{Keys: s.keys, DataBytes: s.dataBytes}
							}
							printShape(out, res)
						}
					}
					cells = append(cells, ce)
				}
			}
		}
	}
	printPilots(out, caches)
	printConfigs(out, cfgs, caches, cells)
	for _, c := range caches {
		var rows []row
		for _, ce := range cells {
			if ce.cache == c {
				rows = append(rows, row{ce.cfg, ce.label, ce.runs})
			}
		}
		printResults(out, c, rows)
	}
	fmt.Fprintf(out, "Total time %v.\n", time.Since(start).Round(time.Second))
}

// readShape builds the database without filters, fills levelInfo from
// its tables' properties and prints the shape.
func readShape(dir string, d *dataset, none config, out *os.File) error {
	if err := build(dir, d, none, 0); err != nil {
		return err
	}
	o := baseOptions()
	if err := none.apply(o, 0); err != nil {
		return err
	}
	db, err := pebble.Open(dir, o)
	if err != nil {
		return err
	}
	defer db.Close()
	lv, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return err
	}
	var r runResult
	for l, ts := range lv {
		for _, t := range ts {
			s := &r.levels[l]
			s.tables++
			s.keys += t.Properties.NumEntries
			s.dataBytes += t.Properties.DataSize
		}
		levelInfo[l] = pebblefilter.LevelInfo{Keys: r.levels[l].keys, DataBytes: r.levels[l].dataBytes}
	}
	printShape(out, r)
	return nil
}

type row struct {
	cfg   config
	label string // key set, when several were measured
	runs  []runResult
}

// cellView is one configuration measured at one cache size on one key set.
type cellView struct {
	cfg    config
	cache  uint64
	keyset int
	label  string
	runs   []runResult
}

// parseKeysets reads -keyset: "k", "a,b,c" or "a-b", each in 1-29,
// without repeats.
func parseKeysets(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("-keyset %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("-keyset %q: %v", s, err)
			}
		}
		if a < 1 || b > 29 || a > b {
			return nil, fmt.Errorf("-keyset %q: sets must be in 1-29", s)
		}
		for k := a; k <= b; k++ {
			if seen[k] {
				return nil, fmt.Errorf("-keyset %q: set %d twice", s, k)
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func printShape(out *os.File, r runResult) {
	fmt.Fprintf(out, "## LSM shape (identical for every configuration)\n\n| level | tables | keys | data MiB |\n|---|---|---|---|\n")
	for l, s := range r.levels {
		if s.tables > 0 {
			fmt.Fprintf(out, "| L%d | %d | %d | %.1f |\n", l, s.tables, s.keys, float64(s.dataBytes)/(1<<20))
		}
	}
	fmt.Fprintln(out)
}

func printConfigs(out *os.File, cfgs []config, caches []uint64, cells []cellView) {
	fmt.Fprintf(out, "## Configurations and filter memory\n\nFilter KiB per level (bits per key in parentheses), from the tables' FilterSize property; the last column compares the total with ours uniform's (measured, or the pilot's round 1 if uniform did not run; the allocated configurations must spend the same memory: within 1 %%).\n\n| configuration | cache MiB | L0 | L3 | L4 | L5 | L6 | total KiB (bits/key) | vs uniform |\n|---|---|---|---|---|---|---|---|---|\n")
	total := func(r runResult) (tot, keys uint64) {
		for _, s := range r.levels {
			tot += s.filterBy
			keys += s.keys
		}
		return tot, keys
	}
	var uniTotal uint64
	for _, c := range cells {
		if c.cfg.name == configs()["bloom10"].name {
			uniTotal, _ = total(c.runs[0])
		}
	}
	for _, p := range pilots {
		if uniTotal == 0 {
			uniTotal = p.uniformFilterBytes // round 1 ran ours uniform
		}
	}
	for _, c := range cells {
		if c.keyset != cells[0].keyset {
			continue // the filters are the same for every key set
		}
		r := c.runs[0]
		var cols []string
		for _, l := range []int{0, 3, 4, 5, 6} {
			s := r.levels[l]
			cols = append(cols, fmt.Sprintf("%.1f (%.2f)", float64(s.filterBy)/1024, 8*float64(s.filterBy)/float64(max(1, s.keys))))
		}
		tot, keys := total(r)
		vs := "-"
		if uniTotal > 0 {
			d := float64(tot)/float64(uniTotal) - 1
			vs = fmt.Sprintf("%+.2f%%", 100*d)
			if c.cfg.perCache && !c.cfg.getOnly && math.Abs(d) > 0.01 {
				vs += " (NOT EQUAL)"
				log.Printf("%s at %d MiB: filter memory %d bytes vs uniform %d: not equal", c.cfg.name, c.cache>>20, tot, uniTotal)
			}
		}
		cache := "all"
		if c.cfg.perCache {
			cache = strconv.Itoa(int(c.cache >> 20))
		} else if c.cache != caches[0] {
			continue
		}
		fmt.Fprintf(out, "| %s | %s | %s | %.1f (%.2f) | %s |\n", c.cfg.name, cache, strings.Join(cols, " | "), float64(tot)/1024, 8*float64(tot)/float64(keys), vs)
	}
	fmt.Fprintf(out, "\n")
	for _, cfg := range cfgs {
		if cfg.perCache {
			for _, c := range caches {
				fmt.Fprintf(out, "- %s, %d MiB: %s\n", cfg.name, c>>20, cfg.describe(c))
			}
		} else {
			fmt.Fprintf(out, "- %s: %s\n", cfg.name, cfg.describe(0))
		}
	}
	fmt.Fprintln(out)
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func printResults(out *os.File, cache uint64, rows []row) {
	fmt.Fprintf(out, "## Block cache %d MiB\n\n", cache>>20)
	fmt.Fprintf(out, "FP/op = filter misses per missing-key lookup (every filter \"may contain\" on a missing key is a false positive); rd/op = data-block ReadAt calls per lookup; fb/op = filter-block ReadAt calls per lookup (KiB read per lookup); hit = block-cache hit rate; p50 = median over runs of the run's median latency (p99 of the first run); counts are from the first run, and the last column says whether the other runs gave identical counts.\n\n")
	fmt.Fprintf(out, "| configuration | phase | FP/op | rd/op | fb/op (KiB/op) | other rd/op | hit | p50 µs | p99 µs | runs (same counts) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		for ph := range 4 {
			p := r.runs[0].phases[ph]
			if p.ops == 0 {
				continue
			}
			var meds []time.Duration
			for _, x := range r.runs {
				meds = append(meds, x.phases[ph].p50)
			}
			same := fmt.Sprintf("%d (yes)", len(r.runs))
			for _, x := range r.runs[1:] {
				if !sameCounts(r.runs[0], x) {
					same = fmt.Sprintf("%d (no)", len(r.runs))
				}
			}
			if len(r.runs) == 1 {
				same = "1"
			}
			fp := "-"
			if ph < 2 {
				fp = fmt.Sprintf("%.4f", float64(p.filterM)/float64(p.ops))
			}
			ops := float64(p.ops)
			fmt.Fprintf(out, "| %s | %s | %s | %.4f | %.4f (%.1f) | %.4f | %.1f%% | %.2f | %.1f | %s |\n",
				r.cfg.name+r.label, phaseNames[ph], fp,
				float64(p.io.total(classData))/ops,
				float64(p.io.total(classFilter))/ops, float64(p.io.totalBytes(classFilter))/ops/1024,
				float64(p.io.total(classOther))/ops,
				100*float64(p.cacheHits)/math.Max(1, float64(p.cacheHits+p.cacheM)),
				float64(median(meds))/1e3, float64(p.p99)/1e3, same)
		}
	}
	fmt.Fprintf(out, "\nData-block reads per missing-key seek, by level, and the exact total count over the phase:\n\n| configuration | L0 | L3 | L4 | L5 | L6 | total reads (lookups) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p := r.runs[0].phases[1]
		if p.ops == 0 {
			continue
		}
		var cols []string
		for _, l := range []int{0, 3, 4, 5, 6} {
			cols = append(cols, fmt.Sprintf("%.4f", float64(p.io.reads[l][classData])/float64(p.ops)))
		}
		fmt.Fprintf(out, "| %s | %s | %d (%d) |\n", r.cfg.name+r.label, strings.Join(cols, " | "), p.io.total(classData), p.ops)
	}
	fmt.Fprintln(out)
}
