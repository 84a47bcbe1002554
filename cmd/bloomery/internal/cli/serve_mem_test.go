package cli

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseOutputLimit(t *testing.T) {
	for _, tc := range []struct {
		in         string
		hard, soft int64
		d          time.Duration
		ok         bool
	}{
		{"0 8mb 10", 0, 8 << 20, 10 * time.Second, true},
		{"256mb 64mb 60", 256 << 20, 64 << 20, time.Minute, true},
		{"0 0 0", 0, -1, 0, true},
		{"1mb 1mb 0", 0, 0, 0, false},
		{"1mb 1mb", 0, 0, 0, false},
		{"x 1mb 1", 0, 0, 0, false},
	} {
		h, s, d, err := parseOutputLimit(tc.in)
		if (err == nil) != tc.ok || tc.ok && (h != tc.hard || s != tc.soft || d != tc.d) {
			t.Errorf("parseOutputLimit(%q) = %d %d %v %v", tc.in, h, s, d, err)
		}
	}
	var stderr strings.Builder
	if code := Run([]string{"serve", "--client-output-buffer-limit", "1 2"}, strings.NewReader(""), io.Discard, &stderr); code != ExitUsage {
		t.Fatalf("bad --client-output-buffer-limit: exit %d\n%s", code, stderr.String())
	}
	stderr.Reset()
	if code := Run([]string{"serve", "--max-query-buffer", "lots"}, strings.NewReader(""), io.Discard, &stderr); code != ExitUsage {
		t.Fatalf("bad --max-query-buffer: exit %d\n%s", code, stderr.String())
	}
}
