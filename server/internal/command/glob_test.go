package command

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// redisGlobRef is a direct transcription of the semantics of Redis'
// stringmatchlen (util.c) as a backtracking recursion: exponential on
// patterns with many stars, used here only as the reference on short
// inputs. One difference from stringmatchlen is kept on purpose: a
// pattern of stars matches the empty key (Redis reaches the same answer
// for KEYS * and SCAN MATCH *, which skip matching).
func redisGlobRef(p, s string) bool {
	if len(s) == 0 {
		for len(p) > 0 && p[0] == '*' {
			p = p[1:]
		}
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if redisGlobRef(p[1:], s) {
					return true
				}
				s = s[1:]
			}
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if len(p) > 0 && p[0] == ']' {
					break
				} else if len(p) == 0 {
					p = " " // the outer step below consumes it
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
					p = p[2:]
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// TestGlobRedisCases checks the matcher on the cases of Redis' glob
// syntax: stars, ?, classes with negation, ranges (either order) and
// escapes, an unterminated class, and escapes outside classes.
func TestGlobRedisCases(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"", "", true},
		{"", "a", false},
		{"a", "", false},
		{"*a", "", false},
		{"a*", "a", true},
		{"a**", "a", true},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h*llo", "hllo", true},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, // reversed range
		{"h[a-b]llo", "hcllo", false},
		{"[\\]]", "]", true},
		{"[\\-]", "-", true},
		{"[a\\-z]", "b", false},
		{"[]", "a", false},   // empty class
		{"[^]", "a", true},   // negated empty class
		{"[abc", "b", true},  // unterminated class: the rest is the class
		{"[abc", "d", false}, //
		{"[", "a", false},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"\\?", "?", true},
		{"a\\", "a\\", true}, // a trailing backslash is literal
		{"*.txt", "notes.txt", true},
		{"*.txt", "notes.txt.bak", false},
		{"user:*:mail", "user:42:mail", true},
		{"user:*:mail", "user:42:name", false},
		{"*a*b*c*", "xaxbxcx", true},
		{"*a*b*c*", "xaxcxbx", false},
		{"a*b", "ab", true},
		{"a*b", "abb", true},
		{"a*b", "aba", false},
		{"[a-]", "]", true}, // Redis reads "a-]" as the range a..]
		{"max*", "maxmemory", true},
		{"max*", "appendfsync", false},
	} {
		if got := globMatch(c.s, c.pat); got != c.want {
			t.Errorf("globMatch(%q, pattern %q) = %v, want %v", c.s, c.pat, got, c.want)
		}
		if ref := redisGlobRef(c.pat, c.s); ref != c.want {
			t.Errorf("reference(%q, pattern %q) = %v, want %v (table error)", c.s, c.pat, ref, c.want)
		}
	}
}

// TestGlobMatchesReference compares the matcher with the backtracking
// reference on random short patterns and keys over a small alphabet, where
// the reference is still fast.
func TestGlobMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const patAlpha = "ab*?[]^-\\"
	const keyAlpha = "ab-]^\\"
	for i := 0; i < 200000; i++ {
		p := make([]byte, r.IntN(8))
		for j := range p {
			p[j] = patAlpha[r.IntN(len(patAlpha))]
		}
		s := make([]byte, r.IntN(8))
		for j := range s {
			s[j] = keyAlpha[r.IntN(len(keyAlpha))]
		}
		if got, want := globMatch(string(s), string(p)), redisGlobRef(string(p), string(s)); got != want {
			t.Fatalf("globMatch(%q, pattern %q) = %v, reference says %v", s, p, got, want)
		}
	}
}

// TestGlobPathologicalBounded runs patterns that make a backtracking
// matcher take exponential time (each star doubles it) and checks that the
// matcher's work stays within len(pattern)*len(key) steps.
func TestGlobPathologicalBounded(t *testing.T) {
	key := strings.Repeat("a", 30)
	for _, stars := range []int{1, 5, 11, 20, 40} {
		pat := strings.Repeat("a*", stars) + "b"
		ok, steps := globMatchSteps(key, pat)
		if ok {
			t.Fatalf("%q matched %q", pat, key)
		}
		budget := (len(pat) + 1) * (len(key) + 1)
		if steps > budget {
			t.Errorf("stars=%d: %d steps, budget %d", stars, steps, budget)
		}
	}
	long := strings.Repeat("ab", 50000)
	pat := strings.Repeat("*a", 1000) + "*c"
	ok, steps := globMatchSteps(long, pat)
	if ok || steps > (len(pat)+1)*(len(long)+1) {
		t.Errorf("long key: ok=%v steps=%d", ok, steps)
	}
}
