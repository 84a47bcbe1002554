package guard

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// The attack of docs/security.md: a service guards its store with a Bloom
// filter of n secret keys (the attacker never sees them). The filter's
// bytes leak (a published filter file, a BF.SCANDUMP, a client-side copy):
// they record the hash algorithm and seed in the clear. With a public hash
// the attacker searches offline for keys that the leaked bits claim, and
// every one of them is a false positive of the live service: each lookup
// costs a store load. With keyed SipHash the file holds only a fingerprint
// of the key; the attacker cannot compute bit positions, and the keys its
// best search produces are false positives at the design rate.

const (
	victimKeys  = 20_000
	victimFPR   = 0.01
	attackKeys  = 10_000
	searchLimit = 5_000_000
)

var secretKey = [16]byte{0x9c, 0x1f, 0x3a, 0x55, 0x0b, 0xe2, 0x77, 0x41, 0xd8, 0x6e, 0x12, 0xa0, 0x3c, 0xf5, 0x88, 0x2d}

func victim(t *testing.T, h hashing.Hasher) (*Guard[int], *store, []byte) {
	t.Helper()
	f, err := bloom.New(bloom.Params{Capacity: victimKeys, FPR: victimFPR, Hasher: h})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New[int](f, Options{NegativeCacheSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s := newStore()
	for i, k := range filtertest.Keys(victimKeys, 77) { // the secret contents
		s.put(string(k), i)
		g.Add(k)
	}
	leaked, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return g, s, leaked
}

// craft is the attacker: from the leaked bytes alone it derives the hash it
// can compute (the recorded one if unkeyed; for a keyed filter, the public
// default, its best guess) and searches for keys the leaked bits claim.
func craft(t *testing.T, leaked []byte) (keys [][]byte, tried int) {
	t.Helper()
	copyOf, err := bloom.Decode(leaked, hashing.Expect{Keyless: true})
	if err != nil {
		t.Fatal(err)
	}
	h := copyOf.Hasher()
	if h.Keyed() {
		h = hashing.XXH3(0) // the key is not in the file
	}
	for i := 0; len(keys) < attackKeys && i < searchLimit; i++ {
		k := fmt.Appendf(nil, "attacker-%d", i)
		if copyOf.ContainsHash(h.Sum64(k)) {
			keys = append(keys, k)
		}
		tried = i + 1
	}
	if len(keys) < attackKeys {
		t.Fatalf("search found only %d keys in %d tries", len(keys), tried)
	}
	return keys, tried
}

func attack(g *Guard[int], s *store, keys [][]byte) (fpr float64) {
	ctx := context.Background()
	before := s.loads.Load()
	for _, k := range keys {
		g.Lookup(ctx, k, s.load)
	}
	return float64(s.loads.Load()-before) / float64(len(keys))
}

func TestHostileKeysPublicHash(t *testing.T) {
	g, s, leaked := victim(t, hashing.Hasher{}) // XXH3 seed 0, the default
	keys, tried := craft(t, leaked)
	got := attack(g, s, keys)
	t.Logf("public hash: %d crafted keys from %d tries; %.1f%% of their lookups reach the store", len(keys), tried, 100*got)
	if got < 0.99 {
		t.Fatalf("crafted keys cost %.1f%% loads, the attack should reach ~100%%", 100*got)
	}
	// A second round: the negative cache (1000 keys) holds a tenth of the
	// crafted set, so cycling through them defeats it.
	again := attack(g, s, keys)
	t.Logf("second round through a 1000-key negative cache: %.1f%% reach the store", 100*again)
	if again < 0.85 {
		t.Fatalf("second round %.1f%%: a 1000-key negative cache should not absorb 10000 crafted keys", 100*again)
	}
}

func TestHostileKeysSipHash(t *testing.T) {
	g, s, leaked := victim(t, hashing.SipHash(secretKey))
	keys, tried := craft(t, leaked)
	got := attack(g, s, keys)
	design := g.Report().EstimatedFPR
	// 10^4 keys: 5 binomial sigmas around the design rate.
	tol := 5 * math.Sqrt(design*(1-design)/attackKeys)
	t.Logf("keyed SipHash: %d keys from %d tries; %.2f%% reach the store (design %.2f%% ± %.2f%%)", len(keys), tried, 100*got, 100*design, 100*tol)
	if math.Abs(got-design) > tol {
		t.Fatalf("with a secret key the crafted keys cost %.2f%% loads, want the design %.2f%% ± %.2f%%", 100*got, 100*design, 100*tol)
	}
}
