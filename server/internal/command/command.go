// Package command parses and runs the server's commands: the generic
// Redis commands clients and operators use, RedisBloom's BF.* and CF.*,
// and Bloomery's BLOOMERY.* extras. Dispatch happens in one place (Exec),
// which applies, in order: command lookup, the authentication gate, the
// arity check, queueing inside MULTI (multi.go), the persistence and
// memory gates, the keyspace lock, the command itself, the append-only
// log, and the connection's durability target (see Env.observed).
//
// Reply texts follow Redis and RedisBloom 8.x exactly; docs/commands.md
// lists them.
package command

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/server/internal/keyspace"
	"github.com/bloomery/bloomery/server/internal/resp"
)

// Generic error texts (Redis's).
const (
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNoAuth    = "NOAUTH Authentication required."
	errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."
	errOOM       = "OOM command not allowed when used memory > 'maxmemory'."
	errSyntax    = "ERR syntax error"
	errNotInt    = "ERR value is not an integer or out of range"
)

// Hooks are what commands need from the server around them.
type Hooks interface {
	// Log appends a state-changing command to the append-only log and
	// returns the log offset just past it. raw, when not nil, is the
	// command's RESP encoding as the client sent it (parsing it yields
	// args), logged as is instead of encoding args again.
	Log(args [][]byte, raw []byte) int64
	// LogEnd is the log offset just past the last appended command (an
	// atomic load). After every command that read or wrote the keyspace
	// the connection's LogOff becomes at least LogEnd, so its reply waits
	// for every write it could have observed to be as durable as the
	// fsync policy makes its own writes.
	LogEnd() int64
	// PersistErr is the persistence failure that stops writes, if any.
	PersistErr() error
	// Info renders one INFO section (lower-case name) without its header.
	Info(section string) string
	Save() error
	BGSave() error
	LastSave() int64
	// Shutdown stops the server after the current command's reply,
	// writing a snapshot first with save; a failed snapshot is returned
	// (and the server keeps running) unless force.
	Shutdown(save, force bool) error
	// Config returns a configuration parameter's value for CONFIG GET.
	Config(name string) (string, bool)
	// ClientList renders CLIENT LIST.
	ClientList() string
}

// Env is the state shared by all connections.
type Env struct {
	Store     *keyspace.Store
	Hooks     Hooks
	Password  string
	MaxMemory uint64
	// MaxFilterBytes bounds the memory one LOADCHUNK header may make the
	// server allocate when MaxMemory is 0.
	MaxFilterBytes uint64
	// Keys are the SipHash keys KEYID may name (the server's key file).
	Keys map[string][16]byte
	// Overhead, when set, is the memory the server holds outside the
	// keyspace (client query and output buffers), counted
	// with the keyspace against MaxMemory. It must be cheap (atomic loads)
	// and safe for concurrent use: the memory gate calls it.
	Overhead func() uint64
	// MaxTxBytes bounds the bytes one MULTI may queue and TxBudget those
	// all connections' transactions queue together (0 = no bound);
	// TxBytes is what they hold now, counted in the server's Overhead.
	MaxTxBytes, TxBudget int64
	TxBytes              atomic.Int64
	// Replaying is set while the log is replayed: nothing is logged and
	// the memory gate is off.
	Replaying bool
	Started   time.Time
	// TotalCommands counts every command run (INFO
	// total_commands_processed), flushed from the connections' local
	// counts like the per-command Stats.
	TotalCommands atomic.Uint64

	statsOnce sync.Once
	stats     []Stats
	watch     watchTable
}

