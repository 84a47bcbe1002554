//go:build !linux

package cuckoo

// newTable returns n zero bytes for a table (no paging advice outside Linux).
func newTable(n uint64) []byte { return make([]byte, n) }
