package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFileWriter writes batches below, at and above rawWriteMax (the raw
// and the os.File paths) and checks the file holds them in order.
func TestFileWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := newFileWriter(f)
	var want []byte
	for i, n := range []int{1, 100, rawWriteMax - 1, rawWriteMax, rawWriteMax + 1, 3 * rawWriteMax, 7} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		if err := w.write(p); err != nil {
			t.Fatalf("write of %d bytes: %v", n, err)
		}
		want = append(want, p...)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes, want %d (or different content)", len(got), len(want))
	}
	// A write to a closed file fails with an error, not a panic.
	if err := w.write([]byte("x")); err == nil {
		t.Fatal("write to a closed file succeeded")
	}
}