// Conn is one client's state.
type Conn struct {
	ID      int64
	Addr    string
	Name    string
	LibName string
	LibVer  string
	Authed  bool
	// Close asks the connection loop to flush and close.
	Close bool
	// LogOff is the log offset up to which the log must be durable before
	// this client's replies are released: past its own last logged
	// command, and past every command logged before it last read or wrote
	// the keyspace (state it may have reported).
	LogOff int64
	W      *resp.Writer
	// Raw is the current command's RESP bytes as received, or nil (see
	// resp.Reader.Raw); set by the connection before Exec.
	Raw []byte
	// OnAuth is called when the client authenticates (to lift the
	// reader's pre-auth limits).
	OnAuth  func()
	nameBuf [32]byte
	// last caches the spec of the previous command and its name as sent
	// (lastName[:lastLen]): a pipeline usually repeats one command, and
	// comparing the bytes is cheaper than the table lookup.
	last     *Spec
	lastName [32]byte
	lastLen  int
	// pending counts calls of one command not yet added to its Stats
	// (see FlushStats).
	pending      *Stats
	pendingCalls uint64
	pendingTotal uint64 // every command, for TotalCommands
	tick         uint32
	ctx          Ctx

	// OnAuthFail, when set, is called after a wrong password (AUTH or
	// HELLO AUTH) is refused and before the reply is sent; it may delay
	// the connection or set Close (the server's failed-AUTH throttle).
	OnAuthFail func()
	tx         txState
}

// TimingSample: one command in TimingSample per connection is timed for
// the latency histogram (reading the clock twice costs about as much as a
// single-item command on a virtual machine).
const TimingSample = 16

// flags
const (
	fWrite   = 1 << iota // modifies the keyspace: write lock, logged when dirty
	fRead                // reads the keyspace: read lock
	fDenyOOM             // refused when memory is over maxmemory
	fNoAuth              // allowed before authentication
	fTxCtl               // runs at once inside MULTI (not queued): MULTI, EXEC, DISCARD, WATCH, QUIT
	fNoMulti             // refused inside MULTI (it would wait for the lock EXEC holds)
	fAllKeys             // every argument after the name is a key (for WATCH)
	fFlush               // modifies every key (for WATCH)
)

// Spec describes one command.
type Spec struct {
	Name  string // lower case, as in arity errors
	Arity int    // Redis convention: n exact, -n at least n
	Flags int
	// Run executes the command and reports whether it changed the
	// keyspace (only then is it logged).
	Run   func(x *Ctx) bool
	Group string
	Help  string
	index int
}

// Stats are one command's counters in one server (Env).
type Stats struct {
	Spec   *Spec
	calls  atomic.Uint64
	errors atomic.Uint64
	hist   Histogram
}

// Calls, Errors and Hist expose the counters for metrics.
func (s *Stats) Calls() uint64    { return s.calls.Load() }
func (s *Stats) Errors() uint64   { return s.errors.Load() }
func (s *Stats) Hist() *Histogram { return &s.hist }

func (s *Stats) reset() {
	s.calls.Store(0)
	s.errors.Store(0)
	s.hist.reset()
}

// Stats returns the per-command counters of this Env, in command-name
// order.
func (e *Env) Stats() []*Stats {
	e.initStats()
	out := make([]*Stats, len(e.stats))
	for i := range e.stats {
		out[i] = &e.stats[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Name < out[j].Spec.Name })
	return out
}

func (e *Env) initStats() {
	e.statsOnce.Do(func() {
		e.stats = make([]Stats, len(specList))
		for i, s := range specList {
			e.stats[i].Spec = s
		}
	})
}

// Ctx is what a command runs with.
type Ctx struct {
	*Env
	C    *Conn
	W    *resp.Writer
	Args [][]byte
	// LogArgs, when set by a command, is logged instead of Args (for
	// commands whose replay must not depend on randomness, such as a
	// generated hashing key).
	LogArgs [][]byte
	// failed records that the reply was a top-level error (for stats).
	failed bool
	// keyID is the KEYID a command named (see parseKeyOpt).
	keyID string
}

// Error writes an error reply.
func (x *Ctx) Error(msg string) { x.failed = true; x.W.Error(msg) }

