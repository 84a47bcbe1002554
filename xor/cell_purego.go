//go:build purego

package xor

// cell returns fps[i], bounds checked (see cell_unsafe.go).
func cell(fps []uint8, i uint64) uint8 { return fps[i] }
