package pebblefilter

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

const dbKeys = 20_000

// quiet drops Pebble's informational log lines; errors still fail.
type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (quiet) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

func uniform(s Spec) (p [NumLevels]Spec) {
	for i := range p {
		p[i] = s
	}
	return p
}

func open(t *testing.T, fs vfs.FS, opts *pebble.Options) *pebble.DB {
	t.Helper()
	opts.FS = fs
	opts.Logger = quiet{}
	db, err := pebble.Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// seekAll runs SeekPrefixGE (with L6 filters) for the present keys 2i and
// the missing keys 2i+1, checks the answers, and returns the filter
// metrics it caused.
func seekAll(t *testing.T, db *pebble.DB) pebble.FilterMetrics {
	t.Helper()
	before := db.Metrics().Filter
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for i := range uint64(dbKeys) {
		if !it.SeekPrefixGE(key(2 * i)) {
			t.Fatalf("present key %d not found", 2*i)
		}
		if it.SeekPrefixGE(key(2*i + 1)) {
			t.Fatalf("missing key %d found", 2*i+1)
		}
	}
	after := db.Metrics().Filter
	return pebble.FilterMetrics{Hits: after.Hits - before.Hits, Misses: after.Misses - before.Misses}
}

// TestDBFiltersFound proves, in a real database, that Pebble finds and
// uses Bloomery filters once Apply or Register has registered their names,
// and silently ignores them otherwise: filter hits on L0 (Get) and L6
// (SeekPrefixGE with UseL6Filters) are close to the number of missing
// keys, the table properties name our policy, and a database opened
// without registration reads correctly with zero filter activity.
func TestDBFiltersFound(t *testing.T) {
	for _, s := range []Spec{Bloom(10), RibbonFPR(0.01)} {
		t.Run(s.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := &pebble.Options{}
			if err := Apply(opts, uniform(s)); err != nil {
				t.Fatal(err)
			}
			db := open(t, fs, opts)
			for i := range uint64(dbKeys) {
				if err := db.Set(key(2*i), []byte("value"), pebble.NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			// L0, through Get.
			before := db.Metrics().Filter
			for i := range uint64(dbKeys) {
				if _, c, err := db.Get(key(2 * i)); err != nil {
					t.Fatalf("Get present key: %v", err)
				} else {
					c.Close()
				}
				if _, _, err := db.Get(key(2*i + 1)); !errors.Is(err, pebble.ErrNotFound) {
					t.Fatalf("Get missing key: %v", err)
				}
			}
			hits := db.Metrics().Filter.Hits - before.Hits
			t.Logf("L0 Get: %d filter hits for %d missing keys", hits, dbKeys)
			if hits < dbKeys*95/100 {
				t.Fatalf("L0 Get: %d filter hits for %d missing keys", hits, dbKeys)
			}
			// L6, through SeekPrefixGE with UseL6Filters.
			if err := db.Compact(context.Background(), key(0), key(1<<40), false); err != nil {
				t.Fatal(err)
			}
			tables, err := db.SSTables(pebble.WithProperties())
			if err != nil {
				t.Fatal(err)
			}
			if len(tables[6]) == 0 {
				t.Fatalf("no tables on L6 after a full compaction: %v", db.Metrics())
			}
			name := mustPolicy(t, s).Name()
			for _, tb := range tables[6] {
				if tb.Properties.FilterPolicyName != name || tb.Properties.FilterSize == 0 {
					t.Fatalf("L6 table filter %q, %d bytes; want %q", tb.Properties.FilterPolicyName, tb.Properties.FilterSize, name)
				}
			}
			m := seekAll(t, db)
			t.Logf("L6 seek: %+v", m)
			if m.Hits < dbKeys*95/100 {
				t.Fatalf("L6 seek: %+v for %d missing keys", m, dbKeys)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			// Not registered: the filters are silently ignored.
			db = open(t, fs, &pebble.Options{})
			if m := seekAll(t, db); m.Hits != 0 || m.Misses != 0 {
				t.Fatalf("unregistered: filter metrics %+v, want none", m)
			}
			db.Close()

			// Register only (read-only migration path): found again.
			ro := &pebble.Options{}
			Register(ro)
			db = open(t, fs, ro)
			if m := seekAll(t, db); m.Hits < dbKeys*95/100 {
				t.Fatalf("Register: %+v", m)
			}
			db.Close()
		})
	}
}

// TestApplyLevels: Apply sets every level and refuses invalid specs
// without touching the options.
func TestApplyLevels(t *testing.T) {
	opts := &pebble.Options{}
	specs := [NumLevels]Spec{1: Bloom(20), 2: Bloom(15), 6: RibbonFPR(0.02)}
	if err := Apply(opts, specs); err != nil {
		t.Fatal(err)
	}
	for i, s := range specs {
		p := opts.Levels[i].FilterPolicy
		switch s.Family {
		case None:
			if p != pebble.NoFilterPolicy {
				t.Errorf("L%d: %v, want none", i, p)
			}
		case BlockedBloom:
			if b, ok := p.(*BloomPolicy); !ok || b.BitsPerKey() != s.BitsPerKey {
				t.Errorf("L%d: %v, want %v", i, p, s)
			}
		case Ribbon:
			if r, ok := p.(*RibbonPolicy); !ok || r.FPR() != s.FPR {
				t.Errorf("L%d: %v, want %v", i, p, s)
			}
		}
	}
	if opts.Filters[BloomName] == nil || opts.Filters[RibbonName] == nil {
		t.Fatalf("names not registered: %v", opts.Filters)
	}
	fresh := &pebble.Options{}
	bad := specs
	bad[3] = Bloom(-1)
	if err := Apply(fresh, bad); err == nil || fresh.Filters != nil || fresh.Levels[1].FilterPolicy != nil {
		t.Fatalf("invalid spec: err %v, options touched", err)
	}
}
