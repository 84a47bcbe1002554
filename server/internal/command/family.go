package command

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/codec"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/rotating"
	"github.com/bloomery/bloomery/server/internal/keyspace"
)

// Commands for every Bloomery family, reached through the codec catalog:
// dynamic filters (blocked Bloom and the others), static filters uploaded
// in the container format or built server-side, and time-rotating dedup
// windows. Keys are persisted in the container format.
func init() {
	register(
		&Spec{Name: "bloomery.reserve", Arity: -5, Flags: fWrite | fDenyOOM, Run: famReserve, Group: "bloomery", Help: "BLOOMERY.RESERVE key kind capacity fpr [KEYED | KEY hex32 | KEYID id]"},
		&Spec{Name: "bloomery.window", Arity: -5, Flags: fWrite | fDenyOOM, Run: famWindow, Group: "bloomery", Help: "BLOOMERY.WINDOW key seconds capacity fpr [GENERATIONS n] [KEYED | KEY hex32 | KEYID id]"},
		&Spec{Name: "bloomery.add", Arity: -3, Flags: fWrite | fDenyOOM, Run: famAdd, Group: "bloomery", Help: "BLOOMERY.ADD key item [item ...]"},
		&Spec{Name: "bloomery.seen", Arity: -3, Flags: fWrite | fDenyOOM, Run: famAdd, Group: "bloomery", Help: "BLOOMERY.SEEN key item [item ...] (add if absent: 1 = first sighting)"},
		// EXISTS takes the write lock: a rotating filter's clock may move
		// between queries, and serialising keeps every family safe.
		&Spec{Name: "bloomery.exists", Arity: -3, Flags: fWrite, Run: famExists, Group: "bloomery", Help: "BLOOMERY.EXISTS key item [item ...]"},
		&Spec{Name: "bloomery.del", Arity: 3, Flags: fWrite, Run: famDel, Group: "bloomery", Help: "BLOOMERY.DEL key item"},
		&Spec{Name: "bloomery.load", Arity: 3, Flags: fWrite | fDenyOOM, Run: famLoad, Group: "bloomery", Help: "BLOOMERY.LOAD key filter-bytes (container format)"},
		&Spec{Name: "bloomery.build", Arity: -5, Flags: fWrite | fDenyOOM, Run: famBuild, Group: "bloomery", Help: "BLOOMERY.BUILD key kind fpr item [item ...]"},
		&Spec{Name: "bloomery.dump", Arity: 2, Flags: fRead, Run: famDump, Group: "bloomery", Help: "BLOOMERY.DUMP key (container format)"},
	)
}

func (x *Ctx) familyAt(key []byte) (keyspace.Family, bool, bool) {
	v := x.Store.Get(key)
	if v == nil {
		return keyspace.Family{}, false, false
	}
	f, ok := v.(keyspace.Family)
	return f, ok, !ok
}

// needAbsent reports whether key is free for a new family filter, else
// replies "item exists" (a family key) or WRONGTYPE (a BF.* or CF.* key).
func (x *Ctx) needAbsent(key []byte) bool {
	if v := x.Store.Get(key); v != nil {
		_, same := v.(keyspace.Family)
		x.existsError(same)
		return false
	}
	return true
}

// fixedFPR reports whether a kind's FPR is set by its fingerprint width
// alone (the static xor and binary fuse filters), whatever the target.
func fixedFPR(k bloomery.Kind) bool {
	switch k {
	case bloomery.KindXor8, bloomery.KindFuse8, bloomery.KindFuse16, bloomery.KindFuse8x4, bloomery.KindFuse16x4:
		return true
	}
	return false
}

// planFor sizes a filter of family fam for n items at FPR p, replying an
// error and returning false when the kind cannot meet p (below 2^-64, a
// size its constructor refuses, or a fixed FPR above p) or the plan does
// not fit the memory limit. It allocates nothing.
func (x *Ctx) planFor(fam codec.Family, n int, p float64, key []byte) bool {
	if p < minErrorRate && !fixedFPR(fam.Kind) {
		x.Error(fmt.Sprintf("ERR %v cannot meet FPR %g: items are hashed to 64 bits, so no filter can deliver an FPR below 2^-64 (%.2g)", fam.Kind, p, minErrorRate))
		return false
	}
	plan, err := fam.Plan(n, p)
	if err != nil {
		msg := strings.TrimSuffix(err.Error(), ": "+bloomery.ErrInvalidParams.Error())
		x.Error(fmt.Sprintf("ERR %v cannot meet FPR %g for %d items: %s", fam.Kind, p, n, msg))
		return false
	}
	if fixedFPR(fam.Kind) && plan.FPR > p {
		x.Error(fmt.Sprintf("ERR %v has a fixed FPR of %.2g (2^%.0f), above the requested %g: use a wider kind (fuse16 gives 2^-16) or one sized by FPR (ribbon, blocked, bloom)", fam.Kind, plan.FPR, math.Log2(plan.FPR), p))
		return false
	}
	return x.admitKey(key, uint64(plan.Bytes))
}

