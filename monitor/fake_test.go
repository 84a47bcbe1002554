package monitor

import (
	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
)

// fake is an exact set that also answers "maybe" for a fixed fraction of
// absent hashes (chosen by the hash's top bits), so a test knows the true
// false-positive rate exactly. est is what EstimatedFPR reports.
type fake struct {
	set    map[uint64]bool
	fprQ16 uint64 // false-positive rate in units of 2^-16
	est    float64
	design float64
}

func newFake(fpr float64) *fake {
	return &fake{set: map[uint64]bool{}, fprQ16: uint64(fpr * 65536), est: fpr, design: fpr}
}

var _ bloomery.Adder = (*fake)(nil)

func (f *fake) Kind() bloomery.Kind                   { return bloomery.KindBloom }
func (f *fake) Contains(k []byte) bool                { return f.ContainsHash(hashing.XXH3(0).Sum64(k)) }
func (f *fake) ContainsString(k string) bool          { return f.ContainsHash(hashing.XXH3(0).Sum64String(k)) }
func (f *fake) ContainsHash(h uint64) bool            { return f.set[h] || hashing.Mix64(h)>>48 < f.fprQ16 }
func (f *fake) Add(k []byte) bool                     { return f.AddHash(hashing.XXH3(0).Sum64(k)) }
func (f *fake) AddString(k string) bool               { return f.AddHash(hashing.XXH3(0).Sum64String(k)) }
func (f *fake) AddHash(h uint64) bool                 { n := !f.ContainsHash(h); f.set[h] = true; return n }
func (f *fake) Cap() int                              { return 1000 }
func (f *fake) Len() int                              { return len(f.set) }
func (f *fake) SizeBytes() int                        { return 8 * len(f.set) }
func (f *fake) EstimatedFPR() float64                 { return f.est }
func (f *fake) AppendBinary(b []byte) ([]byte, error) { return append(b, "fake"...), nil }
func (f *fake) MarshalBinary() ([]byte, error)        { return f.AppendBinary(nil) }
func (f *fake) Stats() bloomery.Stats {
	return bloomery.Stats{Kind: bloomery.KindBloom, Len: len(f.set), DesignFPR: f.design, EstimatedFPR: f.est,
		Overfilled: bloomery.IsOverfilled(f.est, f.design)}
}
