package hashing

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomery/bloomery"
	"github.com/zeebo/xxh3"
)

func katMessage(n int) []byte {
	m := make([]byte, n)
	for i := range m {
		m[i] = byte(7*i + 3)
	}
	return m
}

func readKAT(t *testing.T, path string, fn func(n int, seed, want uint64)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var fs = strings.Fields(line)
		n, _ := strconv.Atoi(fs[0])
		seed, _ := strconv.ParseUint(fs[1], 16, 64)
		want, _ := strconv.ParseUint(fs[2], 16, 64)
		fn(n, seed, want)
		rows++
	}
	if rows < 50 {
		t.Fatalf("only %d rows in %s", rows, path)
	}
}

// TestXXH3KnownAnswers checks bit-exactness with the reference xxHash
// 0.8.1 at every length from 0 to 259 and at the long-input boundaries.
func TestXXH3KnownAnswers(t *testing.T) {
	readKAT(t, "testdata/xxh3_kat.txt", func(n int, seed, want uint64) {
		m := katMessage(n)
		if got := XXH3(seed).Sum64(m); got != want {
			t.Errorf("XXH3(len=%d, seed=%#x) = %016x, want %016x", n, seed, got, want)
		}
		if got := XXH3(seed).Sum64String(string(m)); got != want {
			t.Errorf("XXH3 string (len=%d) = %016x, want %016x", n, got, want)
		}
		if seed == 0 {
			var zero Hasher
			if got := zero.Sum64(m); got != want {
				t.Errorf("zero Hasher is not XXH3 seed 0 at len %d", n)
			}
		}
	})
}

func TestXXH64KnownAnswers(t *testing.T) {
	readKAT(t, "testdata/xxh64_kat.txt", func(n int, seed, want uint64) {
		if got := XXH64(seed).Sum64(katMessage(n)); got != want {
			t.Errorf("XXH64(len=%d, seed=%#x) = %016x, want %016x", n, seed, got, want)
		}
	})
}

// sipVectors are the reference SipHash-2-4 outputs (Aumasson and Bernstein,
// siphash24.c): key 00 01 .. 0f, message 00 01 .. (n-1) for n = 0..63.
var sipVectors = [64]uint64{
	0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
	0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
	0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
	0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
	0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
	0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
	0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
	0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
	0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
	0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
	0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
	0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
	0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
	0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
	0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
	0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
}

func TestSipHashKnownAnswers(t *testing.T) {
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	h := SipHash(key)
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for n, want := range sipVectors {
		if got := h.Sum64(msg[:n]); got != want {
			t.Errorf("SipHash-2-4(len=%d) = %016x, want %016x", n, got, want)
		}
	}
}

func TestRestore(t *testing.T) {
	var key [16]byte
	key[0] = 42
	keyed := SipHash(key)
	other := key
	other[1] = 1

	if _, err := Restore(AlgSipHash, keyed.Seed(), Expect{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Fatalf("keyed without key: %v", err)
	}
	if h, err := Restore(AlgSipHash, keyed.Seed(), Want(keyed)); err != nil || h.Sum64([]byte("x")) != keyed.Sum64([]byte("x")) {
		t.Fatalf("keyed with key: %v", err)
	}
	if _, err := Restore(AlgSipHash, keyed.Seed(), Want(SipHash(other))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("wrong key accepted: %v", err)
	}
	if _, err := Restore(AlgXXH3, 7, Want(XXH3(8))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("wrong seed accepted: %v", err)
	}
	if _, err := Restore(AlgXXH3, 7, Want(SipHash(key))); !errors.Is(err, bloomery.ErrIncompatible) {
		t.Fatalf("wrong alg accepted: %v", err)
	}
	if _, err := Restore(Alg(99), 7, Expect{}); !errors.Is(err, bloomery.ErrUnsupportedVersion) {
		t.Fatalf("unknown alg accepted: %v", err)
	}
	h, err := Restore(AlgSipHash, keyed.Seed(), Expect{Keyless: true})
	if err != nil || h.HasKey() {
		t.Fatalf("keyless restore: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Sum64 on a keyless hasher did not panic")
			}
		}()
		h.Sum64([]byte("x"))
	}()
	if strings.Contains(keyed.String(), "42") && !strings.Contains(keyed.String(), "fingerprint") {
		t.Error("String leaks key")
	}
}

