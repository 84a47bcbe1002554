//go:build !linux

package bloom

// adviseHugePages is a no-op outside Linux.
func adviseHugePages([]uint64) {}
