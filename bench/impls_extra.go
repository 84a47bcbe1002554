package bench

import (
	"encoding/binary"
	"slices"

	"github.com/FastFilter/xorfilter"
	seiflotfy "github.com/seiflotfy/cuckoofilter"
	boom "github.com/tylertreat/BoomFilters"
	"github.com/zeebo/xxh3"

	"github.com/bloomery/bloomery/counting"
	"github.com/bloomery/bloomery/cuckoo"
	"github.com/bloomery/bloomery/fuse"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/ribbon"
	"github.com/bloomery/bloomery/xor"
)

// hashKeys hashes string keys with XXH3-64 (seed 0), the hash every
// Bloomery family uses by default, for filters built from hashes.
func hashKeys(keys [][]byte) []uint64 {
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = xxh3.Hash(k)
	}
	return hs
}

// batchOverHashes adapts one of our batch queries over hashes to string
// keys: the keys hashed with hashing.Hasher.Sum64Batch (XXH3, seed 0, as
// hashKeys), then the batch, both in the measured time.
func batchOverHashes(batch func([]uint64, []bool)) func([][]byte, []bool) {
	hs := make([]uint64, 1024)
	h := hashing.XXH3(0)
	return func(keys [][]byte, out []bool) {
		hs := hs[:len(keys)]
		h.Sum64Batch(keys, hs)
		batch(hs, out)
	}
}

// static is a static filter built from hashes, seen as the harness needs
// it: countU and countS count the "maybe" answers over uint64 keys (used
// as hashes) and over string keys (hashed with XXH3 first, in the measured
// time), each calling the filter's query directly (see Built.Count);
// batch is its batch query over hashes, nil if it has none.
type static struct {
	countU func([]uint64) int
	countS func([][]byte) int
	batch  func([]uint64, []bool)
	bytes  int
}

// staticU wraps a static family built from uint64 keys (used as hashes).
func staticU(name, group string, ours bool, build staticBuild) Impl[uint64] {
	return Impl[uint64]{Name: name, Group: group, Ours: ours, Build: func(keys []uint64, p float64) (Built[uint64], error) {
		s, err := build(keys)
		return Built[uint64]{Count: s.countU, Batch: s.batch, Bytes: s.bytes}, err
	}}
}

// staticS wraps the same family for string keys: the keys are hashed with
// XXH3 first (build and query times include hashing).
func staticS(name, group string, ours bool, build staticBuild) Impl[[]byte] {
	return Impl[[]byte]{Name: name, Group: group, Ours: ours, Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
		s, err := build(hashKeys(keys))
		if err != nil {
			return Built[[]byte]{}, err
		}
		out := Built[[]byte]{Count: s.countS, Bytes: s.bytes}
		if s.batch != nil {
			out.Batch = batchOverHashes(s.batch)
		}
		return out, nil
	}}
}

type staticBuild = func([]uint64) (static, error)

func staticBuilds() []struct {
	name, group string
	ours        bool
	build       staticBuild
} {
	return []struct {
		name, group string
		ours        bool
		build       staticBuild
	}{
		{"bloomery fuse8", "fuse8", true, func(hs []uint64) (static, error) {
			f, err := fuse.Build[uint8](hs, fuse.Params{})
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(k) {
							c++
						}
					}
					return c
				},
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(xxh3.Hash(k)) {
							c++
						}
					}
					return c
				},
				batch: f.ContainsBatch, bytes: f.SizeBytes(),
			}, nil
		}},
		{"FastFilter/xorfilter BinaryFuse8", "fuse8", false, func(hs []uint64) (static, error) {
			f, err := xorfilter.PopulateBinaryFuse8(slices.Clone(hs))
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.Contains(k) {
							c++
						}
					}
					return c
				},
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.Contains(xxh3.Hash(k)) {
							c++
						}
					}
					return c
				},
				bytes: len(f.Fingerprints),
			}, nil
		}},
		{"bloomery fuse8-4", "fuse8-4", true, func(hs []uint64) (static, error) {
			f, err := fuse.Build[uint8](hs, fuse.Params{Arity: 4})
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(k) {
							c++
						}
					}
					return c
				},
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(xxh3.Hash(k)) {
							c++
						}
					}
					return c
				},
				batch: f.ContainsBatch, bytes: f.SizeBytes(),
			}, nil
		}},
		{"bloomery xor8", "xor8", true, func(hs []uint64) (static, error) {
			f, err := xor.Build(hs, xor.Params{})
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(k) {
							c++
						}
					}
					return c
				},
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(xxh3.Hash(k)) {
							c++
						}
					}
					return c
				},
				batch: f.ContainsBatch, bytes: f.SizeBytes(),
			}, nil
		}},
		{"FastFilter/xorfilter Xor8", "xor8", false, func(hs []uint64) (static, error) {
			f, err := xorfilter.Populate(slices.Clone(hs))
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.Contains(k) {
							c++
						}
					}
					return c
				},
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.Contains(xxh3.Hash(k)) {
							c++
						}
					}
					return c
				},
				bytes: len(f.Fingerprints),
			}, nil
		}},
		{"bloomery ribbon", "ribbon", true, func(hs []uint64) (static, error) {
			f, err := ribbon.Build(hs, ribbon.Params{FPR: 0.01})
			if err != nil {
				return static{}, err
			}
			return static{
				countU: func(ks []uint64) int {
					c := 0
					for _, k := range ks {
						if f.ContainsHash(k) {
							c++
						}
					}
					return c
				},
				// Through its key method, as bloomery blocked: on amd64
				// Contains hashes and evaluates in one assembly function.
				countS: func(ks [][]byte) int {
					c := 0
					for _, k := range ks {
						if f.Contains(k) {
							c++
						}
					}
					return c
				},
				batch: f.ContainsBatch, bytes: f.SizeBytes(),
			}, nil
		}},
	}
}

