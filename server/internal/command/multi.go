package command

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Transactions: MULTI queues commands, EXEC runs the queue atomically
// under the keyspace write lock and replies with the array of their
// replies, DISCARD drops it. WATCH makes the next EXEC fail (a null
// array) if any watched key was modified meanwhile, by any client.
//
// Logging: the commands of one EXEC that changed the keyspace are
// appended under the write lock, one after the other (no other command
// can come between them), framed by MULTI and EXEC when there are two or
// more. Replay runs the log's MULTI, commands and EXEC through the same
// code, so a transaction whose EXEC did not reach the log (a torn tail)
// is never applied: server.load then appends a DISCARD to close it.

// MaxQueued bounds the commands one MULTI may queue: a longer transaction
// fails at EXEC with EXECABORT.
const MaxQueued = 1 << 20

func init() {
	register(
		&Spec{Name: "multi", Arity: 1, Flags: fTxCtl, Run: multi, Group: "transactions", Help: "MULTI"},
		&Spec{Name: "exec", Arity: 1, Flags: fTxCtl, Run: execTx, Group: "transactions", Help: "EXEC"},
		&Spec{Name: "discard", Arity: 1, Flags: fTxCtl, Run: discard, Group: "transactions", Help: "DISCARD"},
		&Spec{Name: "watch", Arity: -2, Flags: fTxCtl, Run: watch, Group: "transactions", Help: "WATCH key [key ...]"},
		&Spec{Name: "unwatch", Arity: 1, Run: unwatch, Group: "transactions", Help: "UNWATCH"},
	)
}

// txState is one connection's transaction: the queue of MULTI and the
// keys of WATCH.
type txState struct {
	multi bool
	// bad records a command refused while queueing: EXEC aborts.
	bad     bool
	queue   []queued
	watches []watched
	// bytes is the memory the queue holds, charged to Env.TxBytes.
	bytes int64
}

type queued struct {
	spec *Spec
	args [][]byte
}

type watched struct {
	key string
	ver uint64
}

// watchTable holds a version per watched key, bumped by every change of
// the key; entries live while some connection watches the key.
type watchTable struct {
	mu sync.Mutex
	m  map[string]*watchEntry
	// n is len(m), read without mu by writers (an atomic load per write
	// command when nothing is watched).
	n atomic.Int64
}

type watchEntry struct {
	ver  uint64
	refs int
}

// InMulti reports whether c is inside MULTI, and how many commands it has
// queued (used after replay to find a transaction the log ended inside).
func (c *Conn) InMulti() (bool, int) { return c.tx.multi, len(c.tx.queue) }

// Release drops c's watches and queue; the connection calls it when it
// closes.
func (e *Env) Release(c *Conn) {
	e.unwatchAll(c)
	e.TxBytes.Add(-c.tx.bytes)
	c.tx = txState{}
}

// queue adds a command to c's transaction and replies QUEUED, or refuses
// it (and dooms the transaction) when MULTI cannot run it.
func (e *Env) queue(c *Conn, spec *Spec, args [][]byte) {
	if spec.Flags&fNoMulti != 0 {
		c.tx.bad = true
		c.W.Error("ERR Command not allowed inside a transaction")
		return
	}
	if len(c.tx.queue) >= MaxQueued {
		c.tx.bad = true
		c.W.Error(fmt.Sprintf("ERR transaction too long: at most %d queued commands", MaxQueued))
		return
	}
	// Arguments alias the connection's read buffer: keep a copy, charged
	// to the transaction's and every transaction's byte limits.
	n := 0
	for _, a := range args {
		n += len(a) + 24
	}
	if (e.MaxTxBytes > 0 && c.tx.bytes+int64(n) > e.MaxTxBytes) ||
		(e.TxBudget > 0 && e.TxBytes.Load()+int64(n) > e.TxBudget) {
		c.tx.bad = true
		c.W.Error(fmt.Sprintf("ERR transaction too large: queued commands would exceed the server's limit (%d bytes a transaction, %d for all clients' transactions)", e.MaxTxBytes, e.TxBudget))
		return
	}
	c.tx.bytes += int64(n)
	e.TxBytes.Add(int64(n))
	buf := make([]byte, 0, n)
	cp := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		cp[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	c.tx.queue = append(c.tx.queue, queued{spec, cp})
	c.W.Status("QUEUED")
}

func multi(x *Ctx) bool {
	if x.C.tx.multi {
		x.Error("ERR MULTI calls can not be nested")
		return false
	}
	x.C.tx.multi = true
	x.W.Status("OK")
	return false
}

func discard(x *Ctx) bool {
	if !x.C.tx.multi {
		x.Error("ERR DISCARD without MULTI")
		return false
	}
	x.Env.Release(x.C)
	x.W.Status("OK")
	return false
}

func watch(x *Ctx) bool {
	if x.C.tx.multi {
		x.Error("ERR WATCH inside MULTI is not allowed")
		return false
	}
	t := &x.Env.watch
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[string]*watchEntry)
	}
	for _, k := range x.Args[1:] {
		en := t.m[string(k)]
		if en == nil {
			en = &watchEntry{}
			t.m[string(k)] = en
		}
		en.refs++
		x.C.tx.watches = append(x.C.tx.watches, watched{string(k), en.ver})
	}
	t.n.Store(int64(len(t.m)))
	t.mu.Unlock()
	x.W.Status("OK")
	return false
}

