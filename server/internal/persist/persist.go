// Package persist makes the server's keyspace durable: an append-only log
// of state-changing commands (RESP, replayed through the normal command
// path on start) and snapshots that let the log restart empty.
//
// Files in the data directory:
//
//	snapshot.bsnap        the latest snapshot (see snapshot.go)
//	appendonly.<gen>.aof  the logs; a snapshot records the generation of
//	                      the first log that is NOT in it
//
// Start-up loads the snapshot (generation G), then replays every log with
// generation >= G in order. A snapshot switches the log to generation G+1
// while the keyspace is locked, writes the snapshot (temp file, fsync,
// rename, directory fsync), then deletes the logs older than G+1; a crash
// at any point leaves either the old snapshot and all logs since it, or
// the new one and all logs since it.
//
// Durability per fsync policy: "always" writes and fsyncs the log before
// any reply acknowledging a logged command is sent (group commit: one
// fsync covers every command queued meanwhile); "everysec" writes before
// the reply and fsyncs once a second; "no" writes before the reply and
// leaves fsync to the OS. In every policy a process crash (kill -9) loses
// no acknowledged write; with "everysec" a machine crash loses at most
// about a second.
package persist

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/server/internal/resp"
)

// Policy is the appendfsync policy.
type Policy int

const (
	EverySec Policy = iota
	Always
	No
)

func (p Policy) String() string {
	switch p {
	case Always:
		return "always"
	case No:
		return "no"
	}
	return "everysec"
}

// ParsePolicy parses always|everysec|no.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(s) {
	case "always":
		return Always, nil
	case "everysec", "":
		return EverySec, nil
	case "no":
		return No, nil
	}
	return 0, fmt.Errorf("persist: appendfsync %q: want always, everysec or no", s)
}

// Log is the append-only command log. Append is called with the keyspace
// locked (so the log order is the execution order); Flush by connections
// before they send replies.
type Log struct {
	dir    string
	policy Policy
	logger *slog.Logger

	mu  sync.Mutex // guards buf, spare, end, f, gen
	buf []byte
	// spare is the buffer of the previous write, kept for the next one:
	// commands are appended to it while the current buffer is written, so
	// under load the two buffers alternate and appends neither allocate
	// nor fault in fresh pages.
	spare []byte
	end   int64 // global offset (across generations) past the last Append
	gen   uint64
	f     *os.File
	fw    *fileWriter // writes to f

	ioMu    sync.Mutex // serialises writes and fsyncs
	written atomic.Int64
	synced  atomic.Int64
	size    atomic.Int64 // current file's size
	err     atomic.Pointer[error]

	stop chan struct{}
	done chan struct{}
	// endA mirrors end for End, which must not take mu.
	endA atomic.Int64
	// syncHook, if set, runs before every fsync of the log (SetSyncHook).
	syncHook atomic.Pointer[func()]
}

// LogName is the file name of a log generation.
func LogName(gen uint64) string { return fmt.Sprintf("appendonly.%d.aof", gen) }

