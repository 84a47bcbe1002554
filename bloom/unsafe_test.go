package bloom

import "unsafe"

func uintptrOf(w []uint64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(w))) }
