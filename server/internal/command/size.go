package command

import (
	"fmt"

	"github.com/bloomery/bloomery/server/internal/keyspace"
)

// Memory admission. Every command that creates or grows a filter computes
// the bytes its parameters ask for, without allocating, and asks admit (or
// admitKey for a new key) before building anything: a request no
// configuration allows (over MaxFilterBytes without a maxmemory) gets
// -ERR, one over maxmemory or over what is left of it gets Redis's -OOM.
// The memory counted is the keyspace (values and key names) plus
// Env.Overhead (client buffers).

// used is the memory counted against MaxMemory. The caller holds the
// keyspace lock.
func (x *Ctx) used() uint64 {
	u := x.Store.Used()
	if x.Overhead != nil {
		u += x.Overhead()
	}
	return u
}

// admit reports whether need more bytes may be allocated, answering the
// error when not. It does not reserve anything: the keyspace write lock
// the caller holds keeps the answer true until the value is stored.
func (x *Ctx) admit(need uint64) bool {
	if x.MaxMemory == 0 || x.Replaying {
		if need > x.MaxFilterBytes {
			x.Error(fmt.Sprintf("ERR the filter needs %d bytes, over the server's limit of %d bytes for one filter (a larger maxmemory allows more)", need, x.MaxFilterBytes))
			return false
		}
		return true
	}
	if need > x.MaxMemory || need > x.MaxMemory-min(x.MaxMemory, x.used()) {
		x.Error(errOOM)
		return false
	}
	return true
}

// admitKey is admit for a value of need bytes stored at a new key: the
// key's name and entry are counted too.
func (x *Ctx) admitKey(key []byte, need uint64) bool {
	return x.admit(need + keyspace.EntryBytes(key))
}

// budgetFor is the size a value decoded for a new key at key may have
// (memLimit less the key's entry), for decoders that check a limit.
func (x *Ctx) budgetFor(key []byte) uint64 {
	return x.memLimit() - min(x.memLimit(), keyspace.EntryBytes(key))
}

// nextLinker is a growing family (scalable) that can tell the size of
// the table its next new item would allocate.
type nextLinker interface{ NextLinkBytes() uint64 }
