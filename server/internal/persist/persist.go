// Package persist makes the server's keyspace durable: an append-only log
// of state-changing commands (RESP, replayed through the normal command
// path on start) and snapshots that let the log restart empty.
//
// Files in the data directory:
//
//	snapshot.bsnap        the latest snapshot (see snapshot.go)
//	appendonly.<gen>.aof  the logs (format in logformat.go); a snapshot
//	                      records the generation of the first log that is
//	                      NOT in it
//	MANIFEST              the files the directory must hold (manifest.go)
//	LOCK                  the running server's lock (LockDir)
//
// Start-up loads the snapshot (generation G), then replays every log with
// generation >= G in order. A snapshot switches the log to generation G+1
// while the keyspace is locked, writes the snapshot (temp file, fsync,
// rename, directory fsync), records it in the manifest (SnapshotWritten),
// then deletes the logs older than G+1; a crash at any point leaves
// either the old snapshot and all logs since it, or the new one and all
// logs since it.
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
//
// Failures: a failed write or fsync sets Err, and the server refuses
// writes while it is set. A failed write keeps its record; once a second
// the log truncates the file back to its last whole record and writes
// the record again, and on success Err clears (writes resume without a
// restart). A failed fsync cannot be retried safely (the kernel may have
// dropped the pages it failed to write), so Err then stays set until a
// snapshot is written (Switch, then SnapshotWritten): the snapshot holds
// everything the lost pages held.
type Log struct {
	dir    string
	policy Policy
	logger *slog.Logger

	mu sync.Mutex // guards buf, spare, end, f, fw, gen
	// buf is the record being filled: recHdrLen bytes reserved for its
	// header, then the commands appended since the last write (empty
	// when len(buf) <= recHdrLen).
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

	ioMu    sync.Mutex // serialises writes and fsyncs; guards the fields below it
	written atomic.Int64
	synced  atomic.Int64
	size    atomic.Int64 // current file's size up to its last whole record
	err     atomic.Pointer[error]
	// pending is a record whose write failed, ending at global offset
	// pendingEnd; it is written before anything else once the file works.
	pending    []byte
	pendingEnd int64
	// broken: the current file cannot be repaired by writing again (an
	// fsync failed, or Switch abandoned it); only SnapshotWritten clears
	// Err then.
	broken   bool
	failedAt time.Time // when Err was set
	retries  int       // failed retries since then
	loggedAt time.Time // last "still failing" log line
	man      Manifest
	rescue   func()    // asked for a snapshot while broken (SetRescue)
	rescued  time.Time // last rescue call

	stop chan struct{}
	done chan struct{}
	// endA mirrors end for End, which must not take mu.
	endA atomic.Int64
	// syncHook, if set, runs before every fsync of the log (SetSyncHook).
	syncHook atomic.Pointer[func()]
}

// LogName is the file name of a log generation.
func LogName(gen uint64) string { return fmt.Sprintf("appendonly.%d.aof", gen) }

// OpenLog opens (creating if needed) log generation gen for appending,
// writing the version 2 file header into a new or empty file, and
// starts the background loop (the once-a-second fsync for EverySec, and
// the retry of failed writes). An existing non-empty file must be a
// version 2 log (Replay reports the version; a server starts a new
// generation after a version 1 log). Files are created with mode 0600.
func OpenLog(dir string, gen uint64, policy Policy, logger *slog.Logger) (*Log, error) {
	f, size, err := openLogFile(dir, gen, false)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, policy: policy, logger: logger, gen: gen, f: f, fw: newFileWriter(f), stop: make(chan struct{}), done: make(chan struct{})}
	l.size.Store(size)
	go l.background()
	return l, nil
}

// openLogFile opens generation gen for appending (truncating it with
// trunc), writes and fsyncs the file header if the file is empty, and
// fsyncs the directory. It returns the file and its size.
func openLogFile(dir string, gen uint64, trunc bool) (*os.File, int64, error) {
	flags := os.O_CREATE | os.O_RDWR | os.O_APPEND
	if trunc {
		flags |= os.O_TRUNC
	}
	path := filepath.Join(dir, LogName(gen))
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("persist: open log: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() == 0 {
		if _, err = f.Write(fileHeader()); err == nil {
			err = f.Sync()
		}
	} else if err == nil && st.Size() < fileHdrLen {
		err = fmt.Errorf("%s: %d bytes, shorter than the log header", path, st.Size())
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		f.Close()
		if trunc {
			os.Remove(path) // a new generation that never started
		}
		return nil, 0, fmt.Errorf("persist: open log: %w", err)
	}
	return f, max(st.Size(), fileHdrLen), nil
}

