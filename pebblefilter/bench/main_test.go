package main

import (
	"bytes"
	"testing"
)

// TestKeySetsDisjoint checks that every measured key set uses missing-key
// streams of its own, never the pilot's, within genKey's 6 stream bits,
// and that set 1 is the historical one (streams 1 and 2), so results
// with -keyset 1 stay comparable with earlier runs.
func TestKeySetsDisjoint(t *testing.T) {
	if k := keySet(1); k.missing != 1 || k.warm != 2 {
		t.Fatalf("key set 1 = %+v, want streams 1 and 2", k)
	}
	owner := map[uint64]int{pilotKeys.missing: 0, pilotKeys.warm: 0}
	salts := map[uint64]int{pilotKeys.presentSalt: 0}
	for k := 1; k <= 29; k++ {
		ks := keySet(k)
		for _, s := range []uint64{ks.missing, ks.warm} {
			if s >= 64 {
				t.Fatalf("key set %d: stream %d does not fit 6 bits", k, s)
			}
			if o, dup := owner[s]; dup {
				t.Fatalf("key set %d: stream %d already used by set %d (0 = pilot)", k, s, o)
			}
			owner[s] = k
		}
		if o, dup := salts[ks.presentSalt]; dup {
			t.Fatalf("key set %d: present-key salt equals set %d's", k, o)
		}
		salts[ks.presentSalt] = k
	}
	// Different streams give different keys for the same index.
	var a, b []byte
	for i := range uint64(1000) {
		a, b = genKey(a, keySet(2).missing, i), genKey(b, pilotKeys.missing, i)
		if bytes.Equal(a, b) {
			t.Fatalf("index %d: key set 2 and pilot give the same key", i)
		}
	}
}

func TestParseKeysets(t *testing.T) {
	for in, want := range map[string][]int{"1": {1}, "2,4": {2, 4}, "1-5": {1, 2, 3, 4, 5}, "1,6-7": {1, 6, 7}, "29": {29}} {
		got, err := parseKeysets(in)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v, %v; want %v", in, got, err, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range []string{"", "0", "30", "5-3", "1,1", "1-3,2", "x", "1-"} {
		if got, err := parseKeysets(in); err == nil {
			t.Errorf("%q accepted: %v", in, got)
		}
	}
}
