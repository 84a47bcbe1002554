package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/redisfilter/internal/redisproc"
)

func startServer(t *testing.T) *redisproc.Server {
	t.Helper()
	if _, err := redisproc.Binary(); err != nil {
		if os.Getenv("BLOOMERY_SKIP_REDIS") == "1" {
			t.Skip("BLOOMERY_SKIP_REDIS=1:", err)
		}
		t.Fatalf("the tests need a real redis-server: %v (set BLOOMERY_SKIP_REDIS=1 to skip them)", err)
	}
	s, err := redisproc.Start(filepath.Join(t.TempDir(), "redis"), false, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestImportExportFiles imports container files (XXH3 and keyed SipHash)
// and exports them back: the files are byte-identical.
func TestImportExportFiles(t *testing.T) {
	s := startServer(t)
	url := "redis://" + s.Addr() + "/0"
	dir := t.TempDir()
	for _, h := range []hashing.Hasher{hashing.XXH3(77), hashing.SipHash([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})} {
		f, err := bloom.NewBlocked(bloom.Params{Capacity: 20000, FPR: 0.01, Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20000 {
			f.AddString("k" + string(rune(i)))
		}
		want, _ := f.MarshalBinary()
		in := filepath.Join(dir, h.Alg().String()+".blmy")
		out := filepath.Join(dir, h.Alg().String()+".out.blmy")
		if err := os.WriteFile(in, want, 0o644); err != nil {
			t.Fatal(err)
		}
		name := "cli-" + h.Alg().String()
		if code, stdout, stderr := runCLI("import", url, name, in); code != exitOK || !strings.Contains(stdout, "imported") {
			t.Fatalf("import: %d %q %q", code, stdout, stderr)
		}
		if code, _, stderr := runCLI("import", url, name, in); code != exitFailure || !strings.Contains(stderr, "exists") {
			t.Fatalf("second import: %d %q", code, stderr)
		}
		if code, _, stderr := runCLI("import", "-replace", "-segment-bytes", "4096", url, name, in); code != exitOK {
			t.Fatalf("import -replace: %d %q", code, stderr)
		}
		if code, stdout, stderr := runCLI("export", url, name, out); code != exitOK || !strings.Contains(stdout, "exported") {
			t.Fatalf("export: %d %q %q", code, stdout, stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: exported file differs from the imported one", h.Alg())
		}
	}
	if code, _, stderr := runCLI("export", url, "missing", filepath.Join(dir, "x")); code != exitFailure || !strings.Contains(stderr, "not found") {
		t.Fatalf("export of a missing filter: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Fatal("a failed export left a file")
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"import", "redis://x"}, {"export", "-bogus", "a", "b", "c"}, {"import", "::bad", "n", "f"}} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, stderr := runCLI("import", "redis://127.0.0.1:1/0", "n", "/nonexistent/file"); code != exitFailure || !strings.Contains(stderr, "nonexistent") {
		t.Errorf("missing file: %d %q", code, stderr)
	}
}
