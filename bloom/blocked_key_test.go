package bloom

import (
	"bytes"
	"sync"
	"testing"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// blockedKeyHashers are the hasher kinds the Blocked key paths must agree
// with the hash paths on: XXH3 (the assembly on amd64) with seeds whose
// halves differ, and the others (always the Go path).
func blockedKeyHashers() []hashing.Hasher {
	var sip [16]byte
	for i := range sip {
		sip[i] = byte(5 * i)
	}
	return []hashing.Hasher{{}, hashing.XXH3(0), hashing.XXH3(42), hashing.XXH3(0xdeadbeef12345678), hashing.XXH3(^uint64(0)), hashing.XXH64(7), hashing.SipHash(sip)}
}

// TestBlockedKeyPathsMatchHashPaths checks Blocked's Add, AddString,
// AddHash (the amd64 assembly), Contains and ContainsString against the
// Go add (addHashGo) and ContainsHash of Hasher.Sum64, for every hasher
// kind, in plain and concurrent mode, with keys of every length from 0 to
// 256 (the amd64 assembly hashes 4-128 with XXH3; the rest take the Go
// path): the same "was new" answers, bits, fill and count, and the same
// query answers on present and absent keys. The filters are overfilled
// so that both answers occur often.
func TestBlockedKeyPathsMatchHashPaths(t *testing.T) {
	for _, h := range blockedKeyHashers() {
		for _, conc := range []bool{false, true} {
			name := h.String()
			if conc {
				name += "/concurrent"
			}
			t.Run(name, func(t *testing.T) {
				a, err := NewBlocked(Params{Capacity: 4000, FPR: 0.02, Hasher: h, Concurrent: conc})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := NewBlocked(Params{Capacity: 4000, FPR: 0.02, Hasher: h, Concurrent: conc})
				s := filtertest.SplitMix64(31)
				buf := make([]byte, 512)
				key := func(n int) []byte {
					for i := range buf {
						buf[i] = byte(s.Next())
					}
					// Alternate between the start and the end of the buffer.
					if s.Next()%2 == 0 {
						return bytes.Clone(buf[:n])
					}
					return bytes.Clone(buf[len(buf)-n:])
				}
				var keys [][]byte
				for rep := range 40 {
					for n := 0; n <= 256; n++ {
						if rep >= 2 && (n < 4 || n > 128) {
							continue // most keys where the assembly is
						}
						keys = append(keys, key(n))
					}
				}
				keys = append(keys, keys[:700]...) // re-adds answer "not new"
				news := 0
				for i, k := range keys {
					var x bool
					switch i % 3 {
					case 0:
						x = a.Add(k)
					case 1:
						x = a.AddString(string(k))
					default:
						x = a.AddHash(h.Sum64(k))
					}
					if y := b.addHashGo(h.Sum64(k)); x != y {
						t.Fatalf("add %d (len %d): key path %v, hash path %v", i, len(k), x, y)
					}
					if x {
						news++
					}
				}
				if news == 0 || news == len(keys) {
					t.Fatalf("%d of %d adds new: not both answers exercised", news, len(keys))
				}
				for i := range a.words {
					if a.words[i] != b.words[i] {
						t.Fatalf("word %d: key path %#x, hash path %#x", i, a.words[i], b.words[i])
					}
				}
				if a.ones != b.ones || a.count != b.count || a.setBits() != popcount(a.words) {
					t.Fatalf("ones %d/%d (popcount %d), count %d/%d", a.ones, b.ones, popcount(a.words), a.count, b.count)
				}
				hits, queries := 0, 0
				for i := range 3 * len(keys) {
					var k []byte
					if i < len(keys) {
						k = keys[i] // present
					} else {
						k = key(i % 257)
					}
					want := b.ContainsHash(h.Sum64(k))
					if a.Contains(k) != want || a.ContainsString(string(k)) != want {
						t.Fatalf("query %d (len %d): key paths disagree with ContainsHash (%v)", i, len(k), want)
					}
					if want {
						hits++
					}
					queries++
				}
				if hits == queries || hits < len(keys) {
					t.Fatalf("%d hits of %d queries, %d present: not both answers exercised", hits, queries, len(keys))
				}
			})
		}
	}
}

// TestBlockedKeyPathsEveryK checks Add/AddString/AddHash and Contains/
// ContainsString against the Go add (addHashGo) and ContainsHash for
// every probe count from 1 to MaxHashFuncs (the amd64 queries test the
// first three probes together for k >= 3, run k = 7 or the rest of a
// first word straight, and loop over Remix words above 7; the adds run
// k <= 7 straight), in plain and concurrent mode, starting from bit
// arrays of density 7/8 so that absent keys stop at every probe depth
// and adds answer both ways. Keys of 0 to 140 bytes, so the Go path is
// compared too.
func TestBlockedKeyPathsEveryK(t *testing.T) { checkBlockedKeyPathsEveryK(t) }

func checkBlockedKeyPathsEveryK(t *testing.T) {
	s := filtertest.SplitMix64(37)
	keys := make([][]byte, 3000)
	for i := range keys {
		k := make([]byte, s.Next()%141)
		for j := range k {
			k[j] = byte(s.Next())
		}
		keys[i] = k
	}
	dense := make([]uint64, 8*256)
	for i := range dense {
		a, b, c := s.Next(), s.Next(), s.Next()
		dense[i] = a | b | c
	}
	for k := 1; k <= MaxHashFuncs; k++ {
		for _, conc := range []bool{false, true} {
			img := BlockedImage{Words: dense, K: k, Capacity: 1000, Hasher: hashing.XXH3(uint64(k))}
			a, err := NewBlockedFromImage(img)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := NewBlockedFromImage(img)
			a.SetConcurrent(conc)
			b.SetConcurrent(conc)
			h := a.Hasher()
			yes := 0
			for i, key := range keys {
				want := a.ContainsHash(h.Sum64(key))
				if a.Contains(key) != want || a.ContainsString(string(key)) != want {
					t.Fatalf("k=%d concurrent=%v key %d (len %d): key paths disagree with ContainsHash (%v)", k, conc, i, len(key), want)
				}
				if want {
					yes++
				}
			}
			if yes == 0 || (k <= 16 && yes == len(keys)) {
				t.Fatalf("k=%d: %d of %d keys answered true", k, yes, len(keys))
			}
			news := 0
			for i, key := range keys {
				var x bool
				switch i % 3 {
				case 0:
					x = a.Add(key)
				case 1:
					x = a.AddString(string(key))
				default:
					x = a.AddHash(h.Sum64(key))
				}
				if y := b.addHashGo(h.Sum64(key)); x != y {
					t.Fatalf("k=%d concurrent=%v add %d (len %d): key path %v, addHashGo %v", k, conc, i, len(key), x, y)
				}
				if x {
					news++
				}
			}
			for i := range a.words {
				if a.words[i] != b.words[i] {
					t.Fatalf("k=%d concurrent=%v: word %d differs", k, conc, i)
				}
			}
			if a.setBits() != b.setBits() || a.count != b.count || a.setBits() != popcount(a.words) {
				t.Fatalf("k=%d concurrent=%v: ones %d/%d (popcount %d), count %d/%d", k, conc, a.setBits(), b.setBits(), popcount(a.words), a.count, b.count)
			}
			if news == 0 || news == len(keys) {
				t.Fatalf("k=%d: %d of %d adds new", k, news, len(keys))
			}
		}
	}
}

// TestBlockedInlineHashSet checks that every way of making a Blocked
// records its hasher for the assembly key paths: set for XXH3 (with its
// seed), unset for the others, so that a SipHash or XXH64 filter never
// takes the XXH3 assembly.
func TestBlockedInlineHashSet(t *testing.T) {
	var sip [16]byte
	sip[0] = 9
	for _, h := range []hashing.Hasher{{}, hashing.XXH3(77), hashing.XXH64(7), hashing.SipHash(sip)} {
		f, err := NewBlocked(Params{Capacity: 100, FPR: 0.01, Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		f.AddString("xyzzy")
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeBlocked(data, hashing.Want(h))
		if err != nil {
			t.Fatal(err)
		}
		fromImage, err := NewBlockedFromImage(f.Image())
		if err != nil {
			t.Fatal(err)
		}
		var read Blocked
		if h.HasKey() {
			read.hasher = h
		}
		if _, err := read.ReadFrom(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		want := inlineHash{}
		if h.Alg() == hashing.AlgXXH3 {
			want = inlineHashOf(h)
			if !want.XXH3 || want.Seed != h.Seed() {
				t.Fatalf("%v: inlineHashOf gives %+v", h, want)
			}
		}
		made := []struct {
			how string
			f   *Blocked
		}{{"NewBlocked", f}, {"DecodeBlocked", dec}, {"NewBlockedFromImage", fromImage}, {"Clone", f.Clone()}, {"ReadFrom", &read}}
		if !h.HasKey() {
			var u Blocked
			if err := u.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			made = append(made, struct {
				how string
				f   *Blocked
			}{"UnmarshalBinary", &u})
		}
		for _, m := range made {
			if m.f.inline != want {
				t.Errorf("%v via %s: inline %+v, want %+v", h, m.how, m.f.inline, want)
			}
			if !m.f.ContainsString("xyzzy") || !m.f.Contains([]byte("xyzzy")) {
				t.Errorf("%v via %s: false negative", h, m.how)
			}
		}
	}
	f, _ := NewBlockedForCapacity(10, 0.01)
	if f.inline != inlineHashOf(hashing.XXH3(0)) || !f.inline.XXH3 {
		t.Errorf("NewBlockedForCapacity: inline %+v", f.inline)
	}
}

// TestBlockedConcurrentKeyAdds has four goroutines add disjoint shares of
// 10^6 string keys through Add and AddString to a concurrent filter (the
// amd64 key path's LOCK BTS loop for 4-128 byte keys) while two others
// query them: afterwards the bit array must equal that of a sequential
// filter built with AddHash (the union of the keys' bits does not depend
// on the order), Len must equal the number of adds that answered "new",
// and no key may be missing. Run with -race for the Go paths.
func TestBlockedConcurrentKeyAdds(t *testing.T) {
	const n, workers = 1_000_000, 4
	f, err := NewBlocked(Params{Capacity: n, FPR: 0.01, Concurrent: true})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := NewBlocked(Params{Capacity: n, FPR: 0.01})
	s := filtertest.SplitMix64(41)
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 2+s.Next()%140) // mostly the assembly's 4-128
		for j := range k {
			k[j] = byte(s.Next())
		}
		keys[i] = k
		ref.AddHash(ref.Hasher().Sum64(k))
	}
	news := make([]int, workers)
	done := make(chan struct{})
	var wg, readers sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				var x bool
				if i%2 == 0 {
					x = f.Add(keys[i])
				} else {
					x = f.AddString(string(keys[i]))
				}
				if x {
					news[w]++
				}
			}
		}()
	}
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := r; ; i = (i + 7919) % n {
				select {
				case <-done:
					return
				default:
				}
				f.Contains(keys[i])
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	total := 0
	for _, c := range news {
		total += c
	}
	if f.Len() != total || total == 0 {
		t.Fatalf("Len %d, adds answered new %d", f.Len(), total)
	}
	if total > n || total < n-n/50 {
		t.Fatalf("%d of %d distinct keys answered new", total, n)
	}
	for i := range f.words {
		if f.words[i] != ref.words[i] {
			t.Fatalf("word %d: concurrent %#x, sequential %#x", i, f.words[i], ref.words[i])
		}
	}
	for i, k := range keys {
		if !f.Contains(k) || !f.ContainsString(string(k)) {
			t.Fatalf("key %d missing", i)
		}
	}
}
