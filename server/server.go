// Package server is Bloomery's Redis-protocol filter server: RESP2 and
// RESP3 with pipelining, RedisBloom-compatible BF.* and CF.* commands, the
// generic commands clients and operators use, an append-only log with
// snapshots, password authentication, memory and client limits, and a
// Prometheus /metrics handler.
//
// Use: New loads the data directory (snapshot, then the log replayed
// through the normal command path); Serve accepts connections until the
// listener fails or Shutdown is called; Shutdown closes every connection
// after its current command and makes the log durable. docs/server.md
// describes operation, docs/commands.md every command.
//
// Concurrency: one goroutine per connection. Commands are atomic: the
// keyspace is locked for writing by every state-changing command and for
// reading by the others (see internal/keyspace).
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/server/internal/command"
	"github.com/bloomery/bloomery/server/internal/keyspace"
	"github.com/bloomery/bloomery/server/internal/persist"
	"github.com/bloomery/bloomery/server/internal/resp"
)

// Config configures a Server. The zero value of every field but Dir has a
// default.
type Config struct {
	// Dir is the data directory (created if missing). Required.
	Dir string
	// AppendFsync is the log's fsync policy: "always", "everysec"
	// (default) or "no".
	AppendFsync string
	// Password, when set, is required (AUTH or HELLO AUTH) before any
	// command but AUTH, HELLO and QUIT.
	Password string
	// MaxMemory bounds the memory the server holds, in bytes (0 =
	// unlimited): the filters, the key names, the clients' query and
	// reply buffers (INFO used_memory also shows the log's buffer, which
	// is not checked, as in Redis). Commands that would create or
	// grow a filter past it, and every command that may add data while
	// the total is over it, fail with Redis's OOM error.
	MaxMemory uint64
	// MaxQueryBuffer bounds the bytes all clients' query buffers hold
	// together: a request whose declared length (or buffer growth) would
	// pass it is refused and its connection closed, before the server
	// allocates for it. 0 means MaxMemory (no bound without one); < 0
	// means none.
	MaxQueryBuffer int64
	// OutputHard, OutputSoft and OutputSoftTime limit each client's
	// pending replies, like Redis's client-output-buffer-limit: a client
	// with more than OutputHard bytes of replies pending is closed at once
	// (0 = no hard limit, the default); one with more than OutputSoft
	// pending must read them within OutputSoftTime or is closed (defaults
	// DefaultOutputSoft and DefaultOutputSoftTime; OutputSoft < 0 turns
	// the soft limit off). Closing is logged.
	OutputHard, OutputSoft int64
	OutputSoftTime         time.Duration
	// MaxClients caps simultaneous connections (default 10000).
	MaxClients int
	// MaxBulk, MaxArgs and MaxQuery bound one request: bytes of one
	// argument (default 512 MiB), arguments (default 1M) and total bytes
	// (default 1 GiB). Over-limit requests get a protocol error and the
	// connection is closed, as Redis does.
	MaxBulk, MaxArgs, MaxQuery int
	// MaxFilterLabels caps the filters that get their own /metrics
	// series (default 100; the rest are counted in one gauge).
	MaxFilterLabels int
	// MetricsToken is the bearer token /metrics requires (default: the
	// Password; none when both are empty). MetricsKeyLabels says how
	// per-filter series name their filter: "hashed" (default), "on" or
	// "off" (see MetricsKeysHashed).
	MetricsToken, MetricsKeyLabels string
	// Keys are the SipHash keys keyed filters may reference by id
	// (KEYID id; see ReadKeyFile): the log and the snapshot record the
	// id, and New refuses to start when they need an id Keys lacks.
	Keys map[string][16]byte
	// RewriteMinSize is the log size that triggers a snapshot (and an
	// empty log) when the log has also doubled since the last one
	// (default 64 MiB).
	RewriteMinSize int64
	// IdleTimeout closes a connection that has waited this long for its
	// next command (Redis's timeout; 0 = never). AuthTimeout, when a
	// Password is set, closes a connection that has not authenticated
	// this long after it was accepted (default 10 s; negative = never).
	// See idle.go for how they are enforced.
	IdleTimeout, AuthTimeout time.Duration
	// AcceptLogLoss lets the server start on a log damaged before its
	// tail: the bytes from the damage on are moved aside to a file beside
	// the log (never deleted) and the server starts without them.
	AcceptLogLoss bool
	// Addr is only reported (INFO tcp_port, CONFIG GET bind).
	Addr string
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
}

