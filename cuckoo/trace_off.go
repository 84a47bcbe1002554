//go:build !cuckootrace

package cuckoo

// touch and traceInsert are hooks for the cuckootrace build tag, which
// counts the cache lines each insert reads (see trace_on.go). In normal
// builds they are empty and inlined away.
func touch(off uint64) {}

func traceInsert() {}
