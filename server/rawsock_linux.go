//go:build linux

package server

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"github.com/bloomery/bloomery/server/internal/rawio"
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
// Only short transfers take the raw path: a read whose predecessor
// returned more than rawMax bytes, and a write of more than rawMax bytes,
// go through net.Conn. The gain of the raw path is at the sizes of
// single-item commands and of pipeline depth 1, where the Ps often go
// idle: every system call entered through the scheduler then also wakes
// the sleeping monitor thread, which resumes polling every 20 µs (its
// share of the server's CPU fell from about 10% to 7% at P=1). Large
// transfers happen when the server is busy (the monitor is awake anyway)
// and copy tens of kilobytes, long enough that handing the P to another
// thread meanwhile can pay: with 50 connections pipelining BF.MADD of 100
// items (30-60 KB reads), raw calls for every size gave lower throughput
// on the shared 2-core VM in most alternated runs (median 4.3M against
// 6.5M items/s over 5) at the same CPU per item. rawMax sits between the
// two: a pipeline of 32 single-item commands is about 1.5 KB, one BF.MADD
// of 100 items 1.9 KB.
//
// A rawSock is used by one goroutine at a time for reading and one for
// writing (the connection's own); its per-call state lives in the struct
// and the callbacks are made once, so a call does not allocate.
type rawSock struct {
	nc net.Conn
	rc syscall.RawConn
	// big: the last read returned more than rawMax bytes, so the next
	// one goes through nc.
	big bool

	rp   []byte
	rn   int
	rerr error
	rfn  func(fd uintptr) bool

	wp   []byte
	wn   int
	werr error
	wfn  func(fd uintptr) bool
}

// rawMax is the largest transfer that takes the raw path (see rawSock).
const rawMax = 4 << 10

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
	s := &rawSock{nc: nc, rc: rc}
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
		n, again, err := rawio.Write(fd, s.wp)
		s.wn += n
		s.wp = s.wp[n:]
		if again {
			return false
		}
		s.werr = err
		return true
	}
	return s
}

// Read reads once: it returns what one read system call returned, waiting
// on the poller first if nothing is there (through nc after a large read).
func (s *rawSock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.big {
		n, err := s.nc.Read(p)
		s.big = n > rawMax
		return n, err
	}
	s.rp, s.rn, s.rerr = p, 0, nil
	err := s.rc.Read(s.rfn)
	s.rp = nil
	if err != nil {
		return 0, err
	}
	s.big = s.rn > rawMax
	return s.rn, s.rerr
}

// Write writes all of p, waiting on the poller whenever the socket buffer
// is full (through nc when p is large).
func (s *rawSock) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > rawMax {
		return s.nc.Write(p)
	}
	s.wp, s.wn, s.werr = p, 0, nil
	err := s.rc.Write(s.wfn)
	s.wp = nil
	if err == nil {
		err = s.werr
	}
	return s.wn, err
}
