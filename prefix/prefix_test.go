package prefix

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// users and perUser give the full-size test 10^6 keys; the behavioural
// tests use smallUsers.
const users, perUser, smallUsers = 10_000, 100, 1_000

func userPrefix(u int) []byte { return fmt.Appendf(nil, "u%07d", u) } // 8 bytes
func rowKey(u, r int) []byte  { return fmt.Appendf(nil, "u%07d:row:%d", u, r) }

func build(t testing.TB, p Params) *Filter { return buildN(t, p, users) }

func buildN(t testing.TB, p Params, users int) *Filter {
	t.Helper()
	bf, err := bloom.New(bloom.Params{Capacity: users*perUser + users, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(bf, p)
	if err != nil {
		t.Fatal(err)
	}
	for u := range users {
		for r := range perUser {
			f.Add(rowKey(u, r))
		}
	}
	return f
}

func TestWholeKeyAndPrefix(t *testing.T) {
	f := build(t, Params{Extractor: Fixed(8)})
	// Len counts entries the filter took as new: keys plus distinct
	// prefixes, less the few adds that were false positives.
	if n := users*perUser + users; f.Len() > n || f.Len() < n*995/1000 {
		t.Fatalf("Len %d, want about %d entries (keys + distinct prefixes)", f.Len(), n)
	}
	for u := range users {
		if !f.ContainsPrefix(userPrefix(u)) || !f.MayContainPrefixOf(rowKey(u, 999)) {
			t.Fatalf("prefix of user %d missing", u)
		}
		for r := range perUser {
			if !f.Contains(rowKey(u, r)) {
				t.Fatalf("false negative for %s", rowKey(u, r))
			}
		}
	}
	design := f.Unwrap().(*bloom.Filter).EstimatedFPR()
	const probes = 1_000_000
	// Absent prefixes (users that do not exist) and absent whole keys.
	fpPrefix, fpKey, fpCross := 0, 0, 0
	for i := range probes {
		if f.ContainsPrefix(userPrefix(users + i)) {
			fpPrefix++
		}
		if f.Contains(rowKey(i%users, perUser+i)) {
			fpKey++
		}
	}
	// Domain separation: a whole-key query whose bytes equal an added
	// prefix is not answered by the prefix entry.
	for u := range users {
		if f.Contains(userPrefix(u)) {
			fpCross++
		}
	}
	filtertest.CheckFPR(t, "absent prefixes", float64(fpPrefix)/probes, design, 0.15, probes)
	filtertest.CheckFPR(t, "absent keys", float64(fpKey)/probes, design, 0.15, probes)
	if rate := float64(fpCross) / users; rate > 3*design {
		t.Errorf("whole-key queries for prefix bytes: %.2f%% claimed; entries are not separated", 100*rate)
	}
}

func TestPrefixOnly(t *testing.T) {
	const users = smallUsers
	f := buildN(t, Params{Extractor: Fixed(8), PrefixOnly: true}, users)
	if f.Len() > users || f.Len() < users-5 {
		t.Fatalf("Len %d, want about %d prefix entries", f.Len(), users)
	}
	if !f.Contains(rowKey(5, 12345)) {
		t.Fatal("PrefixOnly: a key of a present prefix must be a maybe")
	}
	if !f.Contains([]byte("short")) || !f.MayContainPrefixOf([]byte("short")) {
		t.Fatal("out-of-domain key did not bypass the prefix check")
	}
	if f.AddHash(1) || !f.ContainsHash(2) {
		t.Fatal("AddHash/ContainsHash on a PrefixOnly filter")
	}
	miss := 0
	for u := users; u < users+10000; u++ {
		if !f.Contains(rowKey(u, 0)) {
			miss++
		}
	}
	if miss < 9700 {
		t.Fatalf("only %d of 10000 keys of absent users rejected", miss)
	}
}

func TestSeekMayMatch(t *testing.T) {
	const users = smallUsers
	f := buildN(t, Params{Extractor: Fixed(8)}, users)
	absent := -1
	for u := users; ; u++ {
		if !f.ContainsPrefix(userPrefix(u)) {
			absent = u
			break
		}
	}
	lo := append(userPrefix(absent), ":row:0"...)
	succ := successor(userPrefix(absent))
	cases := []struct {
		name         string
		lower, upper []byte
		want         bool
	}{
		{"bounded to the absent prefix", lo, succ, false},
		{"bounded below the successor", lo, append(userPrefix(absent), ":row:9"...), false},
		{"runs past the prefix", lo, append(succ, 0), true},
		{"unbounded", lo, nil, true},
		{"lower out of domain", []byte("u01"), succ, true},
		{"present prefix", append(userPrefix(3), ":row:0"...), successor(userPrefix(3)), true},
	}
	for _, c := range cases {
		if got := f.SeekMayMatch(c.lower, c.upper); got != c.want {
			t.Errorf("%s: SeekMayMatch(%q, %q) = %v, want %v", c.name, c.lower, c.upper, got, c.want)
		}
	}
	// An extractor that is not prefix-closed never skips a range.
	g := buildN(t, Params{Extractor: notClosed{}}, users)
	if !g.SeekMayMatch(lo, succ) {
		t.Error("a non-prefix-closed extractor skipped a range")
	}
	if s := successor([]byte{0xff, 0xff}); s != nil {
		t.Errorf("successor(ffff) = %x", s)
	}
	if s := successor([]byte{1, 0xff}); string(s) != "\x02" {
		t.Errorf("successor(01ff) = %x", s)
	}
}

// notClosed is Fixed(8) without the PrefixClosed declaration.
type notClosed struct{}

func (notClosed) Name() string              { return "custom-8" }
func (notClosed) InDomain(k []byte) bool    { return len(k) >= 8 }
func (notClosed) Transform(k []byte) []byte { return k[:8] }

func TestDelimited(t *testing.T) {
	d := Delimited(':')
	if d.Name() != "delim:0x3a" || !d.InDomain([]byte("a:b")) || d.InDomain([]byte("ab")) || string(d.Transform([]byte("user42:cart:7"))) != "user42:" {
		t.Fatal("Delimited")
	}
	bf, _ := bloom.NewForCapacity(1000, 0.01)
	f, _ := New(bf, Params{Extractor: d})
	f.AddString("user42:cart:7")
	if !f.ContainsPrefix([]byte("user42:")) || !f.SeekMayMatch([]byte("user42:a"), []byte("user42;")) || !f.ContainsString("user42:cart:7") {
		t.Fatal("Delimited entries")
	}
}

func TestPersistAndOpen(t *testing.T) {
	const users = smallUsers
	f := buildN(t, Params{Extractor: Fixed(8)}, users)
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	desc := f.Descriptor().String()
	if desc != "extractor=fixed:8;whole_keys=1" {
		t.Fatalf("descriptor %q", desc)
	}
	d, err := ParseDescriptor(desc)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := bloom.Decode(data, hashing.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(inner, Fixed(4), d); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("Open with another extractor: %v", err)
	}
	g, err := Open(inner, Fixed(8), d)
	if err != nil {
		t.Fatal(err)
	}
	for u := range users {
		if !g.ContainsPrefix(userPrefix(u)) || !g.Contains(rowKey(u, u%perUser)) {
			t.Fatalf("user %d lost after persistence", u)
		}
	}
	for _, bad := range []string{"", "extractor=;whole_keys=1", "extractor=x;whole_keys=2", "whole_keys=1"} {
		if _, err := ParseDescriptor(bad); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Errorf("ParseDescriptor(%q): %v", bad, err)
		}
	}
	if _, err := New(inner, Params{}); !errors.Is(err, bloomery.ErrInvalidParams) {
		t.Error("New without extractor")
	}
}

func TestZeroAllocs(t *testing.T) {
	f := buildN(t, Params{Extractor: Fixed(8)}, smallUsers)
	k := rowKey(1, 2)
	filtertest.ZeroAllocs(t, "Add", func() { f.Add(k) })
	filtertest.ZeroAllocs(t, "AddString", func() { f.AddString("u0000001:row:77") })
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(k) })
	filtertest.ZeroAllocs(t, "SeekMayMatch", func() { f.SeekMayMatch(k, nil) })
}
