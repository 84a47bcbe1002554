package server

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// reservedFDs is the number of file descriptors kept for the server's own
// files (log, snapshot, directory, metrics) when MaxClients is fitted to
// the open-file limit, as Redis's CONFIG_MIN_RESERVED_FDS.
const reservedFDs = 32

// fitMaxClients raises the soft open-file limit to the hard limit (see
// raiseFDLimit) and returns maxClients, reduced if needed so that the
// clients and reservedFDs fit in the limit (at least 1). Both changes are
// logged.
func fitMaxClients(maxClients int, log *slog.Logger) int {
	lim, from, err := raiseFDLimit()
	if err != nil {
		log.Warn("could not raise the open-file limit", "err", err, "limit", lim)
	} else if from != lim {
		log.Info("raised the open-file limit (RLIMIT_NOFILE) to its hard limit", "from", from, "to", lim)
	}
	if lim == 0 || uint64(maxClients)+reservedFDs <= lim {
		return maxClients
	}
	n := max(1, int(min(lim, 1<<31))-reservedFDs)
	log.Warn("maxclients reduced to fit the open-file limit", "requested", maxClients, "maxclients", n,
		"open_file_limit", lim, "reserved_fds", reservedFDs)
	return n
}

// Accept retry delays: a temporary accept error (too many open files,
// no buffers) is retried after a delay doubling from acceptDelayMin to
// acceptDelayMax, as net/http's Server does, and reset by a successful
// accept.
const (
	acceptDelayMin = 5 * time.Millisecond
	acceptDelayMax = time.Second
	acceptLogEvery = 10 * time.Second
)

// acceptRetry reports whether Serve should retry after err and, if so,
// sleeps first. delay is the listener's current backoff. Failures are
// logged at most once per acceptLogEvery, with how many there were.
func (s *Server) acceptRetry(err error, delay *time.Duration) bool {
	var ne net.Error
	if !(errors.As(err, &ne) && ne.Timeout()) && !temporaryAcceptErr(err) {
		return false
	}
	if *delay == 0 {
		*delay = acceptDelayMin
	} else {
		*delay = min(2**delay, acceptDelayMax)
	}
	if n, ok := s.acceptLog.due(time.Now(), acceptLogEvery); ok {
		s.log.Error("accept failed; retrying (raise the open-file limit or lower --maxclients if this is EMFILE)",
			"err", err, "failures", n, "retry_in", *delay)
	}
	time.Sleep(*delay)
	return true
}

// logLimiter rate-limits one kind of log line. Safe for concurrent use.
type logLimiter struct {
	mu   sync.Mutex
	last time.Time
	n    uint64
}

// due counts one event at now and reports whether a line is due (at most
// one per every), with the events since the last line.
func (l *logLimiter) due(now time.Time, every time.Duration) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if !l.last.IsZero() && now.Sub(l.last) < every {
		return 0, false
	}
	n := l.n
	l.n, l.last = 0, now
	return n, true
}
