//go:build !linux

package persist

import "os"

// fileWriter writes log batches to one file with os.File.Write (the raw
// system call path is Linux-only, see write_linux.go).
type fileWriter struct{ f *os.File }

func newFileWriter(f *os.File) *fileWriter { return &fileWriter{f: f} }

// write writes all of p to the file.
func (w *fileWriter) write(p []byte) error {
	_, err := w.f.Write(p)
	return err
}