// SetRescue sets a function the background loop calls (at most every 10
// seconds) while the log needs a snapshot to clear its error; it should
// start one (BGSAVE) and return.
func (l *Log) SetRescue(fn func()) {
	l.ioMu.Lock()
	l.rescue = fn
	l.ioMu.Unlock()
}

func (l *Log) background() {
	defer close(l.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.Err() != nil {
				l.tick()
				continue
			}
			if l.policy == EverySec {
				if err := l.sync(true); err != nil {
					l.logger.Error("append-only log fsync failed", "err", err)
				}
			}
		}
	}
}

// tick runs once a second while Err is set: it retries a failed write,
// or asks for a snapshot when only one can clear the error, and logs
// (rate-limited) while the failure lasts.
func (l *Log) tick() {
	l.ioMu.Lock()
	var rescue func()
	if l.broken {
		if l.rescue != nil && time.Since(l.rescued) >= 10*time.Second {
			l.rescued = time.Now()
			rescue = l.rescue
		}
	} else if l.retryLocked() {
		l.ioMu.Unlock()
		return
	}
	if err := l.Err(); err != nil && time.Since(l.loggedAt) >= 30*time.Second {
		l.loggedAt = time.Now()
		l.logger.Error("append-only log still failing; writes are refused", "err", err, "since", l.failedAt.Format(time.RFC3339), "retries", l.retries, "needs_snapshot", l.broken)
	}
	l.ioMu.Unlock()
	if rescue != nil {
		rescue()
	}
}

// retryLocked tries to repair a failed write (ioMu held): it truncates
// the file back to its last whole record, so no partial record of the
// failed write stays in the middle of the log, writes the failed record
// again and, unless the policy is No, fsyncs. It reports whether Err is
// clear afterwards.
func (l *Log) retryLocked() bool {
	if l.Err() == nil {
		return true
	}
	if l.broken {
		return false
	}
	l.retries++
	l.mu.Lock()
	f, fw := l.f, l.fw
	l.mu.Unlock()
	good := l.size.Load()
	if err := f.Truncate(good); err != nil {
		return false
	}
	if len(l.pending) > 0 {
		if err := fw.write(l.pending); err != nil {
			return false
		}
		l.size.Add(int64(len(l.pending)))
		storeMax(&l.written, l.pendingEnd)
	}
	if l.policy != No {
		if err := f.Sync(); err != nil {
			return false
		}
		storeMax(&l.synced, l.pendingEnd)
	}
	l.pending, l.pendingEnd = nil, 0
	l.logger.Info("append-only log works again: writes accepted", "failed_since", l.failedAt.Format(time.RFC3339), "retries", l.retries)
	l.err.Store(nil)
	l.retries = 0
	return true
}

func storeMax(a *atomic.Int64, v int64) {
	if a.Load() < v {
		a.Store(v)
	}
}

// ensureHeader makes buf a record buffer (recHdrLen reserved bytes).
func ensureHeader(buf []byte) []byte {
	if len(buf) == 0 {
		var h [recHdrLen]byte
		buf = append(buf, h[:]...)
	}
	return buf
}

// Append adds one command and returns the log offset just past it.
func (l *Log) Append(args [][]byte) int64 {
	l.mu.Lock()
	l.buf = ensureHeader(l.buf)
	n := len(l.buf)
	l.buf = resp.AppendCommand(l.buf, args)
	l.end += int64(len(l.buf) - n)
	end := l.end
	l.endA.Store(end)
	l.mu.Unlock()
	return end
}

// AppendGroup adds several commands that land in one record (one
// checksum): replay applies all of them or, if the record is damaged or
// torn, none. It returns the log offset just past the last one. For a
// transaction (MULTI, commands, EXEC) appended under the keyspace lock.
func (l *Log) AppendGroup(cmds [][][]byte) int64 {
	l.mu.Lock()
	l.buf = ensureHeader(l.buf)
	n := len(l.buf)
	for _, args := range cmds {
		l.buf = resp.AppendCommand(l.buf, args)
	}
	l.end += int64(len(l.buf) - n)
	end := l.end
	l.endA.Store(end)
	l.mu.Unlock()
	return end
}

// directMin is the command size from which AppendRaw writes the command
// straight from the caller's bytes instead of copying it into the buffer.
const directMin = 1 << 20

