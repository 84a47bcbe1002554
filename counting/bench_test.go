package counting

import (
	"fmt"
	"testing"

	"github.com/bloomery/bloomery/internal/filtertest"
)

func BenchmarkContains(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20, 1 << 23} {
		for _, p := range []Params{{FPR: 0.01}, {FPR: 0.01, Blocked: true}} {
			p.Capacity = n
			f, _ := New(p)
			in := filtertest.Hashes(n, 1)
			for _, h := range in {
				f.AddHash(h)
			}
			out := filtertest.Hashes(n, 2)
			for _, c := range []struct {
				name string
				hs   []uint64
			}{{"positive", in}, {"negative", out}} {
				b.Run(fmt.Sprintf("n=%d/blocked=%v/%s", n, p.Blocked, c.name), func(b *testing.B) {
					i := 0
					for b.Loop() {
						f.ContainsHash(c.hs[i])
						if i++; i == len(c.hs) {
							i = 0
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
				})
			}
		}
	}
}

func BenchmarkAddDelete(b *testing.B) {
	for _, p := range []Params{{FPR: 0.01}, {FPR: 0.01, Blocked: true}} {
		n := 1 << 20
		p.Capacity = n
		f, _ := New(p)
		hs := filtertest.Hashes(n, 4)
		for _, h := range hs {
			f.AddHash(h)
		}
		b.Run(fmt.Sprintf("n=%d/blocked=%v", n, p.Blocked), func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.DeleteHash(hs[i])
				f.AddHash(hs[i])
				if i++; i == n {
					i = 0
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}