// ErrUnknownKeyID starts the error reply to a KEYID the server's key file
// lacks (the server refuses to start when replay meets it).
const ErrUnknownKeyID = "ERR unknown key id"

// parseKeyOpt reads [KEYED | KEY hex32 | KEYID id] at a[i:]. KEYED draws
// a random key and sets LogArgs so the log records it (replay must reuse
// it); KEY takes the key itself (logged as sent); KEYID names a key of
// the server's key file (Env.Keys), and only the id is logged and, through
// x.keyID, kept with the filter for the snapshot.
func (x *Ctx) parseKeyOpt(a [][]byte, i int) (*[16]byte, int, bool) {
	if i >= len(a) {
		return nil, i, true
	}
	switch {
	case eq(a[i], "keyed"):
		k := new([16]byte)
		rand.Read(k[:])
		x.LogArgs = append(append(append([][]byte(nil), a[:i]...), []byte("KEY"), []byte(hex.EncodeToString(k[:]))), a[i+1:]...)
		return k, i + 1, true
	case eq(a[i], "key") && i+1 < len(a):
		b, err := hex.DecodeString(string(a[i+1]))
		if err != nil || len(b) != 16 {
			x.Error("ERR KEY must be 32 hex digits (a 16-byte SipHash key)")
			return nil, i, false
		}
		k := new([16]byte)
		copy(k[:], b)
		return k, i + 2, true
	case eq(a[i], "keyid") && i+1 < len(a):
		id := string(a[i+1])
		k, ok := x.Keys[id]
		if !ok {
			x.Error(fmt.Sprintf("%s '%s': not in the server's --key-file", ErrUnknownKeyID, trunc(a[i+1], 64)))
			return nil, i, false
		}
		x.keyID = id
		return &k, i + 2, true
	}
	return nil, i, true
}

func hasherFor(key *[16]byte) hashing.Hasher {
	if key != nil {
		return hashing.SipHash(*key)
	}
	return hashing.XXH3(0)
}

func parseSizeFPR(x *Ctx, capB, fprB []byte) (int, float64, bool) {
	n, err := strconv.Atoi(string(capB))
	if err != nil || n < 1 || uint64(n) > 1<<32 {
		x.Error("ERR bad capacity")
		return 0, 0, false
	}
	p, err := strconv.ParseFloat(string(fprB), 64)
	if err != nil || !(p > 0 && p < 1) {
		x.Error(errErrorRange)
		return 0, 0, false
	}
	return n, p, true
}

func (x *Ctx) store(key []byte, f bloomery.Filter, k *[16]byte) bool {
	if !x.admitKey(key, uint64(f.SizeBytes())) {
		return false
	}
	v := keyspace.NewFamily(f, k)
	v.KeyID = x.keyID
	x.Store.Set(key, v)
	return true
}

func familyByName(x *Ctx, name []byte) (codec.Family, bool) {
	kind, err := bloomery.ParseKind(string(name))
	if err == nil {
		fam, err2 := codec.Lookup(kind)
		if err2 == nil {
			return fam, true
		}
	}
	var names []string
	for _, f := range codec.Families() {
		names = append(names, f.Kind.String())
	}
	x.Error(fmt.Sprintf("ERR unknown filter kind '%s' (this build has: %s)", name, strings.Join(names, " ")))
	return codec.Family{}, false
}

func famReserve(x *Ctx) bool {
	a := x.Args
	fam, ok := familyByName(x, a[2])
	if !ok {
		return false
	}
	if fam.New == nil {
		x.Error(fmt.Sprintf("ERR %v is a static family: use BLOOMERY.BUILD or BLOOMERY.LOAD", fam.Kind))
		return false
	}
	n, p, ok := parseSizeFPR(x, a[3], a[4])
	if !ok {
		return false
	}
	k, next, ok := x.parseKeyOpt(a, 5)
	if !ok {
		return false
	}
	if next != len(a) {
		x.Error(errSyntax)
		return false
	}
	if !x.needAbsent(a[1]) || !x.planFor(fam, n, p, a[1]) {
		return false
	}
	f, err := fam.New(n, p, hasherFor(k))
	if err != nil {
		x.Error("ERR " + err.Error())
		return false
	}
	if !x.store(a[1], f, k) {
		return false
	}
	x.W.Status("OK")
	return true
}

