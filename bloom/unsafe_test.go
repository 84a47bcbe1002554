package bloom

import (
	"runtime"
	"unsafe"
)

func uintptrOf(w []uint64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(w))) }

type runtimeMem struct{}

func (runtimeMem) heap() int64 {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return int64(s.TotalAlloc)
}
