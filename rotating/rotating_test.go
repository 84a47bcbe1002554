package rotating

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/internal/filtertest"
)

// fakeClock is a manual clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTest(t testing.TB, p Params) (*Filter, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: epoch}
	p.Clock = c.Now
	f, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestSizingFromRate(t *testing.T) {
	f, _ := newTest(t, Params{Window: time.Hour, Generations: 6, Rate: 100, FPR: 0.01})
	if f.GenerationLength() != 10*time.Minute || f.GenerationCapacity() != 60000 || f.Cap() != 360000 {
		t.Fatalf("generation %v, capacity %d, cap %d", f.GenerationLength(), f.GenerationCapacity(), f.Cap())
	}
	for _, g := range f.Generations() {
		if g.Capacity != 60000 || g.DesignFPR > 0.01/6 || g.DesignFPR < 0.9*0.01/6 {
			t.Fatalf("generation %+v: want capacity 60000 at FPR <= 1%%/6", g)
		}
	}
}

// TestExpiry: a key is remembered for between W(N-1)/N and W, whatever
// its position within its generation.
func TestExpiry(t *testing.T) {
	const W, N = time.Hour, 6
	f, c := newTest(t, Params{Window: W, Generations: N, Capacity: 10000, FPR: 0.001})
	minKeep, maxKeep := W*(N-1)/N, W
	shortest, longest := W, time.Duration(0)
	step := 37*time.Second + 123*time.Millisecond // walks every offset within a generation
	for i := range 200 {
		key := fmt.Sprintf("event-%d", i)
		if !f.AddIfAbsentString(key) {
			t.Fatalf("%s: first sighting reported as duplicate", key)
		}
		added := c.t
		// Probe the lifetime without rotating (Contains is read-only),
		// then jump back.
		c.t = added.Add(minKeep - time.Nanosecond)
		if !f.ContainsString(key) {
			t.Fatalf("%s forgotten before W(N-1)/N", key)
		}
		c.t = added.Add(maxKeep)
		if f.ContainsString(key) {
			t.Fatalf("%s remembered for W or more", key)
		}
		// Find the expiry to 1 s.
		lo, hi := minKeep, maxKeep
		for hi-lo > time.Second {
			mid := (lo + hi) / 2
			c.t = added.Add(mid)
			if f.ContainsString(key) {
				lo = mid
			} else {
				hi = mid
			}
		}
		shortest, longest = min(shortest, lo), max(longest, lo)
		c.t = added.Add(step)
	}
	// The walk covers the whole generation: keys added just before a
	// rotation live close to W(N-1)/N, just after it close to W.
	if shortest > minKeep+time.Minute || longest < maxKeep-time.Minute {
		t.Errorf("lifetimes span [%v, %v], want close to [%v, %v]", shortest, longest, minKeep, maxKeep)
	}
}

func TestRotationAndJumps(t *testing.T) {
	f, c := newTest(t, Params{Window: time.Hour, Generations: 6, Capacity: 1000, FPR: 0.001})
	f.AddString("a")
	c.Advance(25 * time.Minute)
	f.AddString("b") // rotates twice
	live := 0
	for _, g := range f.Generations() {
		if g.Live {
			live++
		}
	}
	if live != 3 || !f.ContainsString("a") || !f.ContainsString("b") {
		t.Fatalf("after 25 min: %d live generations, a=%v b=%v", live, f.ContainsString("a"), f.ContainsString("b"))
	}
	if f.Len() != 2 {
		t.Fatalf("Len %d, want 2", f.Len())
	}
	// A clock that steps back changes nothing.
	c.Advance(-20 * time.Minute)
	f.AddString("c")
	if !f.ContainsString("a") || !f.ContainsString("b") || !f.ContainsString("c") {
		t.Fatal("keys lost when the clock stepped back")
	}
	// A jump of many windows clears everything (N rotations, not
	// millions).
	c.Advance(1000 * time.Hour)
	f.Rotate()
	if f.ContainsString("a") || f.ContainsString("b") || f.ContainsString("c") || f.Len() != 0 {
		t.Fatal("keys survived a jump far past the window")
	}
	for _, g := range f.Generations() {
		if g.Len != 0 {
			t.Fatalf("generation not cleared: %+v", g)
		}
	}
}