// AppendRaw adds one command given as its RESP array encoding (a client's
// request as received, which replays to the same arguments) and returns
// the log offset just past it.
//
// A command of directMin bytes or more is not copied: with the I/O lock
// held, the buffered commands before it are written, then the command as
// its own record straight from cmd (so a 500 MB item is not held twice).
// The caller holds the keyspace lock, so nothing is appended meanwhile;
// the write is not fsynced here (Flush does, as for any command).
func (l *Log) AppendRaw(cmd []byte) int64 {
	if len(cmd) >= directMin {
		return l.appendDirect(cmd)
	}
	l.mu.Lock()
	l.buf = append(ensureHeader(l.buf), cmd...)
	l.end += int64(len(cmd))
	end := l.end
	l.endA.Store(end)
	l.mu.Unlock()
	return end
}

func (l *Log) appendDirect(cmd []byte) int64 {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	err := l.syncLocked(false)
	l.mu.Lock()
	l.end += int64(len(cmd))
	end := l.end
	l.endA.Store(end)
	if err != nil || uint64(len(cmd)) > maxRecord {
		// The log is failing: keep the command in order in the buffer
		// for the retry.
		l.buf = append(ensureHeader(l.buf), cmd...)
		l.mu.Unlock()
		return end
	}
	fw := l.fw
	l.mu.Unlock()
	var hdr [recHdrLen]byte
	putRecHeader(hdr[:], cmd)
	err = fw.write(hdr[:])
	if err == nil {
		err = fw.write(cmd)
	}
	if err != nil {
		l.pending = append(append(make([]byte, 0, recHdrLen+len(cmd)), hdr[:]...), cmd...)
		l.pendingEnd = end
		l.fail(fmt.Errorf("persist: write log: %w", err))
		return end
	}
	l.size.Add(int64(recHdrLen + len(cmd)))
	l.written.Store(end)
	return end
}