func TestReduceRange(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 1000, 1 << 40, ^uint64(0)} {
		for _, x := range []uint64{0, 1, 1 << 63, ^uint64(0)} {
			if r := Reduce(x, n); r >= n {
				t.Fatalf("Reduce(%d,%d)=%d", x, n, r)
			}
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	key := []byte("some key of moderate length")
	s := "another key"
	var k [16]byte
	for _, h := range []Hasher{XXH3(1), SipHash(k), XXH64(0), XXH64(5)} {
		if a := testing.AllocsPerRun(100, func() { h.Sum64(key); h.Sum64String(s) }); a != 0 {
			t.Errorf("%v: %v allocs", h, a)
		}
	}
}

func BenchmarkSum64(b *testing.B) {
	var k [16]byte
	for _, n := range []int{8, 16, 32, 64} {
		key := katMessage(n)
		for _, h := range []Hasher{XXH3(0), SipHash(k)} {
			b.Run(h.Alg().String()+"/len="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					h.Sum64(key)
				}
			})
		}
	}
}

// TestXXH3Paths checks Sum64 against github.com/zeebo/xxh3 on random
// contents at every length from 0 to 300 (the known answers above use one
// message per length) under many seeds: Sum64 hashes 4 to 128 bytes with
// its own code and the other lengths through zeebo/xxh3.
func TestXXH3Paths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seeds := []uint64{0, 1, 0xffffffff, 1 << 32, ^uint64(0), 0x9e3779b97f4a7c15}
	for range 26 {
		seeds = append(seeds, r.Uint64())
	}
	b := make([]byte, 300)
	for _, seed := range seeds {
		h := XXH3(seed)
		for n := 0; n <= len(b); n++ {
			for range 4 {
				for i := range b[:n] {
					b[i] = byte(r.Uint32())
				}
				if got, want := h.Sum64(b[:n]), xxh3.HashSeed(b[:n], seed); got != want {
					t.Fatalf("seed %#x, %d bytes: %016x, zeebo/xxh3 %016x", seed, n, got, want)
				}
			}
		}
	}
}

// BenchmarkSum64Layer compares, on 16-32 byte keys, Sum64 with sum64
// (which calls github.com/zeebo/xxh3 for these lengths too) and with a
// direct call of zeebo/xxh3 (see Sum64).
func BenchmarkSum64Layer(b *testing.B) {
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = katMessage(16 + i%17)
		keys[i][0] = byte(i)
	}
	h := XXH3(5)
	var sink uint64
	b.Run("Sum64", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += h.Sum64(keys[i&4095])
		}
	})
	b.Run("sum64", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += h.sum64(keys[i&4095])
		}
	})
	seed := h.Seed()
	b.Run("zeebo", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += xxh3.HashSeed(keys[i&4095], seed)
		}
	})
	_ = sink
}

// TestSum64Batch checks Sum64Batch against Sum64 key by key, for every
// algorithm, with keys of every length from 0 to 300 in one batch (so the
// loop switches paths from key to key).
func TestSum64Batch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 301*300/2)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	var keys [][]byte
	for n, at := 0, 0; n <= 300; n, at = n+1, at+n {
		keys = append(keys, buf[at:at+n])
	}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, h := range []Hasher{XXH3(0), XXH3(r.Uint64()), XXH3(^uint64(0)), XXH64(0), XXH64(9), SipHashKeys(1, 2)} {
		out := make([]uint64, len(keys)+1)
		out[len(keys)] = 42
		h.Sum64Batch(keys, out)
		for i, k := range keys {
			if out[i] != h.Sum64(k) {
				t.Fatalf("%v, %d bytes: Sum64Batch %016x, Sum64 %016x", h, len(k), out[i], h.Sum64(k))
			}
		}
		if out[len(keys)] != 42 {
			t.Fatalf("%v: Sum64Batch wrote past len(keys)", h)
		}
		if n := testing.AllocsPerRun(10, func() { h.Sum64Batch(keys, out) }); n != 0 {
			t.Fatalf("%v: Sum64Batch allocates %v times", h, n)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Sum64Batch with a short out did not panic")
		}
	}()
	XXH3(0).Sum64Batch(keys, make([]uint64, len(keys)-1))
}

// BenchmarkSum64Batch compares Sum64Batch with a loop calling Sum64, on
// 1024 keys of 16-32 bytes (and of 8 and 33-64 bytes), in cache.
func BenchmarkSum64Batch(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, lens := range [][2]int{{16, 32}, {24, 24}, {8, 8}, {33, 64}} {
		keys := make([][]byte, 1024)
		for i := range keys {
			keys[i] = make([]byte, lens[0]+r.IntN(lens[1]-lens[0]+1))
			for j := range keys[i] {
				keys[i][j] = byte(r.Uint32())
			}
		}
		out := make([]uint64, len(keys))
		h := XXH3(5)
		name := fmt.Sprintf("len=%d-%d", lens[0], lens[1])
		b.Run(name+"/Sum64", func(b *testing.B) {
			for b.Loop() {
				for i, k := range keys {
					out[i] = h.Sum64(k)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
		b.Run(name+"/Sum64Batch", func(b *testing.B) {
			for b.Loop() {
				h.Sum64Batch(keys, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
	}
}
