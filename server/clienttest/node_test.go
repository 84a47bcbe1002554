package clienttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomery/bloomery/server"
)

// TestNodeRedis runs node-redis 6 with @redis/bloom (node/bloom.mjs) on its
// default RESP3 and on RESP2. It needs node >= 20 and the packages in
// node/node_modules (`npm ci` in server/clienttest/node, tried here once);
// without them it skips.
func TestNodeRedis(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	if _, err := os.Stat(filepath.Join("node", "node_modules", "@redis", "bloom")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm not installed")
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = "node"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm ci failed (no registry access?): %v\n%s", err, out)
		}
	}
	addr := start(t, server.Config{})
	_, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command(node, "node/bloom.mjs", port).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("node-redis: %v\n%s", err, out)
	}
}
