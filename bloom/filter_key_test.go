package bloom

import (
	"runtime"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// keyHashCovers reports whether the assembly key paths hash n-byte keys
// themselves (else they take the Go path through Hasher.Sum64).
func keyHashCovers(n int) bool { return asmKeyPaths && n >= 4 && n <= 128 }

// asmKeyPaths is whether this build has the assembly key paths: amd64
// without the purego tag.
var asmKeyPaths = func() bool {
	b := []byte("0123")
	_, ok := keyHash(&Filter{inline: inlineHashOf(hashing.XXH3(0))}, &b[0], len(b))
	return ok
}()

var keyTestSeeds = []uint64{0, 1, 42, 0x9e3779b97f4a7c15, 0xdeadbeef12345678, 0xffffffff, 1 << 32, ^uint64(0)}

// TestKeyHashMatches checks the assembly XXH3 against hashing.XXH3(seed),
// the reference-exact hasher (its known-answer tests pin it to xxHash
// 0.8), at every length from 0 to 256, for several seeds (including ones
// whose halves differ, which the 4-8 byte path folds together) and
// several pseudo-random contents per length, read from both the start
// and the end of a buffer. It must cover exactly lengths 4 to 128 on
// amd64 and nothing elsewhere.
func TestKeyHashMatches(t *testing.T) {
	if runtime.GOARCH == "amd64" && !asmKeyPaths {
		t.Log("purego build: no assembly key paths")
	}
	buf := make([]byte, 512)
	s := filtertest.SplitMix64(11)
	checked := 0
	filters := make([]*Filter, len(keyTestSeeds))
	for i, seed := range keyTestSeeds {
		filters[i] = &Filter{inline: inlineHashOf(hashing.XXH3(seed))}
	}
	for rep := range 8 {
		for i := range buf {
			buf[i] = byte(s.Next())
		}
		for n := 0; n <= 256; n++ {
			for _, key := range [][]byte{buf[:n], buf[len(buf)-n:]} {
				for si, seed := range keyTestSeeds {
					var p *byte
					if n > 0 {
						p = &key[0]
					}
					got, ok := keyHash(filters[si], p, n)
					if ok != keyHashCovers(n) {
						t.Fatalf("len %d: assembly covers it: %v, want %v", n, ok, keyHashCovers(n))
					}
					if !ok {
						continue
					}
					if want := hashing.XXH3(seed).Sum64(key); got != want {
						t.Fatalf("rep %d len %d seed %#x: assembly XXH3 %016x, hashing.XXH3 %016x", rep, n, seed, got, want)
					}
					checked++
				}
			}
		}
	}
	if asmKeyPaths && checked != 8*125*2*len(keyTestSeeds) {
		t.Fatalf("checked %d hashes", checked)
	}
}

// TestKeyPathsMatchHashPaths checks Add, AddString, Contains and
// ContainsString against AddHash and ContainsHash of Hasher.Sum64 for
// every hasher kind (the XXH3 ones take the assembly on amd64, the others
// the Go path) and key lengths 0 to 200: the same bits, counts and "was
// new" answers, and the same query answers on present and absent keys.
// The filters are overfilled on purpose so that both answers occur often.
func TestKeyPathsMatchHashPaths(t *testing.T) {
	var sip [16]byte
	for i := range sip {
		sip[i] = byte(3 * i)
	}
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(0), hashing.XXH3(42), hashing.XXH3(^uint64(0)), hashing.XXH64(7), hashing.SipHash(sip)} {
		t.Run(h.String(), func(t *testing.T) {
			a, err := New(Params{Capacity: 3000, FPR: 0.02, Hasher: h})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := New(Params{Capacity: 3000, FPR: 0.02, Hasher: h})
			s := filtertest.SplitMix64(5)
			key := func() []byte {
				r := s.Next()
				k := make([]byte, r%201)
				for i := range k {
					k[i] = byte(s.Next())
				}
				return k
			}
			keys := make([][]byte, 6000)
			for i := range keys {
				keys[i] = key()
			}
			keys = append(keys, keys[:500]...) // re-adds answer "not new"
			for i, k := range keys {
				var x bool
				if i%2 == 0 {
					x = a.Add(k)
				} else {
					x = a.AddString(string(k))
				}
				if y := b.AddHash(h.Sum64(k)); x != y {
					t.Fatalf("add %d (len %d): key path %v, hash path %v", i, len(k), x, y)
				}
			}
			for i := range a.words {
				if a.words[i] != b.words[i] {
					t.Fatalf("word %d: key path %#x, hash path %#x", i, a.words[i], b.words[i])
				}
			}
			if a.ones != b.ones || a.count != b.count {
				t.Fatalf("ones %d/%d, count %d/%d", a.ones, b.ones, a.count, b.count)
			}
			hits := 0
			for i := range 20000 {
				k := key()
				if i < len(keys) {
					k = keys[i] // present
				}
				want := b.ContainsHash(h.Sum64(k))
				if a.Contains(k) != want || a.ContainsString(string(k)) != want {
					t.Fatalf("query %d (len %d): key paths disagree with ContainsHash (%v)", i, len(k), want)
				}
				if want {
					hits++
				}
			}
			if hits == 20000 || hits < len(keys) {
				t.Fatalf("%d hits of 20000 queries, %d present: not both answers exercised", hits, len(keys))
			}
		})
	}
}

