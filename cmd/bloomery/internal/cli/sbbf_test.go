package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildSBBFParquetHash: without hashing flags an sbbf filter hashes
// with XXH64 seed 0, as the Parquet format requires, and finds its keys.
func TestBuildSBBFParquetHash(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, dir, "keys.txt", [][]byte{[]byte("hello"), []byte("world"), []byte("parquet")})
	out := filepath.Join(dir, "f.blmy")
	mustRun(t, "", "build", "--kind", "sbbf", "-o", out, keys)
	r := mustRun(t, "", "inspect", out)
	if !strings.Contains(r.stdout, "xxh64") {
		t.Fatalf("sbbf built without flags does not use XXH64:\n%s", r.stdout)
	}
	r = mustRun(t, "", "query", out, "hello", "world", "parquet")
	if strings.Count(r.stdout, "maybe\t") != 3 {
		t.Fatalf("keys missing:\n%s", r.stdout)
	}
	// With --seed the user asks for XXH3: consistent, just not Parquet's.
	mustRun(t, "", "build", "--kind", "sbbf", "--seed", "7", "-o", out, keys)
	r = mustRun(t, "", "query", out, "hello", "world", "parquet")
	if strings.Count(r.stdout, "maybe\t") != 3 {
		t.Fatalf("keys missing with --seed:\n%s", r.stdout)
	}
}