func famWindow(x *Ctx) bool {
	a := x.Args
	secs, err := strconv.ParseFloat(string(a[2]), 64)
	if err != nil || !(secs > 0) || secs > 1e9 {
		x.Error("ERR bad window (seconds > 0)")
		return false
	}
	n, p, ok := parseSizeFPR(x, a[3], a[4])
	if !ok {
		return false
	}
	gens := 0
	i := 5
	if i+1 < len(a) && eq(a[i], "generations") {
		g, err := strconv.Atoi(string(a[i+1]))
		if err != nil || g < 2 || g > rotating.MaxGenerations {
			x.Error(fmt.Sprintf("ERR GENERATIONS must be in [2, %d]", rotating.MaxGenerations))
			return false
		}
		gens = g
		i += 2
	}
	k, next, ok := x.parseKeyOpt(a, i)
	if !ok {
		return false
	}
	if next != len(a) {
		x.Error(errSyntax)
		return false
	}
	if !x.needAbsent(a[1]) {
		return false
	}
	window := time.Duration(secs * float64(time.Second))
	ng := gens
	if ng == 0 {
		ng = rotatingDefaultGenerations
	}
	// Each generation is a Bloom filter for n items at p/ng: check that it
	// can be built and that it lasts long enough before allocating.
	if p < minErrorRate {
		x.Error(fmt.Sprintf("ERR rotating cannot meet FPR %g: items are hashed to 64 bits, so no filter can deliver an FPR below 2^-64 (%.2g)", p, minErrorRate))
		return false
	}
	var genBytes int64
	if bf, err := codec.Lookup(bloomery.KindBloom); err == nil {
		plan, err := bf.Plan(n, p/float64(ng))
		if err != nil {
			msg := strings.TrimSuffix(err.Error(), ": "+bloomery.ErrInvalidParams.Error())
			x.Error(fmt.Sprintf("ERR rotating cannot meet FPR %g with %d generations of %d items: %s", p, ng, n, msg))
			return false
		}
		genBytes = plan.Bytes
	}
	if msg := windowTooShort(window/time.Duration(ng), ng, genBytes); msg != "" {
		x.Error(msg)
		return false
	}
	rp := rotating.Params{
		Window: window, Generations: gens,
		Capacity: n, FPR: p, Hasher: hasherFor(k),
	}
	if need, _, err := rotating.Size(rp); err == nil && !x.admitKey(a[1], need) {
		return false
	}
	f, err := rotating.New(rp)
	if err != nil {
		x.Error("ERR " + err.Error())
		return false
	}
	if !x.store(a[1], f, k) {
		return false
	}
	x.W.Status("OK")
	return true
}

// Dedup windows rotate by clearing their oldest generation under the
// keyspace write lock, so a generation must last long enough for that
// clearing to stay a small share of the server's time: at least
// minGeneration, and at least one second per clearRate bytes of one
// generation (64 MiB/s of clearing, about 1 % of one core at memclr's
// several GB/s). Without it a window of microseconds cleared every
// generation on every add.
const (
	minGeneration              = time.Millisecond
	clearRate                  = 64 << 20
	rotatingDefaultGenerations = 6 // rotating.Params' default
)

// windowTooShort returns the error reply for generations of length
// genLen (gens of them, each of genBytes bytes) that rotate faster than
// the limits above allow, or "".
func windowTooShort(genLen time.Duration, gens int, genBytes int64) string {
	need := max(minGeneration, time.Duration(float64(genBytes)/clearRate*float64(time.Second)))
	if genLen >= need {
		return ""
	}
	return fmt.Sprintf("ERR window too short: each of its %d generations would last %v; the minimum is %v for generations of %d bytes (1 ms, and 1 s per 64 MiB, so rotation clears at most 64 MiB/s)", gens, genLen, need.Round(time.Microsecond), genBytes)
}

type ifAbsent interface{ AddIfAbsent([]byte) bool }

// addAlwaysChanges reports whether an add to a filter of kind k may change
// its state even when it answers 0: the multiset families (counting,
// quotient, cuckoo) add a copy of a present item, and a rotating window
// refreshes an item seen only in an older generation. Such an add must be
// logged whatever its reply, or a later delete (or expiry) replayed
// without it leaves the item absent. The set families (Bloom kinds) answer
// 0 only when no bit changed.
func addAlwaysChanges(k bloomery.Kind) bool {
	switch k {
	case bloomery.KindCounting, bloomery.KindQuotient, bloomery.KindCuckoo, bloomery.KindRotating:
		return true
	}
	return false
}

