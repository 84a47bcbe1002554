//go:build !unix

package persist

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockName is the lock file's name in the data directory.
const LockName = "LOCK"

// DirLock marks a data directory in use. Without flock (this platform),
// the lock is the file itself, created exclusively and removed by
// Release; a crashed server leaves it behind, and the operator removes it.
type DirLock struct{ path string }

// LockDir creates dir/LOCK exclusively; an existing one fails with an
// error naming the directory.
func LockDir(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = "pid " + strconv.Itoa(pid)
			}
		}
		return nil, fmt.Errorf("persist: data directory %s is in use by another server (%s holds %s), or one crashed (remove the file if none runs): %w", dir, holder, path, err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	return &DirLock{path: path}, nil
}

// Release removes the lock file.
func (l *DirLock) Release() error {
	if l == nil || l.path == "" {
		return nil
	}
	err := os.Remove(l.path)
	l.path = ""
	return err
}