// OpenLog opens (creating if needed) log generation gen for appending and
// starts the once-a-second fsync for EverySec.
func OpenLog(dir string, gen uint64, policy Policy, logger *slog.Logger) (*Log, error) {
	f, err := os.OpenFile(filepath.Join(dir, LogName(gen)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("persist: open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("persist: open log: %w", err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	l := &Log{dir: dir, policy: policy, logger: logger, gen: gen, f: f, fw: newFileWriter(f), stop: make(chan struct{}), done: make(chan struct{})}
	l.size.Store(st.Size())
	go l.background()
	return l, nil
}

func (l *Log) background() {
	defer close(l.done)
	if l.policy != EverySec {
		<-l.stop
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if err := l.sync(true); err != nil {
				l.logger.Error("append-only log fsync failed", "err", err)
			}
		}
	}
}

// Append adds one command and returns the log offset just past it.
func (l *Log) Append(args [][]byte) int64 {
	l.mu.Lock()
	n := len(l.buf)
	l.buf = resp.AppendCommand(l.buf, args)
	l.end += int64(len(l.buf) - n)
	end := l.end
	l.endA.Store(end)
	l.mu.Unlock()
	return end
}

// AppendRaw adds one command given as its RESP array encoding (a client's
// request as received, which replays to the same arguments) and returns
// the log offset just past it.
func (l *Log) AppendRaw(cmd []byte) int64 {
	l.mu.Lock()
	l.buf = append(l.buf, cmd...)
	l.end += int64(len(cmd))
	end := l.end
	l.endA.Store(end)
	l.mu.Unlock()
	return end
}

// Err is the first write or fsync failure; once set, the server refuses
// writes.
func (l *Log) Err() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Log) fail(err error) error {
	l.err.CompareAndSwap(nil, &err)
	return err
}

// Flush makes the log durable up to offset upto as the policy requires
// before a reply may be sent: written to the file, and fsynced for
// Always. Concurrent callers share the work (group commit).
//
// Group commit: a caller that finds another one writing waits for the
// I/O lock and then re-checks, so the one write (and, for Always, the one
// fsync) that the first caller made of everything appended so far
// acknowledges every command it covered, and most callers of a burst
// issue no system call at all.
func (l *Log) Flush(upto int64) error {
	fsync := l.policy == Always
	if l.reached(upto, fsync) {
		return nil
	}
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	if l.reached(upto, fsync) {
		return nil
	}
	return l.syncLocked(fsync)
}

// Covered reports whether Flush(upto) would return at once: the log is
// already written (and, for Always, fsynced) up to offset upto.
func (l *Log) Covered(upto int64) bool { return l.reached(upto, l.policy == Always) }

// reached reports whether the log is written (and fsynced, with fsync) up to
// offset upto.
func (l *Log) reached(upto int64, fsync bool) bool {
	if fsync {
		return l.synced.Load() >= upto
	}
	return l.written.Load() >= upto
}

// Sync writes and fsyncs everything appended so far.
func (l *Log) Sync() error { return l.sync(true) }

func (l *Log) sync(fsync bool) error {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	return l.syncLocked(fsync)
}

func (l *Log) syncLocked(fsync bool) error {
	if err := l.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	buf := l.buf
	end := l.end
	f, fw := l.f, l.fw
	if len(buf) > 0 {
		l.buf, l.spare = l.spare, nil
	}
	l.mu.Unlock()
	if len(buf) > 0 {
		if err := fw.write(buf); err != nil {
			return l.fail(fmt.Errorf("persist: write log: %w", err))
		}
		l.size.Add(int64(len(buf)))
		l.written.Store(end)
		// Keep the buffer for reuse if it is small: as the buffer if
		// nobody appended meanwhile, else as the next write's spare.
		if cap(buf) <= 1<<20 {
			l.mu.Lock()
			if l.buf == nil {
				l.buf = buf[:0]
			} else if l.spare == nil {
				l.spare = buf[:0]
			}
			l.mu.Unlock()
		}
	}
	if fsync && l.synced.Load() < end {
		if h := l.syncHook.Load(); h != nil {
			(*h)()
		}
		if err := f.Sync(); err != nil {
			return l.fail(fmt.Errorf("persist: fsync log: %w", err))
		}
		l.synced.Store(end)
	}
	return nil
}

// Gen is the current log generation.
func (l *Log) Gen() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen
}

// Size is the current log file's size in bytes (excluding unwritten
// buffered commands).
func (l *Log) Size() int64 { return l.size.Load() }

