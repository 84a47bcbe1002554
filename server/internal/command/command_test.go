package command

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		ok   bool
	}{
		{"hello", "h?llo", true}, {"hallo", "h[ae]llo", true}, {"hillo", "h[ae]llo", false},
		{"hbllo", "h[^e]llo", true}, {"hello", "h[a-f]llo", true}, {"hello", "h*", true},
		{"hello", "*lo", true}, {"hello", "*x*", false}, {"h*llo", `h\*llo`, true}, {"hello", `h\*llo`, false},
		{"", "*", true}, {"a", "", false}, {"abc", "a**c", true},
	} {
		if got := globMatch(tc.s, tc.p); got != tc.ok {
			t.Errorf("globMatch(%q, %q) = %v", tc.s, tc.p, got)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	got := unknownCommand([][]byte{[]byte("FOO"), []byte("a"), []byte("b")})
	if want := "ERR unknown command 'FOO', with args beginning with: 'a' 'b' "; got != want {
		t.Fatalf("%q", got)
	}
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'x'
	}
	if got := unknownCommand([][]byte{long, long, long, long}); len(got) > 600 {
		t.Fatalf("unbounded message: %d bytes", len(got))
	}
}
