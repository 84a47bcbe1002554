package xxh3key

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// sum64 is seeded XXH3-64 of 4 to 16 bytes computed from a Key alone, as
// the assembly key paths compute it: the 4-8 byte path keyed by Flip8,
// the 9-16 byte path keyed by Lo16 and Hi16.
func sum64(w *Key, b []byte) uint64 {
	n := uint64(len(b))
	le32 := func(i int) uint64 { return uint64(binary.LittleEndian.Uint32(b[i:])) }
	le64 := func(i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }
	if n <= 8 {
		x := (le32(len(b)-4) + le32(0)<<32) ^ w.Flip8
		x ^= bits.RotateLeft64(x, 49) ^ bits.RotateLeft64(x, 24)
		x *= 0x9fb21c651e98df25
		x ^= x>>35 + n
		x *= 0x9fb21c651e98df25
		return x ^ x>>28
	}
	lo := le64(0) ^ w.Lo16
	hi := le64(len(b)-8) ^ w.Hi16
	mh, ml := bits.Mul64(lo, hi)
	acc := n + bits.ReverseBytes64(lo) + hi + (mh ^ ml)
	acc ^= acc >> 37
	acc *= 0x165667919e3779f9
	return acc ^ acc>>32
}

// TestWordsAgainstXXH3 checks the 4-16 byte words of a Key against hashing.XXH3
// for many seeds, lengths and contents; the families' tests check the
// 17-128 byte words (Mix) through their assembly at every length.
func TestWordsAgainstXXH3(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds := []uint64{0, 1, 1 << 32, 0xffffffff, ^uint64(0), 0x9e3779b97f4a7c15}
	for range 20 {
		seeds = append(seeds, r.Uint64())
	}
	b := make([]byte, 16)
	for _, seed := range seeds {
		h := hashing.XXH3(seed)
		w := For(h)
		for n := 4; n <= 16; n++ {
			for range 50 {
				for i := range b[:n] {
					b[i] = byte(r.Uint32())
				}
				if got, want := sum64(&w, b[:n]), h.Sum64(b[:n]); got != want {
					t.Fatalf("seed %#x, %d bytes %x: %#x from the Key, XXH3 %#x", seed, n, b[:n], got, want)
				}
			}
		}
	}
}

// TestMixWords checks that Mix alternates adding and subtracting the seed
// on XXH3's default secret, whose first word is 0xbe4ba423396cfeb8, and
// that only XXH3 hashers get a Key.
func TestMixWords(t *testing.T) {
	seed := uint64(12345)
	w0, w := For(hashing.XXH3(0)), For(hashing.XXH3(seed))
	if !w.XXH3 || w.Seed != seed {
		t.Fatalf("For(XXH3(%d)) = %+v", seed, w)
	}
	var sip [16]byte
	for _, h := range []hashing.Hasher{hashing.XXH64(1), hashing.SipHash(sip)} {
		if k := For(h); k != (Key{}) {
			t.Fatalf("For(%v) = %+v, want the zero Key", h, k)
		}
	}
	if w0.Mix[0] != 0xbe4ba423396cfeb8 {
		t.Fatalf("For(XXH3(0)).Mix[0] = %#x", w0.Mix[0])
	}
	for i := range w.Mix {
		want := w0.Mix[i] + seed
		if i%2 == 1 {
			want = w0.Mix[i] - seed
		}
		if w.Mix[i] != want {
			t.Fatalf("Mix[%d] = %#x, want %#x", i, w.Mix[i], want)
		}
	}
}