// present is the check that begins every command on an existing filter
// key: it replies WRONGTYPE for a key of another type and RedisBloom's
// "not found" for a missing key, and reports whether the command may go on.
func (x *Ctx) present(found, wrong bool) bool {
	switch {
	case wrong:
		x.Error(errWrongType)
	case !found:
		x.Error(errNotFound)
	default:
		return true
	}
	return false
}

func (x *Ctx) arityError() {
	x.Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", x.spec().Name))
}

func (x *Ctx) spec() *Spec { return table[strings.ToLower(string(x.Args[0]))] }

var (
	table    = map[string]*Spec{}
	specList []*Spec
)

func register(specs ...*Spec) {
	for _, s := range specs {
		if _, dup := table[s.Name]; dup {
			panic("command: duplicate " + s.Name)
		}
		s.index = len(specList)
		specList = append(specList, s)
		table[s.Name] = s
	}
}

// Lookup returns the spec of a command name (any case), or nil.
func Lookup(name string) *Spec { return table[strings.ToLower(name)] }

// Specs returns every command spec (unordered).
func Specs() []*Spec {
	out := make([]*Spec, 0, len(table))
	for _, s := range table {
		out = append(out, s)
	}
	return out
}

// IsWrite reports whether the command may modify the keyspace.
func (s *Spec) IsWrite() bool { return s.Flags&fWrite != 0 }