// Server is a running filter server.
type Server struct {
	cfg    Config
	log    *slog.Logger
	env    *command.Env
	store  *keyspace.Store
	aof    *persist.Log
	policy persist.Policy

	mu        sync.Mutex
	conns     map[*conn]struct{}
	listeners map[net.Listener]struct{}
	mem       memAccount
	closing   bool
	nextID    atomic.Int64

	started        time.Time
	totalConns     atomic.Uint64
	rejectedConns  atomic.Uint64
	saveMu         sync.Mutex
	saving         atomic.Bool
	lastSave       atomic.Int64
	lastSaveOK     atomic.Bool
	lastSaveDur    atomic.Int64
	rewriteBase    atomic.Int64
	dirLock        *persist.DirLock
	shutdownOnce   sync.Once
	shutdownErr    error
	done           chan struct{}
	connsWG        sync.WaitGroup
	loadedKeys     int
	loadedCommands int
	auth           authThrottle
	clock          atomic.Int64 // coarse clock for idle.go
	sweepOnce      sync.Once
	timedOut       atomic.Uint64
	acceptLog      logLimiter
}

// New opens the data directory (created with mode 0700 if missing),
// locks it for the process (a second server on it fails, naming the
// holder's pid), removes left-over temp files and superseded logs, loads
// the snapshot and replays the logs. It refuses to start on a damaged
// snapshot, a log damaged before its tail (a torn final record is cut and
// moved aside, see persist.ReplayWith; Config.AcceptLogLoss accepts
// losing a damaged part), or a file the manifest expects and the
// directory lacks.
func New(cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("server: Config.Dir is required")
	}
	policy, err := persist.ParsePolicy(cfg.AppendFsync)
	if err != nil {
		return nil, err
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 10000
	}
	if cfg.MaxFilterLabels <= 0 {
		cfg.MaxFilterLabels = 100
	}
	if cfg.MetricsKeyLabels, err = checkMetricsKeyLabels(cfg.MetricsKeyLabels); err != nil {
		return nil, err
	}
	for id := range cfg.Keys {
		if !ValidKeyID(id) {
			return nil, fmt.Errorf("server: key id %q: 1-64 letters, digits, '.', '_' or '-'", id)
		}
	}
	if cfg.AuthTimeout == 0 {
		cfg.AuthTimeout = 10 * time.Second
	}
	if cfg.RewriteMinSize <= 0 {
		cfg.RewriteMinSize = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.MaxClients = fitMaxClients(cfg.MaxClients, cfg.Logger)
	if cfg.MaxQueryBuffer == 0 && cfg.MaxMemory > 0 {
		cfg.MaxQueryBuffer = int64(min(cfg.MaxMemory, 1<<62))
	}
	if cfg.OutputSoft == 0 {
		cfg.OutputSoft = DefaultOutputSoft
	}
	if cfg.OutputSoftTime <= 0 {
		cfg.OutputSoftTime = DefaultOutputSoftTime
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("server: data directory: %w", err)
	}
	lock, err := persist.LockDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, store: keyspace.New(), policy: policy,
		conns: make(map[*conn]struct{}), listeners: make(map[net.Listener]struct{}),
		started: time.Now(), done: make(chan struct{}),
	}
	s.lastSaveOK.Store(true)
	s.mem.query.Limit = max(0, cfg.MaxQueryBuffer)
	s.env = &command.Env{
		Store: s.store, Hooks: hooks{s}, Password: cfg.Password, MaxMemory: cfg.MaxMemory,
		MaxFilterBytes: 8 << 30, Started: s.started, Keys: cfg.Keys, Overhead: s.overhead,
		MaxTxBytes: int64(cmp.Or(cfg.MaxQuery, resp.DefaultMaxQuery)), TxBudget: max(0, cfg.MaxQueryBuffer),
	}
	s.dirLock = lock
	if err := s.load(); err != nil {
		lock.Release()
		return nil, err
	}
	s.aof.SetRescue(func() {
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return
		}
		if err := s.snapshot(true); err == nil {
			s.log.Warn("snapshot started to reset the failed append-only log")
		}
	})
	return s, nil
}

