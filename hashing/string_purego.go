//go:build purego

package hashing

func stringBytes(s string) []byte { return []byte(s) }
