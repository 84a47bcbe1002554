package guard

import "sync/atomic"

// negCache is a set of at most size keys with CLOCK eviction. contains may
// run concurrently with other contains calls (it only sets a reference bit
// atomically); add and remove need exclusive access.
type negCache struct {
	idx  map[string]int32
	keys []string
	ref  []atomic.Uint32
	free []int32
	hand int
}

func newNegCache(size int) *negCache {
	c := &negCache{
		idx:  make(map[string]int32, size),
		keys: make([]string, size),
		ref:  make([]atomic.Uint32, size),
		free: make([]int32, 0, size),
	}
	for i := size - 1; i >= 0; i-- {
		c.free = append(c.free, int32(i))
	}
	return c
}

func (c *negCache) len() int { return len(c.idx) }

func (c *negCache) contains(key []byte) bool {
	i, ok := c.idx[string(key)]
	if ok {
		c.ref[i].Store(1)
	}
	return ok
}

func (c *negCache) add(key []byte) {
	if i, ok := c.idx[string(key)]; ok {
		c.ref[i].Store(1)
		return
	}
	var slot int32
	if n := len(c.free); n > 0 {
		slot = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		// Sweep: clear reference bits until an unreferenced slot comes
		// round (at most one full turn plus one).
		for {
			h := c.hand
			c.hand = (c.hand + 1) % len(c.keys)
			if c.ref[h].Load() == 0 {
				slot = int32(h)
				delete(c.idx, c.keys[h])
				break
			}
			c.ref[h].Store(0)
		}
	}
	k := string(key)
	c.keys[slot] = k
	c.ref[slot].Store(0)
	c.idx[k] = slot
}

func (c *negCache) remove(key []byte) {
	i, ok := c.idx[string(key)]
	if !ok {
		return
	}
	delete(c.idx, c.keys[i])
	c.keys[i] = ""
	c.ref[i].Store(0)
	c.free = append(c.free, i)
}
