//go:build !amd64 || purego

package bloom

// haveMULX is false: there is no containsKey assembly here.
const haveMULX = false

func addHash(f *Filter, h uint64) bool { return addHashGo(f, h) }

func addKey(f *Filter, p *byte, n int) bool { return addKeyGo(f, p, n) }

func containsKey(f *Filter, p *byte, n int) bool { return containsKeyGo(f, p, n) }

func containsHash(f *Filter, h uint64, _ uintptr) bool { return containsHashGo(f, h, 0) }

func keyHash(f *Filter, p *byte, n int) (h uint64, ok bool) { return 0, false }