func extraUint64Impls() []Impl[uint64] {
	var out []Impl[uint64]
	for _, s := range staticBuilds() {
		out = append(out, staticU(s.name, s.group, s.ours, s.build))
	}
	out = append(out,
		cuckooPerKeyU("bloomery cuckoo (12-bit)", 12, cuckoo.DesignLoad),
		// The same filter built through InsertBatch, the batch-load API
		// (prefetch pipeline); the row above is the per-key InsertHash.
		Impl[uint64]{Name: "bloomery cuckoo (12-bit, InsertBatch)", Group: "cuckoo", Ours: true, Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f, err := cuckoo.New(cuckoo.Params{Capacity: len(keys), FingerprintBits: 12})
			if err != nil {
				return Built[uint64]{}, err
			}
			if _, err := f.InsertBatch(keys); err != nil {
				return Built[uint64]{}, err
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
		// The same 12-bit filter sized so that it ends at seiflotfy's load
		// at 10^7 keys (60 %): speed at equal load, at 20 bits/key.
		cuckooPerKeyU("bloomery cuckoo (12-bit, 60 % load)", 12, 0.6),
		// At seiflotfy's FPR (1.8% at 10^7 keys, 8-bit fingerprints at 60 %
		// load): 9-bit fingerprints, at the default load and at 85 %.
		cuckooPerKeyU("bloomery cuckoo (9-bit)", 9, cuckoo.DesignLoad),
		cuckooPerKeyU("bloomery cuckoo (9-bit, 85 % load)", 9, 0.85),
		Impl[uint64]{Name: "seiflotfy/cuckoofilter", Group: "cuckoo", Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f := seiflotfy.NewFilter(uint(len(keys)))
			// One key buffer for all calls: seiflotfy hashes through an
			// interface, so a per-call buffer would escape and cost it a heap
			// allocation per insert and per query that no user must pay.
			b := make([]byte, 8)
			failed := 0
			for _, k := range keys {
				binary.LittleEndian.PutUint64(b, k)
				if !f.Insert(b) {
					failed++
				}
			}
			count := func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					binary.LittleEndian.PutUint64(b, k)
					if f.Lookup(b) {
						c++
					}
				}
				return c
			}
			return Built[uint64]{Count: count, Bytes: seiflotfyBytes(len(keys)), InsertFailures: failed}, nil
		}},
		Impl[uint64]{Name: "bloomery counting (4-bit)", Group: "counting", Ours: true, Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f, err := counting.NewForCapacity(len(keys), p)
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
			}, Bytes: f.SizeBytes()}, nil
		}},
		Impl[uint64]{Name: "tylertreat/BoomFilters counting", Group: "counting", Build: func(keys []uint64, p float64) (Built[uint64], error) {
			f := boom.NewCountingBloomFilter(uint(len(keys)), 4, p)
			for _, k := range keys {
				b := le(k)
				f.Add(b[:])
			}
			// 4-bit buckets: m/2 bytes.
			return Built[uint64]{Count: func(ks []uint64) int {
				c := 0
				for _, k := range ks {
					if b := le(k); f.Test(b[:]) {
						c++
					}
				}
				return c
			}, Bytes: int(f.Capacity() / 2)}, nil
		}},
	)
	return out
}