func (s *Server) load() error {
	t0 := time.Now()
	dir := s.cfg.Dir
	man, merr := persist.ReadManifest(dir)
	haveMan := merr == nil
	if merr != nil && !persist.IsNotExist(merr) {
		return fmt.Errorf("server: %w", merr)
	}
	gen := uint64(0)
	snap, err := persist.ReadSnapshot(dir)
	haveSnap := err == nil
	if err == nil {
		// Logs below the snapshot's generation are superseded: a crash
		// after the snapshot's rename left them.
		if cerr := persist.Clean(dir, snap.Gen, s.log); cerr != nil {
			return fmt.Errorf("server: %w", cerr)
		}
	} else if cerr := persist.Clean(dir, 0, s.log); cerr != nil {
		return fmt.Errorf("server: %w", cerr)
	}
	gens, lerr := persist.ListLogs(dir)
	if lerr != nil {
		return fmt.Errorf("server: %w", lerr)
	}
	manFrom := uint64(0)
	if haveMan {
		var cerr error
		if manFrom, cerr = man.Check(dir, haveSnap, snap.Gen, gens); cerr != nil {
			return fmt.Errorf("server: %w", cerr)
		}
	} else if len(gens) > 0 || haveSnap {
		s.log.Warn("data directory has no manifest (written by an older version): starting from the files present and writing one", "dir", dir)
	}
	switch {
	case err == nil:
		gen = snap.Gen
		limit := s.env.MaxFilterBytes
		for _, e := range snap.Entries {
			v, err := keyspace.DecodeValueKeys(e.Value, limit, s.cfg.Keys)
			if err != nil {
				return fmt.Errorf("server: snapshot %s/%s, key %q: %w; refusing to start", s.cfg.Dir, persist.SnapshotName, e.Key, err)
			}
			s.store.Set([]byte(e.Key), v)
		}
		s.lastSave.Store(snap.Unix)
	case persist.IsNotExist(err):
		s.lastSave.Store(time.Now().Unix())
	default:
		return fmt.Errorf("server: snapshot %s/%s: %w; refusing to start", s.cfg.Dir, persist.SnapshotName, err)
	}
	snapKeys := s.store.Len()
	s.env.Replaying = true
	rc := &command.Conn{ID: -1, Authed: true, W: resp.NewWriter(nil)}
	from := gen
	if haveMan {
		from = manFrom // max(the manifest's first log, the snapshot's generation)
	}
	st, err := persist.ReplayWith(dir, persist.ReplayOptions{From: from, AcceptLoss: s.cfg.AcceptLogLoss}, func(args [][]byte) error {
		rc.W.Reset()
		s.env.Exec(rc, args)
		if out := rc.W.Bytes(); len(out) > 0 && out[0] == '-' {
			msg := strings.TrimSpace(string(out[1:]))
			if strings.HasPrefix(msg, "ERR unknown command") {
				return fmt.Errorf("%w: %s", persist.ErrCorruptLog, msg)
			}
			if strings.HasPrefix(msg, command.ErrUnknownKeyID) {
				return fmt.Errorf("%s; refusing to start: add the key to the key file", msg)
			}
			s.log.Warn("logged command failed on replay", "command", string(args[0]), "reply", msg)
		}
		return nil
	}, s.log)
	s.env.Replaying = false
	s.env.FlushStats(rc)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	// A log that ends inside MULTI lost its EXEC in a crash: the
	// transaction was never acknowledged and none of it was applied.
	// DISCARD closes it in the log, or the commands appended from now on
	// would replay as part of it.
	torn, queued := rc.InMulti()
	if torn {
		s.env.Release(rc)
		s.log.Warn("the append-only log ends inside a transaction (MULTI without EXEC, from a crash before EXEC was written): none of it was applied", "queued_commands", queued)
	}
	s.loadedKeys = s.store.Len()
	s.loadedCommands = st.Commands
	s.store.Dirty = uint64(st.Commands)
	next := max(from, st.LastGen)
	if st.Files > 0 && st.LastVersion != 2 {
		next++ // never append to a version 1 log: start a new generation
	}
	aof, err := persist.OpenLog(dir, next, s.policy, s.log)
	if err != nil {
		return err
	}
	first := next
	for _, g := range gens {
		if g >= from {
			first = min(first, g)
			break
		}
	}
	if err := aof.SetManifest(persist.Manifest{HasSnapshot: haveSnap, SnapshotGen: snap.Gen, FirstLog: first, LastLog: next}); err != nil {
		aof.Close()
		return fmt.Errorf("server: %w", err)
	}
	s.aof = aof
	if torn {
		aof.Append([][]byte{[]byte("DISCARD")})
		if err := aof.Sync(); err != nil {
			return fmt.Errorf("server: close a torn transaction in the log: %w", err)
		}
	}
	s.rewriteBase.Store(aof.Size())
	s.log.Info("data loaded", "dir", s.cfg.Dir, "snapshot_keys", snapKeys, "snapshot_generation", gen,
		"log_files", st.Files, "log_commands", st.Commands, "torn_bytes_truncated", st.Truncated, "moved_aside", st.Aside,
		"keys", s.store.Len(), "memory_bytes", s.store.Used(), "appendfsync", s.policy.String(),
		"took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Serve accepts connections on ln until ctx is done, ln fails, or the
// server shuts down (Shutdown or the SHUTDOWN command); then it returns
// ErrServerClosed (or the accept error). It does not close existing
// connections on return; Shutdown does.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	if s.timeouts() {
		s.sweepOnce.Do(func() { s.tickClock(); go s.sweep() })
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var delay time.Duration // accept backoff (see acceptRetry)
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if !closing && ctx.Err() == nil && s.acceptRetry(err, &delay) {
				continue
			}
			s.mu.Lock()
			delete(s.listeners, ln)
			s.mu.Unlock()
			if closing || ctx.Err() != nil {
				return ErrServerClosed
			}
			return err
		}
		delay = 0
		s.totalConns.Add(1)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		if len(s.conns) >= s.cfg.MaxClients {
			s.mu.Unlock()
			s.rejectedConns.Add(1)
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			nc.Close()
			continue
		}
		c := s.newConn(nc)
		s.conns[c] = struct{}{}
		s.connsWG.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

// Done is closed when the server has shut down.
func (s *Server) Done() <-chan struct{} { return s.done }

// Shutdown stops accepting, closes every connection (each finishes the
// command it is running and flushes its replies), waits for them until
// ctx is done, then writes and fsyncs the log; if the log is failing
// (full disk, I/O error), it takes a snapshot instead. Then it releases
// the data directory's lock. It is idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		for ln := range s.listeners {
			ln.Close()
		}
		for c := range s.conns {
			c.closeRead()
		}
		s.mu.Unlock()
		waited := make(chan struct{})
		go func() { s.connsWG.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-ctx.Done():
			s.mu.Lock()
			for c := range s.conns {
				c.nc.Close()
			}
			s.mu.Unlock()
		}
		s.saveMu.Lock()
		//lint:ignore SA2001 taking the lock waited for a running snapshot to finish
		s.saveMu.Unlock()
		s.store.Lock()
		err := s.aof.Sync()
		s.store.Unlock()
		if err != nil {
			// The log is failing: a snapshot holds everything and
			// resets it, if the disk takes one.
			s.log.Error("shutdown: the log cannot be written; taking a snapshot instead", "err", err)
			if serr := s.snapshot(false); serr == nil {
				err = nil
			} else {
				s.log.Error("shutdown: snapshot failed too", "err", serr)
			}
		}
		s.store.Lock()
		if cerr := s.aof.Close(); err == nil {
			err = cerr
		}
		s.store.Unlock()
		s.dirLock.Release()
		if err != nil {
			s.shutdownErr = fmt.Errorf("server: final log fsync: %w", err)
			s.log.Error("shutdown: final log fsync failed", "err", err)
		} else {
			s.log.Info("shutdown complete: log written and fsynced", "keys", s.store.Len())
		}
		close(s.done)
	})
	return s.shutdownErr
}

