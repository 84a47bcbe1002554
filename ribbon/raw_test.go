package ribbon

import (
	"encoding/binary"
	"testing"

	"github.com/bloomery/bloomery/hashing"
)

// TestRawAgrees: for several FPRs (including mixes of lower and upper
// blocks), MayContainRaw over AppendRaw's bytes answers exactly like
// ContainsHash for 10^5 members and 10^5 non-members.
func TestRawAgrees(t *testing.T) {
	const n = 100_000
	h := hashing.XXH3(3)
	hashes := make([]uint64, n)
	var key [8]byte
	for i := range hashes {
		binary.LittleEndian.PutUint64(key[:], uint64(i))
		hashes[i] = h.Sum64(key[:])
	}
	for _, fpr := range []float64{0.5, 0.01, 0.003, 1e-5} {
		f, err := Build(hashes, Params{FPR: fpr, Hasher: h})
		if err != nil {
			t.Fatal(err)
		}
		raw := f.AppendRaw(nil)
		l := f.RawLayout()
		if size, ok := l.RawSize(); !ok || size != uint64(len(raw)) || len(raw) != f.SizeBytes() {
			t.Fatalf("fpr %v: RawSize %d %v, raw %d bytes, SizeBytes %d", fpr, size, ok, len(raw), f.SizeBytes())
		}
		fp := 0
		for i := range 2 * n {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			x := h.Sum64(key[:])
			want := f.ContainsHash(x)
			if got := MayContainRaw(raw, l, x); got != want {
				t.Fatalf("fpr %v: key %d: raw %v, ContainsHash %v", fpr, i, got, want)
			}
			if i < n && !want {
				t.Fatalf("false negative for key %d", i)
			}
			if i >= n && want {
				fp++
			}
		}
		if fp == 0 && fpr > 1e-4 {
			t.Fatalf("fpr %v: no false positives among %d: the comparison tested nothing", fpr, n)
		}
	}
}

// TestRawInvalid: shapes and sizes that do not match fail open.
func TestRawInvalid(t *testing.T) {
	f, err := Build([]uint64{1, 2, 3, 4, 5}, Params{FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	raw := f.AppendRaw(nil)
	good := f.RawLayout()
	bad := []RawLayout{
		{}, {Blocks: good.Blocks, LowerColumns: 0}, {Blocks: good.Blocks, LowerColumns: 32},
		{Blocks: good.Blocks + 1, LowerColumns: good.LowerColumns, UpperStart: good.UpperStart},
		{Blocks: good.Blocks, LowerColumns: good.LowerColumns, UpperStart: good.Blocks + 1},
		{Blocks: 1 << 62, LowerColumns: 31}, {Blocks: ^uint64(0), LowerColumns: 5},
	}
	for _, l := range bad {
		for _, d := range [][]byte{raw, raw[:len(raw)-1], nil} {
			if !MayContainRaw(d, l, 99) {
				t.Errorf("layout %+v len %d: false on invalid input", l, len(d))
			}
		}
	}
	if !MayContainRaw(raw[:len(raw)-8], good, 99) {
		t.Error("short data: false")
	}
}

func TestRawZeroAllocs(t *testing.T) {
	f, err := Build([]uint64{1, 2, 3, 4, 5}, Params{FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	raw, l := f.AppendRaw(nil), f.RawLayout()
	var x uint64
	if a := testing.AllocsPerRun(1000, func() { x++; MayContainRaw(raw, l, x) }); a != 0 {
		t.Fatalf("%v allocations per query", a)
	}
}
