package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNodeRedis runs compat/node/test.mjs: node-redis 6 with @redis/bloom on
// its default RESP3 (and on RESP2) against `bloomery serve`, comparing the
// typed BF/CF helpers' results with RedisBloom's reference values. It needs
// Node >= 20 and npm (`npm ci` runs when node_modules is missing); without
// node it fails unless BLOOMERY_SKIP_NODE=1.
func TestNodeRedis(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("BLOOMERY_SKIP_NODE") == "1" {
			t.Skip("node not installed and BLOOMERY_SKIP_NODE=1")
		}
		t.Fatal("node (>= 20) is not installed: install Node.js and npm (.ci/run does), or set BLOOMERY_SKIP_NODE=1 to skip the node-redis test")
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	ver := strings.TrimSpace(string(out))
	if major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(ver, ".", 2)[0], "v")); major < 20 {
		t.Fatalf("node %s: node-redis 6 needs Node >= 20", ver)
	}

	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "redis", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("node_modules is missing and npm is not installed (install npm, or run npm ci in compat/node)")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}

	bin := os.Getenv("BLOOMERY_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "bloomery")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/bloomery")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building bloomery: %v\n%s", err, out)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BLOOMERY_BIN="+bin)
	out, err = cmd.CombinedOutput()
	t.Logf("node test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node-redis compatibility test failed: %v", err)
	}
	// The node test runner's summary must show tests that ran and passed.
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatal("node test runner did not report passing tests")
	}
}
