package server

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/server/internal/resp"
)

// Memory accounting outside the keyspace. maxmemory is checked against
// the keyspace (filters and key names) plus what is counted here: every
// connection's query buffer (charged to a resp.Budget by its Reader) and
// its reply buffer (charged by the connection when the buffer's capacity
// changes, at most twice a flush). Every update is one atomic add, made
// only when a buffer is allocated, grown or released; the memory gate
// reads two atomics. The log's in-memory buffer is part of used_memory
// (INFO, metrics) but, as in Redis, not of the gate: it holds commands
// already admitted, is written out before their replies, and what it
// keeps for reuse (at most 1 MiB twice) would otherwise refuse writes
// under a small maxmemory for memory no write can free.

// Default output-buffer limits (Config.OutputSoft, OutputSoftTime).
const (
	DefaultOutputSoft     = 8 << 20
	DefaultOutputSoftTime = 10 * time.Second
)

type memAccount struct {
	query  resp.Budget
	output atomic.Int64 // reply buffers' capacity
	// Connections closed for exceeding a limit (INFO stats).
	queryRefused atomic.Uint64
	outputClosed atomic.Uint64
}

// overhead is Env.Overhead: the memory counted against maxmemory outside
// the keyspace.
func (s *Server) overhead() uint64 {
	return uint64(max(0, s.mem.query.Used()) + max(0, s.mem.output.Load()) + max(0, s.env.TxBytes.Load()))
}

// accountOutput charges a change of the connection's reply-buffer
// capacity.
func (c *conn) accountOutput() {
	if n := int64(c.cc.W.Cap()); n != c.outHeld {
		c.s.mem.output.Add(n - c.outHeld)
		c.outHeld = n
	}
}

// releaseMemory returns the connection's buffers' charges (when it ends).
func (c *conn) releaseMemory() {
	c.rd.Release()
	c.s.mem.output.Add(-c.outHeld)
	c.outHeld = 0
}

// overHard reports (and logs) a connection whose pending replies passed
// the hard output limit: it is closed without them.
func (c *conn) overHard() bool {
	h := c.s.cfg.OutputHard
	if h <= 0 || int64(c.cc.W.Buffered()) <= h {
		return false
	}
	c.s.mem.outputClosed.Add(1)
	c.s.log.Warn("client output buffer over the hard limit; closing the connection",
		"client", c.cc.Addr, "pending_bytes", c.cc.W.Buffered(), "hard_limit", h)
	c.cc.W.Reset()
	return true
}

// writeReplies flushes the replies. More than the soft output limit
// pending must be written within OutputSoftTime: a client that does not
// read them in time (a slow consumer) gets an error here, is logged, and
// is closed, so it cannot hold its replies' memory indefinitely.
func (c *conn) writeReplies() error {
	w := c.cc.W
	soft := c.s.cfg.OutputSoft
	if soft <= 0 || int64(w.Buffered()) <= soft {
		return w.Flush()
	}
	pending := w.Buffered()
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.OutputSoftTime))
	err := w.Flush()
	c.nc.SetWriteDeadline(time.Time{})
	var ne net.Error
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		c.s.mem.outputClosed.Add(1)
		c.s.log.Warn("client output buffer over the soft limit for too long; closing the connection (slow consumer)",
			"client", c.cc.Addr, "pending_bytes", pending, "soft_limit", soft, "soft_seconds", c.s.cfg.OutputSoftTime.Seconds())
	}
	return err
}
