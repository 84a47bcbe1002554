package resp

import (
	"strings"
	"testing"
)

// TestInlineUnauthenticatedLimits checks that an inline command gets the
// same pre-authentication limits as a RESP array: arguments of at most
// UnauthMaxBulk bytes and at most UnauthMaxArgs of them. An inline line
// may be up to MaxInline (64 KiB) long, so without the per-argument check
// an unauthenticated peer could send an argument four times the limit.
func TestInlineUnauthenticatedLimits(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		unauth     bool
		wantErr    bool
	}{
		{"long argument before auth", "AUTH " + strings.Repeat("x", UnauthMaxBulk+1) + "\r\n", true, true},
		{"quoted long argument before auth", "AUTH \"" + strings.Repeat("x", UnauthMaxBulk+1) + "\"\r\n", true, true},
		{"argument at the limit before auth", "AUTH " + strings.Repeat("x", UnauthMaxBulk) + "\r\n", true, false},
		{"too many arguments before auth", "AUTH" + strings.Repeat(" a", UnauthMaxArgs) + "\r\n", true, true},
		{"long argument after auth", "ECHO " + strings.Repeat("x", UnauthMaxBulk+1) + "\r\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.line), Limits{})
			r.SetUnauthenticated(tc.unauth)
			_, err := r.ReadCommand()
			if tc.wantErr {
				if !IsProtocolError(err) {
					t.Fatalf("ReadCommand = %v, want a protocol error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadCommand: %v", err)
			}
		})
	}
}

// TestInlineMaxBulk checks that the configured MaxBulk applies to inline
// arguments after authentication too.
func TestInlineMaxBulk(t *testing.T) {
	r := NewReader(strings.NewReader("ECHO "+strings.Repeat("x", 101)+"\r\n"), Limits{MaxBulk: 100})
	if _, err := r.ReadCommand(); !IsProtocolError(err) {
		t.Fatalf("ReadCommand = %v, want a protocol error", err)
	}
}
