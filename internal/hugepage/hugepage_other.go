//go:build !linux

package hugepage

// Advise does nothing outside Linux.
func Advise[E any](s []E, min uintptr) error { return nil }

// Collapse does nothing outside Linux.
func Collapse[E any](s []E, min uintptr) error { return nil }

// Populate does nothing outside Linux.
func Populate[E any](s []E, min uintptr) error { return nil }