func unwatch(x *Ctx) bool {
	x.Env.unwatchAll(x.C)
	x.W.Status("OK")
	return false
}

func (e *Env) unwatchAll(c *Conn) {
	if len(c.tx.watches) == 0 {
		return
	}
	t := &e.watch
	t.mu.Lock()
	for _, w := range c.tx.watches {
		if en := t.m[w.key]; en != nil {
			if en.refs--; en.refs == 0 {
				delete(t.m, w.key)
			}
		}
	}
	t.n.Store(int64(len(t.m)))
	t.mu.Unlock()
	c.tx.watches = c.tx.watches[:0]
}

// touched bumps the version of every watched key a state-changing command
// modified. The caller holds the keyspace write lock.
func (e *Env) touched(spec *Spec, args [][]byte) {
	if e.watch.n.Load() == 0 {
		return
	}
	t := &e.watch
	t.mu.Lock()
	switch {
	case spec.Flags&fFlush != 0:
		for _, en := range t.m {
			en.ver++
		}
	case spec.Flags&fAllKeys != 0:
		for _, k := range args[1:] {
			if en := t.m[string(k)]; en != nil {
				en.ver++
			}
		}
	case len(args) > 1:
		if en := t.m[string(args[1])]; en != nil {
			en.ver++
		}
	}
	t.mu.Unlock()
}

// watchesIntact reports whether no key c watches changed since WATCH.
func (e *Env) watchesIntact(c *Conn) bool {
	t := &e.watch
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range c.tx.watches {
		if en := t.m[w.key]; en == nil || en.ver != w.ver {
			return false
		}
	}
	return true
}

// execTx runs EXEC: the whole queue under the keyspace write lock, one
// reply element per command, and the changed commands logged together.
func execTx(x *Ctx) bool {
	e, c := x.Env, x.C
	if !c.tx.multi {
		x.Error("ERR EXEC without MULTI")
		return false
	}
	tx := c.tx
	c.tx.queue = nil
	e.TxBytes.Add(-c.tx.bytes)
	c.tx.bytes = 0
	c.tx.multi, c.tx.bad = false, false
	defer e.unwatchAll(c)
	// Even a null reply reports state (a watched key changed).
	defer e.observed(c)
	if tx.bad {
		x.Error("EXECABORT Transaction discarded because of previous errors.")
		return false
	}
	writes, denyOOM := false, false
	for _, q := range tx.queue {
		writes = writes || q.spec.Flags&fWrite != 0
		denyOOM = denyOOM || q.spec.Flags&fDenyOOM != 0
	}
	if writes && !e.Replaying {
		if err := e.Hooks.PersistErr(); err != nil {
			x.Error("EXECABORT Transaction discarded because of: MISCONF Errors writing to the append-only log; writes are refused until it works again: " + err.Error())
			return false
		}
	}
	e.Store.Lock()
	defer e.Store.Unlock()
	if denyOOM && e.MaxMemory > 0 && !e.Replaying && e.Store.Used() > e.MaxMemory {
		x.Error("EXECABORT Transaction discarded because of: " + errOOM)
		return false
	}
	if !e.Replaying && !e.watchesIntact(c) {
		x.W.NullArray()
		return false
	}
	e.initStats()
	x.W.Array(len(tx.queue))
	var logs [][][]byte
	for _, q := range tx.queue {
		st := &e.stats[q.spec.index]
		st.calls.Add(1)
		ix := &Ctx{Env: e, C: c, W: x.W, Args: q.args}
		if q.spec.Run(ix) {
			e.Store.Dirty++
			e.touched(q.spec, q.args)
			if ix.LogArgs != nil {
				logs = append(logs, ix.LogArgs)
			} else {
				logs = append(logs, q.args)
			}
		}
		if ix.failed {
			st.errors.Add(1)
		}
	}
	if len(logs) > 0 && !e.Replaying {
		if len(logs) > 1 {
			e.Hooks.Log(txMulti, nil)
		}
		for _, a := range logs {
			c.LogOff = e.Hooks.Log(a, nil)
		}
		if len(logs) > 1 {
			c.LogOff = e.Hooks.Log(txExec, nil)
		}
	}
	// Exec's own accounting (Dirty, logging) is done here: report no
	// change so Exec does not log EXEC again.
	return false
}

var (
	txMulti = [][]byte{[]byte("MULTI")}
	txExec  = [][]byte{[]byte("EXEC")}
)
