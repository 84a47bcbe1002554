//go:build !purego

package bloom

// addHash is (*Filter).AddHash in assembly (filter_add_amd64.s); it does
// exactly what addHashGo does.
//
//go:noescape
func addHash(f *Filter, h uint64) bool
