//go:build unix

package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockName is the lock file's name in the data directory.
const LockName = "LOCK"

// DirLock is an exclusive lock on a data directory, held until Release
// (or the process's exit: the kernel drops it, so a kill -9 leaves no
// stale lock).
type DirLock struct{ f *os.File }

// LockDir takes the data directory's lock: flock(LOCK_EX|LOCK_NB) on
// dir/LOCK, which then holds the holder's pid. A directory locked by
// another process (or another open in this one) fails at once with an
// error naming the directory and, when the file tells, the holder's pid.
func LockDir(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("persist: lock data directory: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := "another process"
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
			holder = "pid " + strconv.Itoa(pid)
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("persist: data directory %s is in use by another server (%s holds %s); two servers on one directory would destroy each other's log", dir, holder, path)
		}
		return nil, fmt.Errorf("persist: lock data directory %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Release drops the lock. The file stays (removing it would race with a
// server taking the lock).
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
