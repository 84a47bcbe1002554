package scalable

// batchLen is how many keys ContainsBatch hashes before probing.
const batchLen = 64

// ContainsBatch sets out[i] to Contains(keys[i]); len(out) must be at
// least len(keys). It hashes a block of keys first, then asks the links
// newest first, each for the keys of the block no newer link claimed, so
// the memory loads of independent keys overlap instead of waiting key by
// key. It does not allocate and may run concurrently with other readers.
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) {
	_ = out[:len(keys)]
	var hs [batchLen]uint64
	for len(keys) > 0 {
		n := min(len(keys), batchLen)
		for i := range n {
			hs[i] = f.p.Hasher.Sum64(keys[i])
			out[i] = false
		}
		for j := len(f.links) - 1; j >= 0; j-- {
			l := f.links[j]
			for i := range n {
				if !out[i] {
					out[i] = l.ContainsHash(hs[i])
				}
			}
		}
		keys, out = keys[n:], out[n:]
	}
}
