//go:build !amd64 || purego

package ribbon

// bucket adds the equations of one bucket's keys (bucketGeneric). It
// reports false when the system became inconsistent.
func (z *bander) bucket(keys []uint64) bool { return z.bucketGeneric(keys, 0) }
