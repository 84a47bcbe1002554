package server

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomery/bloomery/server/internal/command"
	"github.com/bloomery/bloomery/server/internal/resp"
)

// flushThreshold bounds the replies buffered while a pipeline is drained.
const flushThreshold = 64 << 10

type conn struct {
	s     *Server
	nc    net.Conn
	rd    *resp.Reader
	cc    *command.Conn
	since time.Time
	// logged is the log offset already made durable for this client.
	logged int64
	// authFails counts this connection's failed authentications (see
	// authThrottle).
	authFails int
	authWait  time.Duration
	quit      chan struct{} // closed by closeRead: ends a holdAuth
	quitOnce  sync.Once
	// waitSince is the server's coarse clock when the pending Read began,
	// 0 while not reading; authed is set on authentication; expired is
	// set (under s.mu) once the sweeper has timed the connection out.
	// See idle.go.
	waitSince atomic.Int64
	authed    atomic.Bool
	expired   bool
	// outHeld is the reply buffer capacity charged to s.mem.output.
	outHeld int64
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, since: time.Now(), quit: make(chan struct{})}
	var rw io.ReadWriter = nc
	if rs := newRawSock(nc); rs != nil {
		rw = rs
	}
	src := io.Reader(rw)
	if s.timeouts() {
		src = &activityReader{src: rw, clock: &s.clock, wait: &c.waitSince}
	}
	c.rd = resp.NewReader(src, resp.Limits{MaxBulk: s.cfg.MaxBulk, MaxArgs: s.cfg.MaxArgs, MaxQuery: s.cfg.MaxQuery})
	c.rd.SetBudget(&s.mem.query)
	c.cc = &command.Conn{ID: s.nextID.Add(1), Addr: nc.RemoteAddr().String(), W: resp.NewWriter(rw)}
	if s.cfg.Password != "" {
		c.rd.SetUnauthenticated(true)
		c.cc.OnAuth = func() { c.rd.SetUnauthenticated(false); c.authed.Store(true) }
		c.cc.OnAuthFail = c.authFailed
	} else {
		c.cc.Authed = true
	}
	return c
}

// closeRead makes the connection's pending read fail so its loop exits
// after the command it is running (used by Shutdown).
func (c *conn) closeRead() {
	c.quitOnce.Do(func() { close(c.quit) })
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
		return
	}
	c.nc.SetReadDeadline(time.Now())
}

// serve runs the connection: read every queued command, run each, and
// flush the replies once the pipeline is drained, after making the log
// durable as far as this client's writes require.
func (c *conn) serve() {
	s := c.s
	defer func() {
		s.env.Release(c.cc)
		c.nc.Close()
		c.releaseMemory()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.connsWG.Done()
	}()
	w := c.cc.W
	for {
		args, err := c.rd.ReadCommand()
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				w.Error(pe.Error())
				if pe.OverBudget() {
					s.mem.queryRefused.Add(1)
					s.log.Warn("query buffer budget exhausted; request refused and connection closed", "client", c.cc.Addr, "err", pe.Msg)
				}
				s.log.Debug("protocol error; closing connection", "client", c.cc.Addr, "err", pe.Msg)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("read error", "client", c.cc.Addr, "err", err)
			}
			c.flush()
			return
		}
		if len(args) == 0 {
			continue
		}
		c.cc.Raw = c.rd.Raw()
		s.env.Exec(c.cc, args)
		// Drop the reference to the request's bytes: after a large one,
		// the reader's buffer can be freed while the client idles.
		c.cc.Raw = nil
		if c.authWait > 0 && !c.holdAuth() { // a wrong password (auththrottle.go)
			return
		}
		if c.overHard() {
			return
		}
		if c.cc.Close {
			c.flush()
			return
		}
		if c.rd.Buffered() == 0 || w.Buffered() > flushThreshold {
			if !c.flush() {
				return
			}
		}
	}
}

// flush releases the buffered replies once the log is durable up to this
// client's last logged command. If the log cannot be made durable the
// replies are dropped and the connection closed: nothing is acknowledged
// that could be lost.
//
// Before writing the log itself, the connection yields once to the other
// runnable goroutines: connections whose pipelines are ready run their
// commands meanwhile and append to the same log buffer, so one write (and
// one fsync under "always") covers them all, and those that run after it
// find their commands covered and issue no log system call. The reply
// still waits for the log: durability is unchanged.
func (c *conn) flush() bool {
	c.s.env.FlushStats(c.cc)
	if c.cc.LogOff > c.logged {
		if !c.s.aof.Covered(c.cc.LogOff) {
			runtime.Gosched()
		}
		if err := c.s.aof.Flush(c.cc.LogOff); err != nil {
			c.s.log.Error("append-only log write failed; dropping unacknowledged replies", "client", c.cc.Addr, "err", err)
			c.cc.W.Reset()
			return false
		}
		c.logged = c.cc.LogOff
	}
	c.accountOutput()
	err := c.writeReplies()
	c.accountOutput()
	return err == nil
}
