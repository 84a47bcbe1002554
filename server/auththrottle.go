package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Failed-authentication throttling. Every wrong password (AUTH or HELLO
// AUTH) takes a token from one bucket shared by all connections, and the
// connection that sent it is held, its WRONGPASS reply not yet sent and
// its next command not yet read, for authFailDelay or until its token is
// due if that is later (at most authWaitMax). A connection that has
// failed authFailMax times, or whose token is due more than authWaitMax
// away, is closed after its hold. A correct password takes no token and
// is never held.
//
// Bounds: one connection learns at most 1/authFailDelay answers a second
// (pipelining does not help: the hold delays every later command of the
// connection), and all connections together about authFailRate a second
// plus the burst, plus one per connection per authWaitMax while the
// bucket is overdrawn (so with --maxclients C, at most about
// authFailRate + C/10 a second). The hold is a timer wait on the
// connection's own goroutine, outside every lock, on the failure path
// only, ended early by Shutdown.
const (
	authFailDelay = 100 * time.Millisecond
	authFailMax   = 10
	authFailRate  = 100 // tokens (failures) per second, all connections
	authFailBurst = 100
	authWaitMax   = 10 * time.Second
	// authLogEvery rate-limits the log line reporting failures.
	authLogEvery = 10 * time.Second
)

// authThrottle is the shared token bucket of failed authentications and
// the rate-limited log of them. Safe for concurrent use.
type authThrottle struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time // when tokens was computed
	fails   uint64    // since the last log line
	lastLog time.Time
	total   atomic.Uint64 // every failure, for /metrics
}

// fail records one failure at now and returns how long the failing
// connection must wait for its token (0 when the bucket has one) and, when
// a log line is due, the failures to report in it (0 otherwise).
func (a *authThrottle) fail(now time.Time) (wait time.Duration, report uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last.IsZero() {
		a.tokens = authFailBurst
	} else {
		a.tokens = min(authFailBurst, a.tokens+now.Sub(a.last).Seconds()*authFailRate)
	}
	a.last = now
	// The token is taken even when it is not there yet (the bucket goes
	// negative): later failures wait behind it, as a reservation would.
	a.tokens--
	if a.tokens < 0 {
		wait = time.Duration(-a.tokens / authFailRate * float64(time.Second))
	}
	a.fails++
	a.total.Add(1)
	if now.Sub(a.lastLog) >= authLogEvery {
		report, a.fails, a.lastLog = a.fails, 0, now
	}
	return wait, report
}

// authFailed is the connection's command.Conn.OnAuthFail: it sets the
// hold the connection waits out before sending the reply (holdAuth) and,
// after too many failures or when the shared bucket is drained beyond
// authWaitMax, asks the connection to close.
func (c *conn) authFailed() {
	c.authFails++
	wait, report := c.s.auth.fail(time.Now())
	if report > 0 {
		c.s.log.Warn("failed authentication attempts", "count", report, "last_client", c.cc.Addr,
			"since", authLogEvery.String()+" or start")
	}
	d := max(authFailDelay, min(wait, authWaitMax))
	if c.authFails >= authFailMax || wait > authWaitMax {
		c.cc.Close = true
	}
	c.authWait = d
}

// holdAuth waits out the hold authFailed set, then sends the replies
// (unless the connection is closing, which flushes them itself). It
// reports whether the connection may go on.
func (c *conn) holdAuth() bool {
	t := time.NewTimer(c.authWait)
	c.authWait = 0
	select {
	case <-t.C:
	case <-c.quit:
		t.Stop()
	}
	return c.cc.Close || c.flush()
}
