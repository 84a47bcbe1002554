//go:build linux

// Package rawio writes to a file descriptor with raw write system calls,
// for use inside a syscall.RawConn callback: the call does not go through
// the Go scheduler (no entersyscall), so the goroutine keeps its P for
// the few microseconds of kernel work. The server's sockets and its
// append-only log use it for short writes; their callers explain why.
package rawio

import (
	"syscall"
	"unsafe"
)

// Write writes p to fd until all of it is written, the descriptor would
// block, or a call fails; EINTR is retried. It returns the bytes written
// and again = true when fd is non-blocking and has no room (the caller
// waits for writability and calls again with the rest). A call that
// writes nothing without an error is reported as EIO, so the loop always
// ends.
func Write(fd uintptr, p []byte) (n int, again bool, err error) {
	for n < len(p) {
		w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
		switch e {
		case 0:
			if w == 0 {
				return n, false, syscall.EIO
			}
			n += int(w)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return n, true, nil
		default:
			return n, false, e
		}
	}
	return n, false, nil
}