func extraStringImpls() []Impl[[]byte] {
	var out []Impl[[]byte]
	for _, s := range staticBuilds() {
		out = append(out, staticS(s.name, s.group, s.ours, s.build))
	}
	out = append(out,
		cuckooPerKeyS("bloomery cuckoo (12-bit)", 12, cuckoo.DesignLoad),
		// InsertBatch over the keys' hashes, 1024 at a time (hashing
		// included in the build time).
		Impl[[]byte]{Name: "bloomery cuckoo (12-bit, InsertBatch)", Group: "cuckoo", Ours: true, Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f, err := cuckoo.New(cuckoo.Params{Capacity: len(keys), FingerprintBits: 12})
			if err != nil {
				return Built[[]byte]{}, err
			}
			hs := make([]uint64, 1024)
			h := f.Hasher()
			for len(keys) > 0 {
				c := keys[:min(len(keys), len(hs))]
				for i, k := range c {
					hs[i] = h.Sum64(k)
				}
				if _, err := f.InsertBatch(hs[:len(c)]); err != nil {
					return Built[[]byte]{}, err
				}
				keys = keys[len(c):]
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
		cuckooPerKeyS("bloomery cuckoo (12-bit, 60 % load)", 12, 0.6),
		// At seiflotfy's FPR (1.8% at 10^7 keys, 8-bit fingerprints at 60 %
		// load): 9-bit fingerprints, at the default load and at 85 %.
		cuckooPerKeyS("bloomery cuckoo (9-bit)", 9, cuckoo.DesignLoad),
		cuckooPerKeyS("bloomery cuckoo (9-bit, 85 % load)", 9, 0.85),
		Impl[[]byte]{Name: "seiflotfy/cuckoofilter", Group: "cuckoo", Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
			f := seiflotfy.NewFilter(uint(len(keys)))
			failed := 0
			for _, k := range keys {
				if !f.Insert(k) {
					failed++
				}
			}
			return Built[[]byte]{Count: func(ks [][]byte) int {
				c := 0
				for _, k := range ks {
					if f.Lookup(k) {
						c++
					}
				}
				return c
			}, Bytes: seiflotfyBytes(len(keys)), InsertFailures: failed}, nil
		}},
	)
	return out
}

// cuckooPerKeyU is our cuckoo filter with fingerprints of the given bits,
// filled one InsertHash at a time, sized (Params.Load) so that the keys
// fill its table to load: cuckoo.DesignLoad (the default sizing) or lower,
// which trades bits per key for faster inserts (fewer full buckets). The
// rows at seiflotfy's load at 10^7 keys (60 %) show insert speed at equal
// load; the 9-bit rows, speed and space at its FPR.
func cuckooPerKeyU(name string, bits int, load float64) Impl[uint64] {
	return Impl[uint64]{Name: name, Group: "cuckoo", Ours: true, Build: func(keys []uint64, p float64) (Built[uint64], error) {
		f, err := cuckoo.New(cuckoo.Params{Capacity: len(keys), FingerprintBits: bits, Load: load})
		if err != nil {
			return Built[uint64]{}, err
		}
		for _, k := range keys {
			if err := f.InsertHash(k); err != nil {
				return Built[uint64]{}, err
			}
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
	}}
}

// cuckooPerKeyS is cuckooPerKeyU for string keys, through Insert.
func cuckooPerKeyS(name string, bits int, load float64) Impl[[]byte] {
	return Impl[[]byte]{Name: name, Group: "cuckoo", Ours: true, Build: func(keys [][]byte, p float64) (Built[[]byte], error) {
		f, err := cuckoo.New(cuckoo.Params{Capacity: len(keys), FingerprintBits: bits, Load: load})
		if err != nil {
			return Built[[]byte]{}, err
		}
		for _, k := range keys {
			if err := f.Insert(k); err != nil {
				return Built[[]byte]{}, err
			}
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
	}}
}

// seiflotfyBytes is the table size seiflotfy/cuckoofilter allocates for a
// capacity: the next power of two of n one-byte slots (in buckets of 4).
func seiflotfyBytes(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return max(p, 4)
}
