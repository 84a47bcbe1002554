//go:build !amd64 || purego

package bloom

func blockedAddKey(f *Blocked, p *byte, n int) bool { return blockedAddKeyGo(f, p, n) }

func blockedContainsKey(f *Blocked, p *byte, n int) bool { return blockedContainsKeyGo(f, p, n) }

func blockedAddHash(f *Blocked, h uint64) bool { return f.addHashGo(h) }
