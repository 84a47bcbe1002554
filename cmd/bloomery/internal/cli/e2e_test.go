package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// TestBinaryEndToEnd builds the real bloomery binary and runs it once
// through build, query and inspect, checking exit codes and streams as a
// script would see them.
func TestBinaryEndToEnd(t *testing.T) {
	if filtertest.Emulated() {
		t.Skip("under a user-mode emulator: cannot exec a binary of the emulated architecture")
	}
	requireKinds(t, bloomery.KindBloom)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bloomery")
	build := exec.Command(goBin, "build", "-o", bin, "github.com/bloomery/bloomery/cmd/bloomery")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runBin := func(stdin string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}

	keys := filepath.Join(dir, "keys.txt")
	os.WriteFile(keys, []byte("alpha\nbeta\ngamma\n"), 0o644)
	filter := filepath.Join(dir, "f.blmy")
	if _, stderr, code := runBin("", "build", "--kind", "bloom", "-p", "0.001", "-o", filter, keys); code != 0 || !strings.Contains(stderr, "3 distinct keys") {
		t.Fatalf("build: exit %d, stderr %q", code, stderr)
	}
	if stdout, _, code := runBin("alpha\nbeta\ngamma\n", "query", "--count", filter); code != 0 || stdout != "maybe=3 no=0\n" {
		t.Errorf("query: exit %d, stdout %q", code, stdout)
	}
	if stdout, _, code := runBin("", "inspect", filter); code != 0 || !strings.Contains(stdout, "bloom (1)") {
		t.Errorf("inspect: exit %d, stdout %q", code, stdout)
	}
	if _, stderr, code := runBin("", "nosuchcommand"); code != 2 || !strings.Contains(stderr, "usage:") {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
}
