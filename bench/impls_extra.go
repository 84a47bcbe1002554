package bench

import (
	"slices"

	"github.com/FastFilter/xorfilter"
	"github.com/zeebo/xxh3"
)

func extraUint64Impls() []Impl[uint64] {
	return []Impl[uint64]{
		{Name: "FastFilter/xorfilter BinaryFuse8", Group: "fuse8", Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f, err := xorfilter.PopulateBinaryFuse8(slices.Clone(keys))
			if err != nil {
				return Built[uint64]{}, err
			}
			return Built[uint64]{Contains: f.Contains, Bytes: len(f.Fingerprints)}, nil
		}},
	}
}

func extraStringImpls() []Impl[[]byte] {
	return []Impl[[]byte]{
		{Name: "FastFilter/xorfilter BinaryFuse8", Group: "fuse8", Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			hs := make([]uint64, len(keys))
			for i, k := range keys {
				hs[i] = xxh3.Hash(k)
			}
			f, err := xorfilter.PopulateBinaryFuse8(hs)
			if err != nil {
				return Built[[]byte]{}, err
			}
			return Built[[]byte]{Contains: func(k []byte) bool { return f.Contains(xxh3.Hash(k)) }, Bytes: len(f.Fingerprints)}, nil
		}},
	}
}