func TestAddRefreshesAddIfAbsentDoesNot(t *testing.T) {
	f, c := newTest(t, Params{Window: time.Hour, Generations: 6, Capacity: 1000, FPR: 0.0001})
	if !f.AddString("r") || !f.AddIfAbsentString("s") {
		t.Fatal("first adds not new")
	}
	c.Advance(40 * time.Minute)
	if f.AddString("r") || f.AddIfAbsentString("s") {
		t.Fatal("second sightings reported new")
	}
	c.Advance(25 * time.Minute) // 65 min after the first sighting
	f.Rotate()
	if !f.ContainsString("r") {
		t.Fatal("Add did not refresh the key's expiry")
	}
	if f.ContainsString("s") {
		t.Fatal("AddIfAbsent of a duplicate extended its expiry")
	}
	if !f.AddIfAbsentString("s") {
		t.Fatal("expired key not accepted again")
	}
}

func TestOverfillReported(t *testing.T) {
	var events []GenerationInfo
	f, c := newTest(t, Params{Window: time.Hour, Generations: 4, Capacity: 1000, FPR: 0.01,
		OnOverfill: func(g GenerationInfo) { events = append(events, g) }})
	for i := range 1000 {
		f.AddString(fmt.Sprint(i))
	}
	if len(events) != 0 || f.Stats().Overfilled {
		t.Fatal("overfill reported at capacity")
	}
	for i := 1000; i < 3000; i++ {
		f.AddString(fmt.Sprint(i))
	}
	if len(events) != 1 || f.OverfillEvents() != 1 || events[0].Len != 1001 {
		t.Fatalf("callback %d times (%+v), events %d; want once at 1001 keys", len(events), events, f.OverfillEvents())
	}
	s := f.Stats()
	if !s.Overfilled || s.Extra[3].Name != "overfilled_generations" || s.Extra[3].Value != 1 || s.Extra[4].Value < 2.5 {
		t.Fatalf("stats %+v", s)
	}
	g := f.Generations()[0]
	if !g.Overfilled || g.EstimatedFPR < 2*g.DesignFPR {
		t.Fatalf("newest generation %+v", g)
	}
	// The next generation starts clean and is reported separately.
	c.Advance(15 * time.Minute)
	for i := range 1500 {
		f.AddString(fmt.Sprint("next-", i))
	}
	if len(events) != 2 || f.OverfillEvents() != 2 {
		t.Fatalf("second generation's overfill: %d callbacks", len(events))
	}
	// Once both overfilled generations expire, Stats is clean again, but
	// the cumulative count stays.
	c.Advance(2 * time.Hour)
	f.Rotate()
	if s := f.Stats(); s.Overfilled || s.Extra[5].Value != 2 {
		t.Fatalf("after expiry: %+v", s)
	}
}