// snapshot writes a snapshot and starts an empty log generation.
//
// Memory: the foreground snapshot (SAVE, SHUTDOWN) encodes each value
// while the keyspace is locked straight into the file's buffered writer,
// through one reused scratch buffer: it needs no copy of the keyspace,
// only the largest value's encoding. A background snapshot must release
// the lock before writing, so it copies each value's encoding (one copy
// of the keyspace, point-in-time under the lock) and then streams them
// to the file with a running CRC, without a second copy of the whole
// encoding.
func (s *Server) snapshot(background bool) error {
	if !s.saving.CompareAndSwap(false, true) {
		//lint:ignore ST1005 Redis's reply text, sent to clients as is
		return errors.New("Background save already in progress")
	}
	s.saveMu.Lock()
	t0 := time.Now()
	now := time.Now()
	fail := func(err error, dirty uint64) error {
		s.lastSaveDur.Store(int64(time.Since(t0)))
		s.lastSaveOK.Store(false)
		if dirty > 0 {
			s.store.Lock()
			s.store.Dirty += dirty
			s.store.Unlock()
		}
		s.log.Error("snapshot failed", "err", err)
		s.saving.Store(false)
		s.saveMu.Unlock()
		return err
	}
	s.store.Lock()
	count := s.store.Len()
	gen, err := s.aof.Switch()
	if err != nil {
		s.store.Unlock()
		return fail(err, 0)
	}
	dirty := s.store.Dirty
	s.store.Dirty = 0
	s.rewriteBase.Store(0)
	sw, err := persist.NewSnapshotWriter(s.cfg.Dir, gen, now.Unix(), uint64(count))
	if err != nil {
		s.store.Unlock()
		return fail(err, dirty)
	}
	var entries []persist.Entry
	if background {
		entries = make([]persist.Entry, 0, count)
		s.store.Each(func(k string, v keyspace.Value) {
			// Sized from the accounted memory, so that the encoding
			// rarely grows (a growing append allocates twice).
			buf := make([]byte, 0, v.MemBytes()+1024)
			entries = append(entries, persist.Entry{Key: k, Value: keyspace.AppendValue(buf, v)})
		})
	} else {
		var scratch []byte
		s.store.Each(func(k string, v keyspace.Value) {
			scratch = keyspace.AppendValue(scratch[:0], v)
			sw.Add(k, scratch) // an error is kept and returned by Commit
		})
	}
	s.store.Unlock()
	write := func() error {
		for i := range entries {
			if err := sw.Add(entries[i].Key, entries[i].Value); err != nil {
				break
			}
			entries[i].Value = nil // let the collector take it once written
		}
		err := sw.Commit()
		if err == nil {
			err = s.aof.SnapshotWritten(gen)
		}
		if err == nil {
			err = persist.RemoveBefore(s.cfg.Dir, gen)
		}
		if err != nil {
			return fail(err, dirty)
		}
		s.lastSaveDur.Store(int64(time.Since(t0)))
		s.lastSave.Store(now.Unix())
		s.lastSaveOK.Store(true)
		s.log.Info("snapshot written", "keys", count, "bytes", sw.Size(), "generation", gen, "took", time.Since(t0).Round(time.Millisecond))
		s.saving.Store(false)
		s.saveMu.Unlock()
		return nil
	}
	if background {
		go write()
		return nil
	}
	return write()
}