// famAdd runs BLOOMERY.ADD and BLOOMERY.SEEN. SEEN is add-if-absent: an
// item the filter already claims is not added again (on a multiset family
// a second copy would outlive one DEL), so its 0 means nothing changed.
// The command is logged when any item changed the filter.
func famAdd(x *Ctx) bool {
	v, found, wrong := x.familyAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	ad, ok := v.F.(bloomery.Adder)
	if !ok {
		x.Error(fmt.Sprintf("ERR %v filters are static: they cannot take adds", v.F.Kind()))
		return false
	}
	seen := eq(x.Args[0], "bloomery.seen")
	ia, hasIA := v.F.(ifAbsent)
	nl, grows := v.F.(nextLinker)
	items := x.Args[2:]
	old := uint64(v.F.SizeBytes())
	x.W.Array(len(items))
	dirty := false
	always := !seen && addAlwaysChanges(v.F.Kind())
	refused := 0
	for i, it := range items {
		if grows {
			if next := nl.NextLinkBytes(); next > 0 && !v.F.Contains(it) && next+64 > x.memLimit() {
				// The item would append a link that does not fit: it is
				// refused (and left out of the log), the others go on.
				x.W.Error(errOOM)
				x.failed = true
				refused++
				continue
			}
			if refused > 0 {
				items[i-refused] = it
			}
		}
		var added bool
		switch {
		case seen && hasIA:
			added = ia.AddIfAbsent(it)
		case seen:
			added = !v.F.Contains(it) && ad.Add(it)
		default:
			added = ad.Add(it)
		}
		dirty = dirty || added || always
		x.W.Bool(added)
	}
	if now := uint64(v.F.SizeBytes()); now != old {
		x.Store.Grew(old, now)
	}
	if refused > 0 {
		// Items are the tail of x.Args, moved to its front above; x.Args
		// is not used after the command.
		x.LogArgs = x.Args[:len(x.Args)-refused]
	}
	return dirty
}

func famExists(x *Ctx) bool {
	v, found, _ := x.familyAt(x.Args[1])
	items := x.Args[2:]
	x.W.Array(len(items))
	for _, it := range items {
		x.W.Bool(found && v.C.Answer(v.F.Contains(it)))
	}
	return false
}

func famDel(x *Ctx) bool {
	v, found, wrong := x.familyAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	d, ok := v.F.(bloomery.Deleter)
	if !ok {
		x.Error(fmt.Sprintf("ERR %v filters do not support delete", v.F.Kind()))
		return false
	}
	ok = d.Delete(x.Args[2])
	x.W.Bool(ok)
	return ok
}

func famLoad(x *Ctx) bool {
	// Decoders may keep sub-slices of their input, and arguments alias
	// the connection's read buffer: decode a private copy.
	if !x.needAbsent(x.Args[1]) || !x.admitKey(x.Args[1], uint64(len(x.Args[2]))) {
		return false
	}
	data := bytes.Clone(x.Args[2])
	f, err := keyspace.DecodeFilter(data, nil)
	if err != nil {
		msg := "ERR bad filter: " + err.Error()
		if errors.Is(err, bloomery.ErrKeyRequired) {
			msg = "ERR keyed (SipHash) filters cannot be uploaded: the server would need the secret key"
		}
		x.Error(msg)
		return false
	}
	if r, ok := f.(*rotating.Filter); ok {
		if msg := windowTooShort(r.GenerationLength(), r.NumGenerations(), int64(r.SizeBytes()/r.NumGenerations())); msg != "" {
			x.Error(msg)
			return false
		}
	}
	if !x.store(x.Args[1], f, nil) {
		return false
	}
	x.W.Status("OK")
	return true
}

func famBuild(x *Ctx) bool {
	a := x.Args
	fam, ok := familyByName(x, a[2])
	if !ok {
		return false
	}
	p, err := strconv.ParseFloat(string(a[3]), 64)
	if err != nil || !(p > 0 && p < 1) {
		x.Error(errErrorRange)
		return false
	}
	if !x.needAbsent(a[1]) {
		return false
	}
	items := a[4:]
	if !x.planFor(fam, len(items), p, a[1]) {
		return false
	}
	h := hashing.XXH3(0)
	var f bloomery.Filter
	if fam.Build != nil {
		hashes := make([]uint64, len(items))
		h.Sum64Batch(items, hashes)
		f, err = fam.Build(hashes, p, h)
	} else {
		var ad bloomery.Adder
		ad, err = fam.New(len(items), p, h)
		if err == nil {
			for _, it := range items {
				ad.Add(it)
			}
			f = ad
		}
	}
	if err != nil {
		x.Error("ERR build failed: " + err.Error())
		return false
	}
	if !x.store(a[1], f, nil) {
		return false
	}
	x.W.Status("OK")
	return true
}

func famDump(x *Ctx) bool {
	v, found, wrong := x.familyAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	b, err := v.F.AppendBinary(nil)
	if err != nil {
		x.Error("ERR " + err.Error())
		return false
	}
	x.W.Bulk(b)
	return false
}
