package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// tableInfo is what the counting file system needs to classify a read.
type tableInfo struct {
	level      int
	dataSize   uint64
	filterSize uint64
}

// Read classes.
const (
	classData = iota
	classFilter
	classOther // index, properties, footer, range-del...
	numClasses
)

// counters counts ReadAt calls and bytes on .sst files per level and
// class. Level 7 collects reads of tables not (yet) in the map. checks and
// positives count filter checks and "may contain" answers per level when
// the filter policy is wrapped by a countingPolicy (pilot runs); level 7
// there collects checks of filters whose table was not identified.
type counters struct {
	reads     [8][numClasses]atomic.Int64
	bytes     [8][numClasses]atomic.Int64
	checks    [8]atomic.Int64
	positives [8]atomic.Int64
}

type snapshot struct {
	reads     [8][numClasses]int64
	bytes     [8][numClasses]int64
	checks    [8]int64
	positives [8]int64
}

func (c *counters) snap() (s snapshot) {
	for l := range c.reads {
		for k := range c.reads[l] {
			s.reads[l][k] = c.reads[l][k].Load()
			s.bytes[l][k] = c.bytes[l][k].Load()
		}
		s.checks[l] = c.checks[l].Load()
		s.positives[l] = c.positives[l].Load()
	}
	return s
}

func (s snapshot) sub(o snapshot) (d snapshot) {
	for l := range s.reads {
		for k := range s.reads[l] {
			d.reads[l][k] = s.reads[l][k] - o.reads[l][k]
			d.bytes[l][k] = s.bytes[l][k] - o.bytes[l][k]
		}
		d.checks[l] = s.checks[l] - o.checks[l]
		d.positives[l] = s.positives[l] - o.positives[l]
	}
	return d
}

func (s snapshot) total(class int) (n int64) {
	for l := range s.reads {
		n += s.reads[l][class]
	}
	return n
}

func (s snapshot) totalBytes(class int) (n int64) {
	for l := range s.bytes {
		n += s.bytes[l][class]
	}
	return n
}

// countingFS wraps a vfs.FS: files named *.sst opened for reading count
// their ReadAt calls. Data blocks come first in a table, so a read that
// starts below Properties.DataSize is a data block; a read of about
// Properties.FilterSize bytes beyond it is the filter block.
//
// It also remembers which level each filter block came from, keyed by the
// block's first fingerprintLen bytes (filter bits, random-looking, so
// distinct tables have distinct prefixes), so a countingPolicy can
// attribute a filter check to a level: Pebble hands MayContain the block's
// contents without saying which table they belong to.
type countingFS struct {
	vfs.FS
	tables  atomic.Pointer[map[uint64]tableInfo]
	c       counters
	filters sync.Map // [fingerprintLen]byte -> level (int)
}

const fingerprintLen = 32

// filterLevel returns the level of the table whose filter block starts
// with filter's first bytes, or 7 if unknown.
func (fs *countingFS) filterLevel(filter []byte) int {
	if len(filter) < fingerprintLen {
		return 7
	}
	if l, ok := fs.filters.Load([fingerprintLen]byte(filter)); ok {
		return l.(int)
	}
	return 7
}

func (fs *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	num, perr := strconv.ParseUint(strings.TrimSuffix(filepath.Base(name), ".sst"), 10, 64)
	if perr != nil {
		return f, err
	}
	return &countingFile{File: f, fs: fs, num: num}, nil
}

type countingFile struct {
	vfs.File
	fs  *countingFS
	num uint64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	level, class := 7, classOther
	if m := f.fs.tables.Load(); m != nil {
		if t, ok := (*m)[f.num]; ok {
			level = t.level
			switch {
			case uint64(off) < t.dataSize:
				class = classData
			case t.filterSize > 0 && uint64(len(p)) >= t.filterSize && uint64(len(p)) <= t.filterSize+64:
				class = classFilter
			}
		}
	}
	f.fs.c.reads[level][class].Add(1)
	f.fs.c.bytes[level][class].Add(int64(len(p)))
	n, err := f.File.ReadAt(p, off)
	if class == classFilter && n >= fingerprintLen {
		f.fs.filters.Store([fingerprintLen]byte(p), level)
	}
	return n, err
}