// TestFPR fills every generation of a window at its capacity (10^6 keys in
// all) and measures the window's FPR over 10^6 absent probes.
func TestFPR(t *testing.T) {
	total, probes := 1_000_000, 1_000_000
	if filtertest.Short() {
		total, probes = 120_000, 200_000
	}
	full := total
	for _, blocked := range []bool{false, true} {
		total := full
		if blocked {
			total = full * 3 / 10 // the variant at a smaller size
		}
		const N = 6
		f, c := newTest(t, Params{Window: time.Hour, Generations: N, Capacity: total / N, FPR: 0.01, Blocked: blocked})
		keys := filtertest.Hashes(total, 1)
		for g := range N {
			for _, h := range keys[g*total/N : (g+1)*total/N] {
				f.AddHash(h)
			}
			if g < N-1 {
				c.Advance(10 * time.Minute)
			}
		}
		filtertest.NoFalseNegatives(t, "window", f.ContainsHash, keys)
		got := filtertest.MeasureFPR(f.ContainsHash, probes, 2)
		name := fmt.Sprintf("blocked=%v", blocked)
		filtertest.CheckFPR(t, name, got, f.EstimatedFPR(), 0.15, probes)
		// Sized at P/N each, the window's design is 1-(1-P/N)^N, just
		// under P: allow 3 sigma of sampling noise above P.
		if got > 0.01+3*math.Sqrt(0.01/float64(probes)) {
			t.Errorf("%s: measured %.4f%% above the 1%% target", name, 100*got)
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		g, err := Decode(data, hashing.Expect{}, Options{Clock: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		filtertest.NoFalseNegatives(t, "decoded", g.ContainsHash, keys)
		if again, _ := g.MarshalBinary(); !bytes.Equal(again, data) {
			t.Fatal("re-encoding differs")
		}
		// The oldest generation expires after one more generation length.
		c.Advance(10 * time.Minute)
		g.Rotate()
		old := keys[:total/N]
		still := 0
		for _, h := range old {
			if g.ContainsHash(h) {
				still++
			}
		}
		if rate := float64(still) / float64(len(old)); rate > 0.012 {
			t.Errorf("%s: %.2f%% of the expired generation's keys still claimed (FPR of the rest)", name, 100*rate)
		}
		filtertest.NoFalseNegatives(t, "after rotation", g.ContainsHash, keys[total/N:])
	}
}

func TestInvalidParams(t *testing.T) {
	for _, p := range []Params{
		{Window: 0, Capacity: 10, FPR: 0.01},
		{Window: time.Hour, Generations: 1, Capacity: 10, FPR: 0.01},
		{Window: time.Hour, Capacity: 10, FPR: 1},
		{Window: time.Hour, FPR: 0.01},
		{Window: time.Hour, Capacity: 10, Rate: 1, FPR: 0.01},
		{Window: time.Hour, Rate: math.Inf(1), FPR: 0.01},
		{Window: 3, Generations: 6, Capacity: 10, FPR: 0.01},
	} {
		if _, err := New(p); !errors.Is(err, bloomery.ErrInvalidParams) {
			t.Errorf("%+v: err = %v", p, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	f, _ := newTest(t, Params{Window: time.Minute, Generations: 3, Capacity: 20, FPR: 0.01})
	f.AddString("x")
	data, _ := f.MarshalBinary()
	for i := range data {
		if _, err := Decode(data[:i], hashing.Expect{}, Options{}); !errors.Is(err, bloomery.ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", i, err)
		}
	}
	if _, err := Decode(append(bytes.Clone(data), 1), hashing.Expect{}, Options{}); !errors.Is(err, bloomery.ErrCorrupt) {
		t.Fatal("trailing byte accepted")
	}
	k, _ := newTest(t, Params{Window: time.Minute, Generations: 3, Capacity: 20, FPR: 0.01, Hasher: hashing.SipHash([16]byte{7})})
	kd, _ := k.MarshalBinary()
	if _, err := Decode(kd, hashing.Expect{}, Options{}); !errors.Is(err, bloomery.ErrKeyRequired) {
		t.Fatalf("keyed without key: %v", err)
	}
	if _, err := Decode(kd, hashing.Want(hashing.SipHash([16]byte{7})), Options{}); err != nil {
		t.Fatalf("keyed with key: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	f, _ := newTest(t, Params{Window: time.Hour, Generations: 6, Capacity: 1 << 20, FPR: 0.01})
	k := []byte("key")
	var h uint64
	filtertest.ZeroAllocs(t, "AddHash", func() { h++; f.AddHash(h) })
	filtertest.ZeroAllocs(t, "Contains", func() { f.Contains(k) })
	filtertest.ZeroAllocs(t, "AddIfAbsent", func() { f.AddIfAbsent(k) })
}

func BenchmarkAddIfAbsent(b *testing.B) {
	f, c := newTest(b, Params{Window: time.Hour, Generations: 6, Capacity: 200_000, FPR: 0.01})
	s := filtertest.SplitMix64(1)
	i := 0
	for b.Loop() {
		f.AddIfAbsentHash(s.Next())
		if i++; i%200_000 == 0 {
			c.Advance(10 * time.Minute) // one generation per 200k keys
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
}

func BenchmarkContains(b *testing.B) {
	f, c := newTest(b, Params{Window: time.Hour, Generations: 6, Capacity: 200_000, FPR: 0.01})
	for g := range 6 {
		for _, h := range filtertest.Hashes(200_000, uint64(g+1)) {
			f.AddHash(h)
		}
		c.Advance(10 * time.Minute)
	}
	c.Advance(-10 * time.Minute)
	probe := filtertest.Hashes(1<<16, 99)
	i := 0
	for b.Loop() {
		f.ContainsHash(probe[i&(1<<16-1)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
}
