package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// maxKeyLen bounds one input line; longer lines are an error rather than
// an unbounded allocation.
const maxKeyLen = 64 << 20

// forEachKey calls fn for every key in r: one key per line, lines split on
// '\n' with a trailing '\r' removed, empty lines skipped. The slice passed
// to fn is valid only during the call.
func forEachKey(r io.Reader, fn func(key []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxKeyLen)
	line := 0
	for sc.Scan() {
		line++
		if b := sc.Bytes(); len(b) > 0 {
			fn(b)
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("line %d is longer than %d bytes", line+1, maxKeyLen)
		}
		return err
	}
	return nil
}

// writeFileAtomic writes data to path so that path holds either its old
// contents or all of data, never a torn file: the bytes go to a temporary
// file in the same directory, which is fsynced, renamed over path, and the
// directory fsynced. On failure the temporary file is removed and path is
// untouched.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(name, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable once the directory entry is; not every
	// platform can fsync a directory, so a failure here is not fatal.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// countingReader counts the bytes read through it, for progress.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// progress draws a one-line progress bar on a terminal. A nil *progress
// (stderr is not a terminal) does nothing, so callers need no checks.
type progress struct {
	w     io.Writer
	label string
	total int64 // 0: unknown, show the count only
	last  time.Time
	shown bool
}

func newProgress(e *env, label string, total int64) *progress {
	if !e.tty {
		return nil
	}
	return &progress{w: e.stderr, label: label, total: total}
}

const barWidth = 30

// update redraws the bar for done of total units (at most every 100 ms),
// annotated with the number of keys seen.
func (p *progress) update(done int64, keys int) {
	if p == nil {
		return
	}
	now := time.Now()
	if p.shown && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	p.draw(done, keys)
}

func (p *progress) draw(done int64, keys int) {
	if p.total > 0 {
		frac := min(float64(done)/float64(p.total), 1)
		fill := int(frac * barWidth)
		bar := strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill)
		fmt.Fprintf(p.w, "\r%s [%s] %3.0f%% %d keys", p.label, bar, frac*100, keys)
		return
	}
	fmt.Fprintf(p.w, "\r%s %d keys", p.label, keys)
}

// done clears the bar's line.
func (p *progress) done() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[2K")
}