// Err is the current write or fsync failure; while it is set, the server
// refuses writes.
func (l *Log) Err() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records err as the log's failure (ioMu held) and returns it.
func (l *Log) fail(err error) error {
	if l.err.CompareAndSwap(nil, &err) {
		l.failedAt = time.Now()
		l.loggedAt = l.failedAt
		l.retries = 0
		l.logger.Error("append-only log failed; writes are refused until it works again (retried every second)", "err", err)
	}
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

// Sync writes and fsyncs everything appended so far, first retrying a
// failed write.
func (l *Log) Sync() error {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	l.retryLocked()
	return l.syncLocked(true)
}

func (l *Log) sync(fsync bool) error {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	return l.syncLocked(fsync)
}

// syncLocked writes the buffered commands as one record and, with fsync,
// fsyncs the file (ioMu held).
func (l *Log) syncLocked(fsync bool) error {
	if err := l.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	buf := l.buf
	end := l.end
	f, fw := l.f, l.fw
	if len(buf) > recHdrLen {
		l.buf, l.spare = l.spare, nil
	}
	l.mu.Unlock()
	if len(buf) > recHdrLen {
		if uint64(len(buf)-recHdrLen) > maxRecord {
			l.pending, l.pendingEnd = buf, end
			l.broken = true
			return l.fail(fmt.Errorf("persist: write log: %d bytes buffered, over one record's limit", len(buf)-recHdrLen))
		}
		frame(buf)
		if err := fw.write(buf); err != nil {
			l.pending, l.pendingEnd = buf, end
			return l.fail(fmt.Errorf("persist: write log: %w", err))
		}
		l.size.Add(int64(len(buf)))
		l.written.Store(end)
		// Keep the buffer for reuse if it is small: as the buffer if
		// nobody appended meanwhile, else as the next write's spare.
		if cap(buf) <= 1<<20 {
			l.mu.Lock()
			if l.buf == nil {
				l.buf = buf[:recHdrLen]
			} else if l.spare == nil {
				l.spare = buf[:recHdrLen]
			}
			l.mu.Unlock()
		}
	}
	if fsync && l.synced.Load() < end {
		if h := l.syncHook.Load(); h != nil {
			(*h)()
		}
		if err := f.Sync(); err != nil {
			l.broken = true
			return l.fail(fmt.Errorf("persist: fsync log (a snapshot will clear this): %w", err))
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
// generation gen+1, recording it in the manifest. The caller holds the
// keyspace lock so no command is appended meanwhile, and writes a
// snapshot of the keyspace as of now with generation gen+1, then calls
// SnapshotWritten.
//
// If the log is failing and the current generation cannot be finished,
// it is abandoned (cut back to its last whole record, with the commands
// not written dropped from the log: the snapshot will hold them) and Err
// stays set until SnapshotWritten: a snapshot is how a failed log is
// reset. A crash before then restarts from the old snapshot and logs,
// which lack only commands that were never acknowledged.
func (l *Log) Switch() (uint64, error) {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	l.retryLocked()
	abandon := l.syncLocked(true) != nil
	l.mu.Lock()
	next := l.gen + 1
	l.mu.Unlock()
	f, _, err := openLogFile(l.dir, next, true)
	if err != nil {
		return 0, err
	}
	m := l.man
	m.LastLog = next
	if err := WriteManifest(l.dir, m); err != nil {
		f.Close()
		os.Remove(filepath.Join(l.dir, LogName(next)))
		return 0, err
	}
	l.man = m
	l.mu.Lock()
	old := l.f
	l.f = f
	l.fw = newFileWriter(f)
	l.gen = next
	if abandon {
		l.buf = l.buf[:min(len(l.buf), recHdrLen)]
	}
	l.mu.Unlock()
	if abandon {
		if err := old.Truncate(l.size.Load()); err != nil {
			l.logger.Error("abandoned log generation could not be cut back to its last whole record", "generation", next-1, "err", err)
		}
		l.pending, l.pendingEnd = nil, 0
		l.broken = true
		l.logger.Warn("append-only log generation abandoned: its unwritten commands go into the snapshot being taken; writes stay refused until it is written", "generation", next-1)
	}
	l.size.Store(fileHdrLen)
	old.Close()
	return next, nil
}

// SnapshotWritten records in the manifest that a snapshot of generation
// gen is on disk (the logs before gen are no longer needed), and clears
// a failure that only a snapshot could clear when gen is the current
// generation.
func (l *Log) SnapshotWritten(gen uint64) error {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	m := l.man
	m.HasSnapshot, m.SnapshotGen, m.FirstLog = true, gen, gen
	if err := WriteManifest(l.dir, m); err != nil {
		return err
	}
	l.man = m
	if l.broken && l.Gen() == gen {
		l.broken = false
		l.err.Store(nil)
		l.logger.Info("append-only log reset by a snapshot: writes accepted", "generation", gen, "failed_since", l.failedAt.Format(time.RFC3339))
	}
	return nil
}

// SetManifest writes m as the directory's manifest and keeps it as the
// base of the updates made by Switch and SnapshotWritten.
func (l *Log) SetManifest(m Manifest) error {
	l.ioMu.Lock()
	defer l.ioMu.Unlock()
	if err := WriteManifest(l.dir, m); err != nil {
		return err
	}
	l.man = m
	return nil
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
		if g, ok := logGen(e.Name()); ok {
			gens = append(gens, g)
		}
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	return gens, nil
}

// logGen parses a log file name.
func logGen(name string) (uint64, bool) {
	if !strings.HasPrefix(name, "appendonly.") || !strings.HasSuffix(name, ".aof") {
		return 0, false
	}
	g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "appendonly."), ".aof"), 10, 64)
	return g, err == nil
}

// ErrCorruptLog reports a log that is damaged before its tail.
var ErrCorruptLog = errors.New("persist: corrupt append-only log")

// ReplayStats describes a replay.
type ReplayStats struct {
	Files     int
	Commands  int
	Truncated int64 // bytes cut from a torn tail (moved aside, see Aside)
	LastGen   uint64
	// LastVersion is the format version of the newest log (1 or 2): a
	// server appends only to a version 2 log.
	LastVersion int
	// Aside names the files the cut bytes were moved to.
	Aside []string
}

// ReplayOptions configures ReplayWith.
type ReplayOptions struct {
	// From is the first generation replayed.
	From uint64
	// AcceptLoss lets replay go on past damage that is not a torn tail:
	// the bytes from the damage on are moved aside and cut, as for a torn
	// tail, and replay goes on with the next generation.
	AcceptLoss bool
}

// Replay is ReplayWith(dir, ReplayOptions{From: from}, exec, logger).
func Replay(dir string, from uint64, exec func(args [][]byte) error, logger *slog.Logger) (ReplayStats, error) {
	return ReplayWith(dir, ReplayOptions{From: from}, exec, logger)
}

// ReplayWith feeds every command of the logs with generation >= o.From
// to exec, in order (both format versions, see logformat.go).
//
// Damage: a torn tail of the newest log (provably an incomplete final
// record, see logDamage) is cut off with a log line; damage anywhere
// else returns an error wrapping ErrCorruptLog that names the file, the
// offset and how to accept the loss, and the server must not start. No
// byte is destroyed: a cut tail is first copied to
// <log>.torn-<offset> (or .corrupt-<offset> with AcceptLoss), fsynced,
// and only then truncated. exec returning an error stops the replay with
// that error.
func ReplayWith(dir string, o ReplayOptions, exec func(args [][]byte) error, logger *slog.Logger) (ReplayStats, error) {
	var st ReplayStats
	st.LastGen = o.From
	st.LastVersion = logVersion
	gens, err := ListLogs(dir)
	if err != nil {
		return st, err
	}
	var todo []uint64
	for _, g := range gens {
		if g >= o.From {
			todo = append(todo, g)
		}
	}
	for i, g := range todo {
		last := i == len(todo)-1
		path := filepath.Join(dir, LogName(g))
		n, v, cut, aside, err := replayFile(path, exec, last, o.AcceptLoss, logger)
		st.Commands += n
		st.Truncated += cut
		if aside != "" {
			st.Aside = append(st.Aside, aside)
		}
		st.Files++
		st.LastGen = g
		st.LastVersion = v
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

func replayFile(path string, exec func([][]byte) error, last, acceptLoss bool, logger *slog.Logger) (n, version int, cut int64, aside string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, 0, "", err
	}
	size := fi.Size()
	version, n, err = decodeLog(f, size, func(args [][]byte) error {
		if err := exec(args); err != nil {
			return &execError{err}
		}
		return nil
	})
	var xe *execError
	if errors.As(err, &xe) {
		return n, version, 0, "", fmt.Errorf("persist: replay %s: %w", path, xe.err)
	}
	var d *logDamage
	if !errors.As(err, &d) {
		if err != nil {
			err = fmt.Errorf("persist: replay %s: %w", path, err)
		}
		return n, version, 0, "", err
	}
	torn := d.Torn && last
	if !torn && !acceptLoss {
		where := "the newest log"
		if !last {
			where = "an older generation (newer logs follow it)"
		}
		if d.Torn {
			d.Reason += " in " + where
		}
		return n, version, 0, "", fmt.Errorf("%w: %s %s (file size %d); refusing to start: the %d bytes from that offset cannot be trusted, and %d commands before it were read. "+
			"To start without them, restart with --accept-log-loss (Config.AcceptLogLoss): the bytes are moved to %s.corrupt-%d, not deleted",
			ErrCorruptLog, path, d.Error(), size, size-d.Off, n, path, d.Off)
	}
	suffix := "torn"
	if !torn {
		suffix = "corrupt"
	}
	f.Close()
	aside, err = moveTail(path, fmt.Sprintf("%s.%s-%d", path, suffix, d.Off), d.Off)
	if err != nil {
		return n, version, 0, "", err
	}
	cut = size - d.Off
	if torn {
		logger.Warn("cut the torn tail of the append-only log (an incomplete final record from a crash); the bytes are kept beside it", "file", path, "offset", d.Off, "bytes", cut, "reason", d.Reason, "moved_to", aside)
	} else {
		logger.Error("DATA LOSS ACCEPTED: cut a damaged append-only log at the damage (accept-log-loss); the bytes are kept beside it", "file", path, "offset", d.Off, "bytes", cut, "reason", d.Reason, "moved_to", aside)
	}
	if d.Off == 0 {
		version = logVersion // empty now: OpenLog writes a header into it
	}
	return n, version, cut, aside, nil
}

type execError struct{ err error }

func (e *execError) Error() string { return e.err.Error() }

// moveTail copies the bytes of path from off on to a new file named
// aside (or aside.2, aside.3, ... if that exists), fsyncs it and the
// directory, and only then truncates path to off. It returns the name
// used.
func moveTail(path, aside string, off int64) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("persist: move tail aside: %w", err)
	}
	defer src.Close()
	name := aside
	dst, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	for i := 2; errors.Is(err, os.ErrExist) && i < 1000; i++ {
		name = fmt.Sprintf("%s.%d", aside, i)
		dst, err = os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("persist: move tail aside: %w", err)
	}
	_, err = src.Seek(off, io.SeekStart)
	if err == nil {
		_, err = io.Copy(dst, src)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err == nil {
		err = os.Truncate(path, off)
	}
	if err != nil {
		return "", fmt.Errorf("persist: move tail of %s aside to %s: %w", path, name, err)
	}
	return name, nil
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
