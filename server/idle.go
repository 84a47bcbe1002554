package server

import (
	"io"
	"sync/atomic"
	"time"
)

// Idle and handshake timeouts (Config.IdleTimeout, Config.AuthTimeout).
//
// One sweeper goroutine per server enforces both; connections pay no
// timer, deadline or system call per command. A connection's reads go
// through an activityReader, which stores the server's coarse clock (a
// value the sweeper updates each tick) in the connection while a Read is
// in progress and zero when it returns: two atomic stores and one atomic
// load per read system call, none per command of a pipeline. The
// sweeper, every tick (a quarter of the shortest timeout, within
// [10 ms, 1 s]), expires a connection that has been waiting in Read for
// IdleTimeout, or that has not authenticated AuthTimeout after it was
// accepted, by setting its deadlines in the past: its pending read or
// write fails and its goroutine closes it. A connection busy running a
// command or writing replies is not idle. Timeouts are therefore late by
// up to one tick.
//
// The alternative, a read deadline set before each read that may block,
// costs a runtime timer update per read and, on the raw socket path
// (rawsock_linux.go), cannot be placed between the attempt that finds
// the socket empty and the wait on the poller.

// activityReader is the connection's read side with idle tracking.
type activityReader struct {
	src   io.Reader
	clock *atomic.Int64 // the server's coarse clock, ns since start, plus 1
	wait  *atomic.Int64 // the connection's waitSince
}

func (a *activityReader) Read(p []byte) (int, error) {
	a.wait.Store(a.clock.Load())
	n, err := a.src.Read(p)
	a.wait.Store(0)
	return n, err
}

// timeouts reports whether the sweeper has anything to enforce.
func (s *Server) timeouts() bool {
	return s.cfg.IdleTimeout > 0 || (s.cfg.Password != "" && s.cfg.AuthTimeout > 0)
}

// tickClock advances the coarse clock; it never stores 0 (0 means "not
// reading" in a connection's waitSince).
func (s *Server) tickClock() int64 {
	now := int64(time.Since(s.started)) + 1
	s.clock.Store(now)
	return now
}

// sweep runs until the server is done, expiring idle and unauthenticated
// connections (see the comment at the top of this file).
func (s *Server) sweep() {
	tick := time.Second
	for _, d := range []time.Duration{s.cfg.IdleTimeout, s.cfg.AuthTimeout} {
		if d > 0 {
			tick = min(tick, d/4)
		}
	}
	tick = max(tick, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	auth := s.cfg.Password != "" && s.cfg.AuthTimeout > 0
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		now := s.tickClock()
		wall := time.Now()
		var idle, unauth int
		s.mu.Lock()
		for c := range s.conns {
			if c.expired {
				continue
			}
			if w := c.waitSince.Load(); s.cfg.IdleTimeout > 0 && w != 0 && time.Duration(now-w) >= s.cfg.IdleTimeout {
				idle++
			} else if auth && !c.authed.Load() && wall.Sub(c.since) >= s.cfg.AuthTimeout {
				unauth++
			} else {
				continue
			}
			c.expired = true
			c.nc.SetDeadline(time.Unix(1, 0))
		}
		s.mu.Unlock()
		if idle+unauth > 0 {
			s.timedOut.Add(uint64(idle + unauth))
			s.log.Debug("closed timed-out connections", "idle", idle, "unauthenticated", unauth)
		}
	}
}