// TestInlineHashSet checks that every way of making a Filter records its
// hasher for the assembly key paths: set for XXH3 (with its seed), unset
// for the others, so that a SipHash or XXH64 filter never takes the XXH3
// assembly; and that Contains takes containsKey's assembly exactly for
// XXH3 on a CPU with MULX.
func TestInlineHashSet(t *testing.T) {
	var sip [16]byte
	sip[0] = 9
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(77), hashing.XXH64(7), hashing.SipHash(sip)} {
		f, err := New(Params{Capacity: 100, FPR: 0.01, Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		f.AddString("x")
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(data, hashing.Want(h))
		if err != nil {
			t.Fatal(err)
		}
		fromImage, err := NewFromImage(f.Image())
		if err != nil {
			t.Fatal(err)
		}
		want := inlineHash{}
		if h.Alg() == hashing.AlgXXH3 {
			want = inlineHashOf(h)
			if !want.XXH3 || want.Seed != h.Seed() {
				t.Fatalf("%v: inlineHashOf gives %+v", h, want)
			}
		} else if inlineHashOf(h) != want {
			t.Fatalf("%v: inlineHashOf gives %+v", h, inlineHashOf(h))
		}
		made := []struct {
			how string
			f   *Filter
		}{{"New", f}, {"Decode", dec}, {"NewFromImage", fromImage}, {"Clone", f.Clone()}}
		if !h.Keyed() {
			var u Filter
			if err := u.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			made = append(made, struct {
				how string
				f   *Filter
			}{"UnmarshalBinary", &u})
		}
		for _, m := range made {
			if m.f.inline != want {
				t.Errorf("%v via %s: inline %+v, want %+v", h, m.how, m.f.inline, want)
			}
			if (m.f.probes != probesGo) != (want.XXH3 && haveMULX) {
				t.Errorf("%v via %s: assembly probes %v, want %v (MULX available: %v)", h, m.how, m.f.probes != probesGo, want.XXH3 && haveMULX, haveMULX)
			}
			if !m.f.ContainsString("x") {
				t.Errorf("%v via %s: false negative", h, m.how)
			}
		}
	}
	f, _ := NewForCapacity(10, 0.01)
	if f.inline != inlineHashOf(hashing.XXH3(0)) || !f.inline.XXH3 {
		t.Errorf("NewForCapacity: inline %+v", f.inline)
	}
	var zero Filter // no words, k = 0: every key "may be present", through either path
	if !zero.Contains([]byte("abcdefgh")) || !zero.ContainsString("ab") {
		t.Error("zero Filter answered false")
	}
}

// TestKeyPathsEveryK checks Contains and ContainsString against
// ContainsHash for every probe count from 1 to MaxHashFuncs, on a filter
// small enough for the amd64 key path's paired first two probes and on
// one larger than that bound (8 MiB), whose bits are set at random with
// density 3/4 so that absent keys run to every probe depth (the path runs
// a straight sequence of k probes for k <= 16 and a loop above). Keys of
// 0 to 140 bytes, so the Go path is compared too.
func TestKeyPathsEveryK(t *testing.T) {
	s := filtertest.SplitMix64(23)
	keys := make([][]byte, 3000)
	for i := range keys {
		k := make([]byte, s.Next()%141)
		for j := range k {
			k[j] = byte(s.Next())
		}
		keys[i] = k
	}
	for _, layout := range []uint8{Layout1, Layout2} {
		for _, words := range []int{1000, 1 << 20} {
			dense := make([]uint64, words)
			for i := range dense {
				a, b, c := s.Next(), s.Next(), s.Next()
				dense[i] = a | b | c
			}
			for k := 1; k <= MaxHashFuncs; k++ {
				f, err := NewFromImage(Image{Words: dense, K: k, Capacity: words, Hasher: hashing.XXH3(uint64(k)), Layout: layout})
				if err != nil {
					t.Fatal(err)
				}
				h := f.Hasher()
				yes := 0
				for i, key := range keys {
					hv := h.Sum64(key)
					want := containsHashGo(f, hv, 0)
					if f.ContainsHash(hv) != want {
						t.Fatalf("layout %d, %d words, k=%d, key %d: ContainsHash disagrees with the Go loop (%v)", layout, words, k, i, want)
					}
					if f.Contains(key) != want || f.ContainsString(string(key)) != want {
						t.Fatalf("layout %d, %d words, k=%d, key %d (len %d): key paths disagree with ContainsHash (%v)", layout, words, k, i, len(key), want)
					}
					if want {
						yes++
					}
				}
				if yes == 0 || (k <= 16 && yes == len(keys)) {
					t.Fatalf("%d words, k=%d: %d of %d keys answered true", words, k, yes, len(keys))
				}
			}
		}
	}
}

// TestAddKeyEveryK checks Add and AddString against AddHash for every
// probe count from 1 to MaxHashFuncs (the amd64 key path sets k <= 16
// probes in a straight sequence, more in a loop): the same "was new"
// answers, bits, fill and count, starting from a bit array of density
// 7/8 so that both answers occur, with keys of 0 to 140 bytes.
func TestAddKeyEveryK(t *testing.T) {
	s := filtertest.SplitMix64(29)
	dense := make([]uint64, 1000)
	for i := range dense {
		a, b, c := s.Next(), s.Next(), s.Next()
		dense[i] = a | b | c
	}
	for _, layout := range []uint8{Layout1, Layout2} {
		for k := 1; k <= MaxHashFuncs; k++ {
			img := Image{Words: append([]uint64(nil), dense...), K: k, Capacity: 1000, Hasher: hashing.XXH3(uint64(k)), Layout: layout}
			a, err := NewFromImage(img)
			if err != nil {
				t.Fatal(err)
			}
			img.Words = append([]uint64(nil), dense...)
			b, _ := NewFromImage(img)
			h := a.Hasher()
			news := 0
			for i := range 2000 {
				key := make([]byte, s.Next()%141)
				for j := range key {
					key[j] = byte(s.Next())
				}
				var x bool
				if i%2 == 0 {
					x = a.Add(key)
				} else {
					x = a.AddString(string(key))
				}
				if y := b.AddHash(h.Sum64(key)); x != y {
					t.Fatalf("k=%d add %d (len %d): key path %v, AddHash %v", k, i, len(key), x, y)
				}
				if x {
					news++
				}
			}
			for i := range a.words {
				if a.words[i] != b.words[i] {
					t.Fatalf("k=%d: word %d differs", k, i)
				}
			}
			if a.ones != b.ones || a.count != b.count || a.ones != popcount(a.words) {
				t.Fatalf("k=%d: ones %d/%d (popcount %d), count %d/%d", k, a.ones, b.ones, popcount(a.words), a.count, b.count)
			}
			if news == 0 || news == 2000 {
				t.Fatalf("k=%d: %d of 2000 adds new", k, news)
			}
		}
	}
}