// Switch finishes the current generation (written and fsynced) and starts
// generation gen+1. The caller holds the keyspace lock so no command is
// appended meanwhile.
func (l *Log) Switch() (uint64, error) {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	if err := l.syncLocked(true); err != nil {
		return 0, err
	}
	l.mu.Lock()
	next := l.gen + 1
	l.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(l.dir, LogName(next)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("persist: new log: %w", err)
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return 0, err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.fw = newFileWriter(f)
	l.gen = next
	l.mu.Unlock()
	l.size.Store(0)
	old.Close()
	return next, nil
}

// Close writes and fsyncs everything and closes the file.
func (l *Log) Close() error {
	close(l.stop)
	<-l.done
	err := l.Sync()
	l.mu.Lock()
	defer l.mu.Unlock()
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// RemoveBefore deletes the logs of generations below gen.
func RemoveBefore(dir string, gen uint64) error {
	gens, err := ListLogs(dir)
	if err != nil {
		return err
	}
	for _, g := range gens {
		if g < gen {
			if err := os.Remove(filepath.Join(dir, LogName(g))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// ListLogs returns the log generations present in dir, ascending.
func ListLogs(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gens []uint64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "appendonly.") || !strings.HasSuffix(n, ".aof") {
			continue
		}
		g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, "appendonly."), ".aof"), 10, 64)
		if err != nil {
			continue
		}
		gens = append(gens, g)
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	return gens, nil
}

// ErrCorruptLog reports a log that is damaged before its tail.
var ErrCorruptLog = errors.New("persist: corrupt append-only log")

// ReplayStats describes a replay.
type ReplayStats struct {
	Files     int
	Commands  int
	Truncated int64 // bytes cut from a torn tail
	LastGen   uint64
}

// Replay feeds every command of the logs with generation >= from to exec,
// in order. A torn tail (an incomplete last command, or trailing zero
// bytes) of the newest log is truncated with a log line; damage anywhere
// else returns an error wrapping ErrCorruptLog, and the server must not
// start. exec returning an error stops the replay with that error.
func Replay(dir string, from uint64, exec func(args [][]byte) error, logger *slog.Logger) (ReplayStats, error) {
	var st ReplayStats
	st.LastGen = from
	gens, err := ListLogs(dir)
	if err != nil {
		return st, err
	}
	var todo []uint64
	for _, g := range gens {
		if g >= from {
			todo = append(todo, g)
		}
	}
	for i, g := range todo {
		last := i == len(todo)-1
		path := filepath.Join(dir, LogName(g))
		n, cut, err := replayFile(path, exec, last, logger)
		st.Commands += n
		st.Truncated += cut
		st.Files++
		st.LastGen = g
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

func replayFile(path string, exec func([][]byte) error, last bool, logger *slog.Logger) (int, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	r := resp.NewReader(f, resp.Limits{})
	n := 0
	for {
		good := r.Offset
		args, err := r.ReadCommand()
		if err == io.EOF {
			return n, 0, nil
		}
		if err == nil && len(args) == 0 {
			err = &resp.ProtocolError{Msg: "empty command"}
		}
		if err != nil {
			torn := errors.Is(err, io.ErrUnexpectedEOF) || zeroTail(path, good)
			if !torn || !last {
				return n, 0, fmt.Errorf("%w: %s at byte %d of %d: %v; refusing to start (the commands after that offset cannot be trusted: inspect the file, and truncate it to %d bytes to accept losing them)",
					ErrCorruptLog, path, good, st.Size(), err, good)
			}
			cut := st.Size() - good
			logger.Warn("truncating torn tail of the append-only log (an incomplete command from a crash)", "file", path, "offset", good, "bytes", cut)
			f.Close()
			if err := os.Truncate(path, good); err != nil {
				return n, 0, fmt.Errorf("persist: truncate torn tail: %w", err)
			}
			return n, cut, nil
		}
		if err := exec(args); err != nil {
			return n, 0, fmt.Errorf("persist: replay %s at byte %d: %w", path, good, err)
		}
		n++
	}
}

// zeroTail reports whether the file holds only zero bytes from off on (a
// tail that a crashed file system extended but never wrote).
func zeroTail(path string, off int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		for _, c := range buf[:n] {
			if c != 0 {
				return false
			}
		}
		if err != nil {
			return err == io.EOF
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("persist: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("persist: fsync dir: %w", err)
	}
	return nil
}

// End is the global log offset (across generations) just past the last
// Append or AppendRaw: Flush(End()) makes durable every command appended
// so far. A command that observed the keyspace waits for End() read after
// it ran, so its reply never reports state that a crash could still take
// back. Cost: one atomic load; safe for concurrent use.
func (l *Log) End() int64 { return l.endA.Load() }

// SetSyncHook makes f run before every fsync of the log (nil removes it),
// for tests that need a slow or stalled fsync. Safe for concurrent use.
func (l *Log) SetSyncHook(f func()) {
	if f == nil {
		l.syncHook.Store(nil)
		return
	}
	l.syncHook.Store(&f)
}
