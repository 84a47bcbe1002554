package main

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"time"

	"github.com/bloomery/bloomery/bench"
	"github.com/bloomery/bloomery/cuckoo"
	seiflotfy "github.com/seiflotfy/cuckoofilter"
)

var secret = [7]uint64{0xbe4ba423396cfeb8, 0x1cad21f72c81017c, 0xdb979083e96dd4de, 0x1f67b3b7a4a44072,
	0x78e5c0cc4ee679cb, 0x2172ffcc7dd05a82, 0x8e2443f7744608b8}

type key struct{ mix [4]uint64; lo, hi uint64 }

func fold(a, b uint64) uint64 { h, l := bits.Mul64(a, b); return h ^ l }

func (k *key) sum(b []byte) uint64 {
	n := len(b)
	if n <= 16 {
		if n < 9 {
			panic("len")
		}
		lo := binary.LittleEndian.Uint64(b) ^ k.lo
		hi := binary.LittleEndian.Uint64(b[n-8:]) ^ k.hi
		acc := uint64(n) + bits.ReverseBytes64(lo) + hi + fold(lo, hi)
		acc ^= acc >> 37
		acc *= 0x165667919e3779f9
		return acc ^ acc>>32
	}
	if n > 32 {
		panic("len")
	}
	acc := uint64(n) * 0x9E3779B185EBCA87
	acc += fold(binary.LittleEndian.Uint64(b)^k.mix[0], binary.LittleEndian.Uint64(b[8:])^k.mix[1])
	acc += fold(binary.LittleEndian.Uint64(b[n-16:])^k.mix[2], binary.LittleEndian.Uint64(b[n-8:])^k.mix[3])
	acc ^= acc >> 37
	acc *= 0x165667919E3779F9
	return acc ^ acc>>32
}

func main() {
	n := 10_000_000
	keys, _ := bench.StringKeys(n, 0, 42)
	f0, _ := cuckoo.New(cuckoo.Params{Capacity: 10, FingerprintBits: 12})
	h := f0.Hasher()
	seed := h.Seed()
	var k key
	for i := range 4 {
		if i%2 == 0 {
			k.mix[i] = secret[i] + seed
		} else {
			k.mix[i] = secret[i] - seed
		}
	}
	k.lo = (secret[3] ^ secret[4]) + seed
	k.hi = (secret[5] ^ secret[6]) - seed
	for _, x := range keys[:1000] {
		if k.sum(x) != h.Sum64(x) {
			panic("mismatch")
		}
	}
	const m = 3
	res := make([][]float64, m)
	for rep := 0; rep < 5; rep++ {
		runtime.GC()
		fa, _ := cuckoo.New(cuckoo.Params{Capacity: n, FingerprintBits: 12})
		fb, _ := cuckoo.New(cuckoo.Params{Capacity: n, FingerprintBits: 12})
		s := seiflotfy.NewFilter(uint(n))
		tot := make([]time.Duration, m)
		for c := 0; c < n; c += 8192 {
			ch := keys[c:min(n, c+8192)]
			for j := range m {
				jj := (j + c/8192) % m
				t := time.Now()
				switch jj {
				case 0:
					for _, x := range ch {
						if fa.Insert(x) != nil {
							panic(1)
						}
					}
				case 1:
					for _, x := range ch {
						if fb.InsertHash(k.sum(x)) != nil {
							panic(1)
						}
					}
				case 2:
					for _, x := range ch {
						s.Insert(x)
					}
				}
				tot[jj] += time.Since(t)
			}
		}
		for j := range m {
			res[j] = append(res[j], float64(tot[j])/float64(n))
		}
		fmt.Println(res[0][rep], res[1][rep], res[2][rep])
	}
	for j := range m {
		var rs []float64
		for i := range res[j] {
			rs = append(rs, res[2][i]/res[j][i])
		}
		slices.Sort(rs)
		fmt.Printf("%d ratio seif/this %.2f (%.2f-%.2f)\n", j, rs[2], rs[0], rs[4])
	}
}