type hooks struct{ s *Server }

func (h hooks) Log(args [][]byte, raw []byte) int64 {
	s := h.s
	var off int64
	if raw != nil {
		off = s.aof.AppendRaw(raw)
	} else {
		off = s.aof.Append(args)
	}
	if size := s.aof.Size(); size > s.cfg.RewriteMinSize && size > 2*s.rewriteBase.Load() && !s.saving.Load() {
		s.rewriteBase.Store(size) // do not trigger again while this one starts
		go func() {
			if err := s.snapshot(true); err == nil {
				s.log.Info("log rewrite started: the log outgrew its limit", "log_bytes", size)
			}
		}()
	}
	return off
}

func (h hooks) LogEnd() int64     { return h.s.aof.End() }
func (h hooks) PersistErr() error { return h.s.aof.Err() }
func (h hooks) Save() error       { return h.s.snapshot(false) }
func (h hooks) BGSave() error     { return h.s.snapshot(true) }
func (h hooks) LastSave() int64   { return h.s.lastSave.Load() }

func (h hooks) Shutdown(save, force bool) error {
	s := h.s
	if save {
		if err := s.snapshot(false); err != nil {
			if !force {
				return err
			}
			s.log.Error("SHUTDOWN FORCE: snapshot failed; shutting down with the log only", "err", err)
		}
	}
	s.log.Info("SHUTDOWN command received", "save", save, "force", force)
	go s.Shutdown(context.Background())
	return nil
}

