package resp

import (
	"fmt"
	"sync/atomic"
)

// Budget is a byte total shared by the Readers of a server: every
// Reader's buffer is charged to it for as long as the Reader holds it, so
// Used is the memory all query buffers hold. With a Limit, a Reader
// refuses (with a *ProtocolError, after which the server closes the
// connection) a command whose declared length, or whose buffer growth,
// would take the total past it, before allocating. Each Reader's first
// buffer (initialBuffer bytes) is charged but never refused, so a
// connection can always send ordinary commands.
//
// Concurrency: safe for use by any number of Readers; the Reader touches
// it (one atomic add) only when its buffer is allocated, grown or freed,
// never per command.
type Budget struct {
	// Limit bounds Used (0 = no limit); set before use.
	Limit int64
	used  atomic.Int64
}

// Used returns the bytes the Readers' buffers hold.
func (b *Budget) Used() int64 { return b.used.Load() }

// budgetErr is the refusal of a request over the budget; need is the
// command's size when its declared length is known, else 0.
func budgetErr(limit int64, need int) error {
	msg := fmt.Sprintf("query buffers of all clients would exceed their %d-byte budget", limit)
	if need > 0 {
		msg += fmt.Sprintf(" (this command needs %d bytes)", need)
	}
	return &ProtocolError{Msg: msg, budget: true}
}

// charge adds n bytes unconditionally.
func (b *Budget) charge(n int64) { b.used.Add(n) }

// reserve adds n bytes if the total stays within Limit and reports
// whether it did.
func (b *Budget) reserve(n int64) bool {
	if b.Limit <= 0 {
		b.used.Add(n)
		return true
	}
	if b.used.Add(n) > b.Limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// fits reports whether n more bytes would stay within Limit (without
// reserving them).
func (b *Budget) fits(n int64) bool { return b.Limit <= 0 || b.used.Load()+n <= b.Limit }
