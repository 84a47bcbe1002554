//go:build linux

package server

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawSock reads and writes a TCP connection's socket with raw system
// calls inside syscall.RawConn callbacks, instead of net.Conn's Read and
// Write.
//
// Why: net.Conn's Read and Write enter the system call through the Go
// scheduler (entersyscall/exitsyscall), which lets the runtime's monitor
// thread take the goroutine's P away when the call lasts more than about
// 20 µs and hand it to another thread. A write to a loopback or local
// socket runs the receiver's TCP processing inline and often lasts that
// long; with many connections there is always another goroutine ready, so
// the P is handed over and the writing thread must find a P again when the
// call returns: two thread switches, and the monitor kept waking every
// 20 µs, per reply. At pipeline depth 1 that was a fifth of the server's
// CPU time. The socket is non-blocking (the net package sets O_NONBLOCK),
// so its read and write never block: a raw system call that keeps the P
// for their few microseconds of kernel work is what "never block" allows.
// When the socket has nothing to read (or no room to write) the callback
// returns false and RawConn waits on the network poller exactly as
// net.Conn does, with the same deadline and close semantics.
//
// A rawSock is used by one goroutine at a time for reading and one for
// writing (the connection's own); its per-call state lives in the struct
// and the callbacks are made once, so a call does not allocate.
type rawSock struct {
	rc syscall.RawConn

	rp   []byte
	rn   int
	rerr error
	rfn  func(fd uintptr) bool

	wp   []byte
	wn   int
	werr error
	wfn  func(fd uintptr) bool
}

// newRawSock returns a rawSock for a TCP connection, or nil when nc is
// not one (the caller then uses nc itself).
func newRawSock(nc net.Conn) *rawSock {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSock{rc: rc}
	s.rfn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.rp[0])), uintptr(len(s.rp)))
			switch e {
			case 0:
				s.rn = int(n)
				if n == 0 {
					s.rerr = io.EOF
				}
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			default:
				s.rerr = e
				return true
			}
		}
	}
	s.wfn = func(fd uintptr) bool {
		for len(s.wp) > 0 {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.wp[0])), uintptr(len(s.wp)))
			switch e {
			case 0:
				s.wn += int(n)
				s.wp = s.wp[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				s.werr = e
				return true
			}
		}
		return true
	}
	return s
}

// Read reads once: it returns what one read system call returned, waiting
// on the poller first if nothing is there.
func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerr = p, 0, nil
	err := s.rc.Read(s.rfn)
	s.rp = nil
	if err != nil {
		return 0, err
	}
	return s.rn, s.rerr
}

// Write writes all of p, waiting on the poller whenever the socket buffer
// is full.
func (s *rawSock) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wp, s.wn, s.werr = p, 0, nil
	err := s.rc.Write(s.wfn)
	s.wp = nil
	if err == nil {
		err = s.werr
	}
	return s.wn, err
}
