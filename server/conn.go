package server

import (
	"errors"
	"io"
	"net"
	"runtime"
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
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, since: time.Now()}
	var rw io.ReadWriter = nc
	if rs := newRawSock(nc); rs != nil {
		rw = rs
	}
	c.rd = resp.NewReader(rw, resp.Limits{MaxBulk: s.cfg.MaxBulk, MaxArgs: s.cfg.MaxArgs, MaxQuery: s.cfg.MaxQuery})
	c.cc = &command.Conn{ID: s.nextID.Add(1), Addr: nc.RemoteAddr().String(), W: resp.NewWriter(rw)}
	if s.cfg.Password != "" {
		c.rd.SetUnauthenticated(true)
		c.cc.OnAuth = func() { c.rd.SetUnauthenticated(false) }
	} else {
		c.cc.Authed = true
	}
	return c
}

// closeRead makes the connection's pending read fail so its loop exits
// after the command it is running (used by Shutdown).
func (c *conn) closeRead() {
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
	if err := c.cc.W.Flush(); err != nil {
		return false
	}
	return true
}