func (h hooks) Config(name string) (string, bool) {
	s := h.s
	switch name {
	case "appendfsync":
		return s.policy.String(), true
	case "appendonly":
		return "yes", true
	case "save":
		return "", true
	case "dir":
		return s.cfg.Dir, true
	case "timeout":
		return fmt.Sprint(int64(s.cfg.IdleTimeout / time.Second)), true
	case "maxclients":
		return fmt.Sprint(s.cfg.MaxClients), true
	case "maxmemory":
		return fmt.Sprint(s.cfg.MaxMemory), true
	case "maxmemory-policy":
		return "noeviction", true
	case "client-output-buffer-limit":
		return fmt.Sprintf("normal %d %d %d", max(0, s.cfg.OutputHard), max(0, s.cfg.OutputSoft), int64(s.cfg.OutputSoftTime.Seconds())), true
	case "client-query-buffer-budget":
		return fmt.Sprint(s.mem.query.Limit), true
	case "databases":
		return "1", true
	case "bind":
		host, _, _ := net.SplitHostPort(s.cfg.Addr)
		return host, true
	case "port":
		_, port, _ := net.SplitHostPort(s.cfg.Addr)
		return port, true
	}
	return "", false
}

func (h hooks) ClientList() string {
	s := h.s
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	sort.Slice(cs, func(i, j int) bool { return cs[i].cc.ID < cs[j].cc.ID })
	var b strings.Builder
	for _, c := range cs {
		// Fields set by the connection's own goroutine are read without
		// its lock; CLIENT LIST is diagnostic, as in Redis.
		fmt.Fprintf(&b, "id=%d addr=%s age=%d\n", c.cc.ID, c.cc.Addr, int(time.Since(c.since).Seconds()))
	}
	return b.String()
}
