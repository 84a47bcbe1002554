package ribbon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// keyHashers are the hasher kinds the key path must agree with: XXH3
// (several seeds; the amd64 assembly hashes its 4-128 byte keys itself),
// XXH64 and SipHash (always the Go path).
var keyHashers = []hashing.Hasher{
	hashing.XXH3(0),
	hashing.XXH3(1),
	hashing.XXH3(0x9e3779b97f4a7c15),
	hashing.XXH3(1<<32 + 5),
	hashing.XXH64(7),
	hashing.SipHashKeys(0x0706050403020100, 0x0f0e0d0c0b0a0908),
}

// checkKeyPaths checks Contains and ContainsString against
// ContainsHash(Hasher().Sum64(key)) for perLen keys of every length 0-256,
// taken at random (unaligned) offsets of buf, and 20000 keys of 16-32
// bytes; members (built from) must all be reported present.
func checkKeyPaths(t *testing.T, name string, f *Filter, rng *rand.Rand, buf []byte, perLen int, members [][]byte) {
	t.Helper()
	h := f.Hasher()
	check := func(key []byte) {
		want := f.ContainsHash(h.Sum64(key))
		if got := f.Contains(key); got != want {
			t.Fatalf("%s: Contains(%d bytes %x) = %v, ContainsHash(Sum64) = %v", name, len(key), key, got, want)
		}
		if got := f.ContainsString(string(key)); got != want {
			t.Fatalf("%s: ContainsString(%d bytes %x) = %v, ContainsHash(Sum64) = %v", name, len(key), key, got, want)
		}
	}
	for n := 0; n <= 256; n++ {
		for range perLen {
			off := rng.IntN(len(buf) - n + 1)
			check(buf[off : off+n])
		}
	}
	for range 20000 {
		n := 16 + rng.IntN(17)
		off := rng.IntN(len(buf) - n + 1)
		check(buf[off : off+n])
	}
	for _, k := range members {
		if !f.Contains(k) || !f.ContainsString(string(k)) {
			t.Fatalf("%s: false negative on member %x", name, k)
		}
	}
}

// TestContainsKeyMatchesHash pins the key methods to the hash path for
// every hasher kind, key lengths 0-256 (so the XXH3 assembly of
// xxh3_amd64.h against hashing.XXH3 at every length it covers and the
// hand-over at 3/4 and 128/129 bytes), 8 columns or fewer (the assembly
// kernel) and more (FPR 1e-3: the generic query), small and larger
// filters, built with Build, BuildKeys, a reused Builder, and decoded with
// Decode and UnmarshalBinary.
func TestContainsKeyMatchesHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	buf := make([]byte, 1<<16)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	var b Builder
	for _, h := range keyHashers {
		for _, fpr := range []float64{0.01, 0.004, 1e-3} {
			for _, n := range []int{1000, 40000} {
				keys := make([][]byte, n)
				for i := range keys {
					l := 4 + rng.IntN(60)
					if i%10 == 0 {
						l = rng.IntN(200)
					}
					off := rng.IntN(len(buf) - l + 1)
					keys[i] = buf[off : off+l]
				}
				p := Params{FPR: fpr, Hasher: h}
				name := fmt.Sprintf("%v fpr %g n %d", h, fpr, n)
				f, err := BuildKeys(keys, p)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				checkKeyPaths(t, name+" BuildKeys", f, rng, buf, 8, keys)
				if n > 1000 {
					continue // the other constructors on the small filters
				}
				hashes := make([]uint64, n)
				for i, k := range keys {
					hashes[i] = h.Sum64(k)
				}
				g, err := Build(hashes, p)
				if err != nil {
					t.Fatalf("%s: Build: %v", name, err)
				}
				checkKeyPaths(t, name+" Build", g, rng, buf, 4, keys)
				g, err = b.BuildKeys(keys, p)
				if err != nil {
					t.Fatalf("%s: Builder.BuildKeys: %v", name, err)
				}
				checkKeyPaths(t, name+" Builder.BuildKeys", g, rng, buf, 4, keys)
				g, err = b.Build(hashes, p)
				if err != nil {
					t.Fatalf("%s: Builder.Build: %v", name, err)
				}
				checkKeyPaths(t, name+" Builder.Build", g, rng, buf, 4, keys)
				enc, err := f.MarshalBinary()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				d, err := Decode(enc, hashing.Want(h))
				if err != nil {
					t.Fatalf("%s: Decode: %v", name, err)
				}
				checkKeyPaths(t, name+" Decode", d, rng, buf, 4, keys)
				if h.Alg() == hashing.AlgSipHash {
					continue // keyed: only Decode with the key restores it
				}
				var u Filter
				if err := u.UnmarshalBinary(enc); err != nil {
					t.Fatalf("%s: UnmarshalBinary: %v", name, err)
				}
				checkKeyPaths(t, name+" UnmarshalBinary", &u, rng, buf, 4, keys)
			}
		}
	}
}

// TestContainsKeyAllocs: the key methods do not allocate, on the
// assembly path (16-byte keys) and the Go one (200-byte keys).
func TestContainsKeyAllocs(t *testing.T) {
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%012d", i))
	}
	f, err := BuildKeys(keys, Params{FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	long := string(make([]byte, 200))
	short := "key-000000000007"
	if a := testing.AllocsPerRun(100, func() {
		_ = f.ContainsString(short)
		_ = f.Contains(keys[3])
		_ = f.ContainsString(long)
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}
