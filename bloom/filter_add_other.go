//go:build !amd64 || purego

package bloom

func addHash(f *Filter, h uint64) bool { return addHashGo(f, h) }
