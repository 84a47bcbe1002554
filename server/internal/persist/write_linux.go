//go:build linux

package persist

import (
	"os"
	"syscall"

	"github.com/bloomery/bloomery/server/internal/rawio"
)

// rawWriteMax is the largest log write that takes the raw path.
const rawWriteMax = 64 << 10

// fileWriter writes log batches to one file. Batches of up to rawWriteMax
// bytes are written with raw write system calls inside the file's
// syscall.RawConn callback instead of os.File.Write.
//
// Why: os.File.Write enters the system call through the Go scheduler
// (entersyscall/exitsyscall). A batch of a few tens of kilobytes copied
// into the page cache lasts long enough (10-30 µs) for the runtime's
// monitor thread to take the P away and start another thread for it;
// the writing thread must then find a P again when the call returns, and
// the monitor, having found work, keeps polling every 20 µs instead of
// backing off. At pipeline depth 1 the log is written a few thousand
// times a second (one write covers the commands of every connection that
// ran meanwhile, see Log.Flush), enough to keep the monitor awake. A raw
// call keeps the P for the copy. The bytes reach the OS exactly as with
// os.File.Write, before Flush returns: durability is unchanged (a
// process kill loses nothing written). Larger batches, and every fsync,
// still go through the scheduler: they happen when the server is busy or
// may wait for the disk, and then handing the P to another thread pays.
//
// A fileWriter is used by one goroutine at a time (Log.ioMu); its state
// lives in the struct and the callback is made once, so a write does not
// allocate.
type fileWriter struct {
	f   *os.File
	rc  syscall.RawConn // nil when the file offers none
	p   []byte
	err error
	fn  func(fd uintptr) bool
}

func newFileWriter(f *os.File) *fileWriter {
	w := &fileWriter{f: f}
	rc, err := f.SyscallConn()
	if err != nil {
		return w
	}
	w.rc = rc
	w.fn = func(fd uintptr) bool {
		// A regular file never reports EAGAIN; were it to, the loop
		// would be retried by RawConn after a poll, as for a socket.
		n, again, err := rawio.Write(fd, w.p)
		w.p = w.p[n:]
		if again {
			return false
		}
		w.err = err
		return true
	}
	return w
}

// write writes all of p to the file.
func (w *fileWriter) write(p []byte) error {
	if w.rc == nil || len(p) > rawWriteMax {
		_, err := w.f.Write(p)
		return err
	}
	w.p, w.err = p, nil
	err := w.rc.Write(w.fn)
	w.p = nil
	if err == nil {
		err = w.err
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: w.f.Name(), Err: err}
	}
	return nil
}
