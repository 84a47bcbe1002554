//go:build unix

package server

import (
	"errors"
	"syscall"
)

// raiseFDLimit sets the soft RLIMIT_NOFILE to the hard limit and returns
// the limit in force and the soft limit before. (The Go runtime already
// does this at start on most Unix systems; doing it here makes it
// explicit and reports the result.) A limit too large to matter is
// reported as 0.
func raiseFDLimit() (limit, from uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	from = uint64(lim.Cur)
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
			lim = want
		}
	}
	limit = uint64(lim.Cur)
	if limit >= 1<<40 { // RLIM_INFINITY
		limit = 0
	}
	return limit, from, err
}

// temporaryAcceptErr reports whether accept's error is a resource
// shortage that passes (file descriptors, buffers, memory).
func temporaryAcceptErr(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