func lowerInto(buf []byte, b []byte) []byte {
	if len(b) > len(buf) {
		return []byte(strings.ToLower(string(b)))
	}
	out := buf[:len(b)]
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// FlushStats adds the calls connection c counted locally to the shared
// per-command counters and TotalCommands. The connection calls it before
// sending replies, so every acknowledged command is counted; Exec calls
// it before a command other than the one being counted, so a connection's
// own INFO and CONFIG RESETSTAT see its earlier commands. Another
// connection's pending calls (at most one pipeline's) are added when it
// replies, even if a CONFIG RESETSTAT ran meanwhile.
func (e *Env) FlushStats(c *Conn) {
	if c.pending != nil && c.pendingCalls > 0 {
		c.pending.calls.Add(c.pendingCalls)
	}
	if c.pendingTotal > 0 {
		e.TotalCommands.Add(c.pendingTotal)
	}
	c.pending, c.pendingCalls, c.pendingTotal = nil, 0, 0
}

// Exec runs one command and writes its reply to c.W.
func (e *Env) Exec(c *Conn, args [][]byte) {
	var spec *Spec
	if c.last != nil && string(args[0]) == string(c.lastName[:c.lastLen]) {
		spec = c.last
	} else {
		spec = table[string(lowerInto(c.nameBuf[:], args[0]))]
		if spec != nil && len(args[0]) <= len(c.lastName) {
			c.last, c.lastLen = spec, copy(c.lastName[:], args[0])
		}
	}
	w := c.W
	if spec == nil {
		c.pendingTotal++
		c.tx.bad = c.tx.multi
		w.Error(unknownCommand(args))
		return
	}
	e.initStats()
	st := &e.stats[spec.index]
	if c.pending != st {
		e.FlushStats(c)
	}
	c.pendingTotal++
	if e.Password != "" && !c.Authed && spec.Flags&fNoAuth == 0 {
		w.Error(errNoAuth)
		return
	}
	if (spec.Arity > 0 && len(args) != spec.Arity) || (spec.Arity < 0 && len(args) < -spec.Arity) {
		st.errors.Add(1)
		c.tx.bad = c.tx.multi
		w.Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", spec.Name))
		return
	}
	if c.tx.multi && spec.Flags&fTxCtl == 0 {
		e.queue(c, spec, args)
		return
	}
	if spec.Flags&fWrite != 0 && !e.Replaying {
		if err := e.Hooks.PersistErr(); err != nil {
			st.errors.Add(1)
			w.Error("MISCONF Errors writing to the append-only log; writes are refused until it works again: " + err.Error())
			return
		}
	}
	if spec.Flags&fDenyOOM != 0 && e.MaxMemory > 0 && !e.Replaying {
		e.Store.RLock()
		used := e.Store.Used()
		if e.Overhead != nil {
			used += e.Overhead()
		}
		over := used > e.MaxMemory
		e.Store.RUnlock()
		if over {
			st.errors.Add(1)
			w.Error(errOOM)
			return
		}
	}
	c.tick++
	timed := c.tick%TimingSample == 0
	var start time.Time
	if timed {
		start = time.Now()
	}
	// The context lives in the connection so a command does not allocate.
	x := &c.ctx
	*x = Ctx{Env: e, C: c, W: w, Args: args}
	switch {
	case spec.Flags&fWrite != 0:
		e.Store.Lock()
		if spec.Run(x) {
			e.Store.Dirty++
			e.touched(spec, args)
			if !e.Replaying {
				if x.LogArgs != nil {
					c.LogOff = e.Hooks.Log(x.LogArgs, nil)
				} else {
					c.LogOff = e.Hooks.Log(args, c.Raw)
				}
			}
		}
		e.Store.Unlock()
		e.observed(c)
	case spec.Flags&fRead != 0:
		e.Store.RLock()
		spec.Run(x)
		e.Store.RUnlock()
		e.observed(c)
	default:
		spec.Run(x)
	}
	// Forget the arguments (they point into the connection's read
	// buffer, which may be a large one about to be released).
	x.Args, x.LogArgs = nil, nil
	if timed {
		st.hist.Observe(time.Since(start))
	}
	// Count the call locally while the connection repeats the command;
	// the shared counter (contended by every connection) is updated when
	// the command changes or the connection flushes its replies.
	if c.pending != st {
		e.FlushStats(c)
		c.pending = st
	}
	c.pendingCalls++
	if x.failed {
		st.errors.Add(1)
	}
}

// observed raises c.LogOff to the log's end after c ran a command on the
// keyspace: whatever the reply reports (an item present, a key existing)
// may come from another client's write not yet durable, and the reply
// must wait for it as for c's own writes. Every write the command could
// observe was appended before it released the keyspace lock, so the end
// read after that covers them. Cost: one atomic load; the connection's
// flush makes no system call when the log is already durable there.
func (e *Env) observed(c *Conn) {
	if e.Replaying {
		return
	}
	if end := e.Hooks.LogEnd(); end > c.LogOff {
		c.LogOff = end
	}
}

// unknownCommand renders Redis's message, quoting at most the first
// arguments (each truncated to 128 bytes, the list to 128 bytes total).
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(trunc(args[0], 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range args[1:] {
		if b.Len() > 256 {
			break
		}
		b.WriteString("'")
		b.WriteString(trunc(a, 128-b.Len()%128))
		b.WriteString("' ")
	}
	return b.String()
}

func trunc(b []byte, n int) string {
	if n < 0 {
		n = 0
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// eq reports whether b equals the lower-case word s, ignoring case.
func eq(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Histogram is a fixed-bucket latency histogram safe for concurrent use.
type Histogram struct {
	counts [len(HistBounds) + 1]atomic.Uint64
	sumNs  atomic.Uint64
}

// HistBounds are the upper bounds (seconds) of the latency buckets.
var HistBounds = [...]float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2, 0.1, 1}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(HistBounds) && s > HistBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(uint64(d.Nanoseconds()))
}

func (h *Histogram) reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.sumNs.Store(0)
}

// Snapshot returns the per-bucket (non-cumulative) counts, the last one
// being +Inf, and the sum in seconds.
func (h *Histogram) Snapshot() (counts []uint64, sum float64) {
	counts = make([]uint64, len(h.counts))
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
	}
	return counts, float64(h.sumNs.Load()) / 1e9
}
