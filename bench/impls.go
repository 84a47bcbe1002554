package bench

import (
	"encoding/binary"

	bbloom "github.com/bits-and-blooms/bloom/v3"
	"github.com/greatroar/blobloom"
	"github.com/zeebo/xxh3"

	"github.com/bloomery/bloomery/bloom"
)

// Key handling, the same for everyone: uint64 keys are random, so filters
// that take a 64-bit hash (ours, blobloom, xorfilter) get them directly,
// and filters that take bytes get their 8 little-endian bytes. String keys
// are hashed by each filter's own hashing; filters that only take uint64
// (blobloom, xorfilter) get XXH3-64 of the key, the hash Bloomery uses.

func le(k uint64) [8]byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], k)
	return b
}

// Uint64Impls returns the implementations measured with uint64 keys.
func Uint64Impls() []Impl[uint64] {
	impls := []Impl[uint64]{
		{Name: "bloomery bloom", Group: "bloom", Ours: true, Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f, err := bloom.NewForCapacity(len(keys), p)
			if err != nil {
				return Built[uint64]{}, err
			}
			for _, k := range keys {
				f.AddHash(k)
			}
			return Built[uint64]{Count: func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					if f.ContainsHash(k) {
						c++
					}
				}
				return c
			}, Batch: f.ContainsBatch, Bytes: f.SizeBytes()}, nil
		}},
		{Name: "bits-and-blooms/bloom", Group: "bloom", Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f := bbloom.NewWithEstimates(uint(len(keys)), p)
			for _, k := range keys {
				b := le(k)
				f.Add(b[:])
			}
			return Built[uint64]{Count: func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					if b := le(k); f.Test(b[:]) {
						c++
					}
				}
				return c
			}, Bytes: int(f.Cap() / 8)}, nil
		}},
		{Name: "bloomery blocked", Group: "blocked", Ours: true, Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f, err := bloom.NewBlockedForCapacity(len(keys), p)
			if err != nil {
				return Built[uint64]{}, err
			}
			for _, k := range keys {
				f.AddHash(k)
			}
			return Built[uint64]{Count: func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					if f.ContainsHash(k) {
						c++
					}
				}
				return c
			}, Batch: f.ContainsBatch, Bytes: f.SizeBytes()}, nil
		}},
		{Name: "greatroar/blobloom", Group: "blocked", Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f := blobloom.NewOptimized(blobloom.Config{Capacity: uint64(len(keys)), FPRate: p})
			for _, k := range keys {
				f.Add(k)
			}
			return Built[uint64]{Count: func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					if f.Has(k) {
						c++
					}
				}
				return c
			}, Bytes: int(f.NumBits() / 8)}, nil
		}},
	}
	return append(impls, extraUint64Impls()...)
}

// StringImpls returns the implementations measured with 16-32 byte keys.
func StringImpls() []Impl[[]byte] {
	impls := []Impl[[]byte]{
		{Name: "bloomery bloom", Group: "bloom", Ours: true, Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f, err := bloom.NewForCapacity(len(keys), p)
			if err != nil {
				return Built[[]byte]{}, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			return Built[[]byte]{Count: func(ks [][]byte) int {
				c := 0
				for _, k := range ks {
					if f.Contains(k) {
						c++
					}
				}
				return c
			}, Batch: batchOverHashes(f.ContainsBatch), Bytes: f.SizeBytes()}, nil
		}},
		{Name: "bits-and-blooms/bloom", Group: "bloom", Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f := bbloom.NewWithEstimates(uint(len(keys)), p)
			for _, k := range keys {
				f.Add(k)
			}
			return Built[[]byte]{Count: func(ks [][]byte) int {
				c := 0
				for _, k := range ks {
					if f.Test(k) {
						c++
					}
				}
				return c
			}, Bytes: int(f.Cap() / 8)}, nil
		}},
		{Name: "bloomery blocked", Group: "blocked", Ours: true, Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f, err := bloom.NewBlockedForCapacity(len(keys), p)
			if err != nil {
				return Built[[]byte]{}, err
			}
			for _, k := range keys {
				f.Add(k)
			}
			hs, hasher := make([]uint64, 1024), f.Hasher()
			batch := func(keys [][]byte, out []bool) {
				h := hs[:len(keys)]
				hasher.Sum64Batch(keys, h)
				f.ContainsBatch(h, out)
			}
			return Built[[]byte]{Count: func(ks [][]byte) int {
				c := 0
				for _, k := range ks {
					if f.Contains(k) {
						c++
					}
				}
				return c
			}, Batch: batch, Bytes: f.SizeBytes()}, nil
		}},
		{Name: "greatroar/blobloom", Group: "blocked", Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f := blobloom.NewOptimized(blobloom.Config{Capacity: uint64(len(keys)), FPRate: p})
			for _, k := range keys {
				f.Add(xxh3.Hash(k))
			}
			return Built[[]byte]{Count: func(ks [][]byte) int {
				c := 0
				for _, k := range ks {
					if f.Has(xxh3.Hash(k)) {
						c++
					}
				}
				return c
			}, Bytes: int(f.NumBits() / 8)}, nil
		}},
	}
	return append(impls, extraStringImpls()...)
}
