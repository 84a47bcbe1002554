package command

func init() {
	register(
		&Spec{Name: "bloomery.stats", Arity: 2, Flags: fRead, Run: bloomeryStats, Group: "bloomery", Help: "BLOOMERY.STATS key"},
		&Spec{Name: "bloomery.fp", Arity: 3, Flags: fWrite, Run: bloomeryFP, Group: "bloomery", Help: "BLOOMERY.FP key item"},
	)
}

// bloomeryStats reports what RedisBloom's INFO lacks: fill, design and
// estimated FPR, the overfill alarm and the false positives clients
// reported. It reads the whole filter (O(size)).
func bloomeryStats(x *Ctx) bool {
	v := x.Store.Get(x.Args[1])
	if v == nil {
		x.Error(errNotFound)
		return false
	}
	st := v.Stats()
	w := x.W
	w.Map(11)
	w.BulkString("type")
	w.BulkString(v.Type())
	w.BulkString("items")
	w.Int(int64(st.Len))
	w.BulkString("capacity")
	w.Int(int64(st.Cap))
	w.BulkString("size")
	w.Int(int64(st.SizeBytes))
	w.BulkString("fill")
	w.Double(st.FillRatio)
	w.BulkString("design_fpr")
	w.Double(st.DesignFPR)
	w.BulkString("estimated_fpr")
	w.Double(st.EstimatedFPR)
	w.BulkString("overfilled")
	w.Bool(st.Overfilled)
	w.BulkString("reported_false_positives")
	w.Int(int64(v.Counters().Reported))
	w.BulkString("negative_answers")
	w.Int(int64(v.Counters().Negatives.Load()))
	w.BulkString("measured_fpr")
	if m := v.Counters().MeasuredFPR(); m >= 0 {
		w.Double(m)
	} else {
		w.Null()
	}
	return false
}

// bloomeryFP records a false positive the client confirmed against its
// authoritative data: the filter must claim the item. The reply is the
// key's total of reported false positives.
func bloomeryFP(x *Ctx) bool {
	v := x.Store.Get(x.Args[1])
	if v == nil {
		x.Error(errNotFound)
		return false
	}
	var claims bool
	switch f := v.(type) {
	case interface{ Contains([]byte) bool }:
		claims = f.Contains(x.Args[2])
	}
	if !claims {
		x.Error("ERR the filter does not claim this item; it is a true negative, not a false positive")
		return false
	}
	c := v.Counters()
	c.Reported++
	x.W.Int(int64(c.Reported))
	return true
}
