package wire

import "math"

func float64bits(v float64) uint64     { return math.Float64bits(v) }
func float64frombits(v uint64) float64 { return math.Float64frombits(v) }
