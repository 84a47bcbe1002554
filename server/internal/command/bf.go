package command

import (
	"fmt"
	"strconv"

	"github.com/bloomery/bloomery/server/internal/keyspace"
)

// RedisBloom's error texts (8.x), verbatim.
const (
	errNotFound      = "ERR not found"
	errItemExists    = "ERR item exists"
	errBFFull        = "ERR non scaling filter is full"
	errBadErrorRate  = "ERR bad error rate"
	errErrorRange    = "ERR error rate must be in the range (0.000000, 1.000000)"
	errBadCapacity   = "ERR bad capacity"
	errCapRange      = "ERR capacity must be in the range [1, 1073741824]"
	errNoExpansion   = "ERR no expansion"
	errBadExpansion  = "ERR bad expansion"
	errExpRange      = "ERR expansion must be in the range [0, 32768]"
	errNonScalingExp = "Nonscaling filters cannot expand"
	errUnknownArg    = "Unknown argument received"
	errBadData       = "ERR received bad data"
)

func init() {
	register(
		&Spec{Name: "bf.reserve", Arity: -4, Flags: fWrite | fDenyOOM, Run: bfReserve, Group: "bf", Help: "BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]"},
		&Spec{Name: "bf.add", Arity: 3, Flags: fWrite | fDenyOOM, Run: bfAdd, Group: "bf", Help: "BF.ADD key item"},
		&Spec{Name: "bf.madd", Arity: -3, Flags: fWrite | fDenyOOM, Run: bfMAdd, Group: "bf", Help: "BF.MADD key item [item ...]"},
		&Spec{Name: "bf.insert", Arity: -4, Flags: fWrite | fDenyOOM, Run: bfInsert, Group: "bf", Help: "BF.INSERT key [CAPACITY capacity] [ERROR error] [EXPANSION expansion] [NOCREATE] [NONSCALING] ITEMS item [item ...]"},
		&Spec{Name: "bf.exists", Arity: 3, Flags: fRead, Run: bfExists, Group: "bf", Help: "BF.EXISTS key item"},
		&Spec{Name: "bf.mexists", Arity: -3, Flags: fRead, Run: bfMExists, Group: "bf", Help: "BF.MEXISTS key item [item ...]"},
		&Spec{Name: "bf.info", Arity: -2, Flags: fRead, Run: bfInfo, Group: "bf", Help: "BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]"},
		&Spec{Name: "bf.card", Arity: 2, Flags: fRead, Run: bfCard, Group: "bf", Help: "BF.CARD key"},
		&Spec{Name: "bf.scandump", Arity: 3, Flags: fRead, Run: bfScanDump, Group: "bf", Help: "BF.SCANDUMP key iterator"},
		&Spec{Name: "bf.loadchunk", Arity: 4, Flags: fWrite | fDenyOOM, Run: bfLoadChunk, Group: "bf", Help: "BF.LOADCHUNK key iterator data"},
	)
}

// memLimit is how many more bytes the keyspace may take (for creation
// and growth checks), or MaxFilterBytes without a maxmemory.
func (x *Ctx) memLimit() uint64 {
	if x.MaxMemory == 0 || x.Replaying {
		return x.MaxFilterBytes
	}
	if u := x.used(); u < x.MaxMemory {
		return x.MaxMemory - u
	}
	return 0
}

// bloomAt returns the Bloom value at key; wrong is true for another type.
func (x *Ctx) bloomAt(key []byte) (b keyspace.Bloom, found, wrong bool) {
	v := x.Store.Get(key)
	if v == nil {
		return b, false, false
	}
	b, ok := v.(keyspace.Bloom)
	return b, ok, !ok
}

type bfParams struct {
	capacity  uint64
	err       float64
	expansion uint32
}

var bfDefaults = bfParams{keyspace.BloomDefaultCapacity, keyspace.BloomDefaultError, keyspace.BloomDefaultExpansion}

func (x *Ctx) createBloom(key []byte, p bfParams) (keyspace.Bloom, bool) {
	if !x.admitKey(key, keyspace.NewBloomSize(p.capacity, p.err, p.expansion)) {
		return keyspace.Bloom{}, false
	}
	c, err := keyspace.NewBloomFilter(p.capacity, p.err, p.expansion)
	if err != nil {
		x.Error("ERR " + err.Error())
		return keyspace.Bloom{}, false
	}
	b := keyspace.NewBloom(c)
	x.Store.Set(key, b)
	return b, true
}

// existsError is the reply to creating a filter on key value v: "item
// exists" when v is of the type being created (same reports whether it
// is), WRONGTYPE otherwise, as RedisBloom answers.
func (x *Ctx) existsError(same bool) {
	if same {
		x.Error(errItemExists)
	} else {
		x.Error(errWrongType)
	}
}

// minErrorRate is the smallest error rate any filter here can deliver:
// items are hashed to 64 bits, and a query whose hash equals a stored
// item's is a false positive whatever the filter, so no rate below 2^-64
// can be met.
const minErrorRate = 0x1p-64

// errRateTooSmall is the reply to an error rate below minErrorRate.
func errRateTooSmall(what string, rate float64) string {
	return fmt.Sprintf("ERR %s %g is too small: items are hashed to 64 bits, so no filter can deliver an error rate below 2^-64 (%.2g)", what, rate, minErrorRate)
}

func parseErrorRate(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

func parseInt64(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

func bfReserve(x *Ctx) bool {
	a := x.Args
	if len(a) > 7 {
		x.arityError()
		return false
	}
	rate, ok := parseErrorRate(a[2])
	if !ok {
		x.Error(errBadErrorRate)
		return false
	}
	if !(rate > 0 && rate < 1) {
		x.Error(errErrorRange)
		return false
	}
	if rate < minErrorRate {
		x.Error(errRateTooSmall("error rate", rate))
		return false
	}
	rate = min(rate, keyspace.BloomMaxErrorRate)
	capacity, ok := parseInt64(a[3])
	if !ok {
		x.Error(errBadCapacity)
		return false
	}
	if capacity < 1 || capacity > keyspace.BloomMaxCapacity {
		x.Error(errCapRange)
		return false
	}
	nonscaling := false
	expansion := int64(keyspace.BloomDefaultExpansion)
	expAt := -1
	for i := 4; i < len(a); i++ {
		if eq(a[i], "nonscaling") {
			nonscaling = true
		}
		if eq(a[i], "expansion") && expAt < 0 {
			expAt = i
		}
	}
	if expAt >= 0 {
		if expAt+1 >= len(a) {
			x.Error(errNoExpansion)
			return false
		}
		e, ok := parseInt64(a[expAt+1])
		if !ok {
			x.Error(errBadExpansion)
			return false
		}
		if e < 0 || e > keyspace.BloomMaxExpansion {
			x.Error(errExpRange)
			return false
		}
		if nonscaling && e > 0 {
			x.Error(errNonScalingExp)
			return false
		}
		expansion = e
	}
	if nonscaling {
		expansion = 0
	}
	if v := x.Store.Get(a[1]); v != nil {
		_, same := v.(keyspace.Bloom)
		x.existsError(same)
		return false
	}
	if _, ok := x.createBloom(a[1], bfParams{uint64(capacity), rate, uint32(expansion)}); !ok {
		return false
	}
	x.W.Status("OK")
	return true
}

// bfAddOne adds one item, accounting growth against the memory limit.
// It returns the reply value or an error text.
func (x *Ctx) bfAddOne(b keyspace.Bloom, item []byte) (bool, string) {
	return x.bfAddHash(b, b.Hasher().Sum64(item))
}

// bfAddHash is bfAddOne for the item's hash. Only an add that appends a
// link changes the chain's Size, so the memory check and the accounting
// run only when NextLinkBytes says the next new item would grow it.
func (x *Ctx) bfAddHash(b keyspace.Bloom, h uint64) (bool, string) {
	next := b.NextLinkBytes()
	if next == 0 {
		added, err := b.AddHash(h)
		if err != nil {
			return false, errBFFull
		}
		return added, ""
	}
	if next+64 > x.memLimit() {
		if b.ContainsHash(h) {
			return false, ""
		}
		return false, errOOM
	}
	old := b.Size()
	added, err := b.AddHash(h)
	if err != nil {
		return false, errBFFull
	}
	if now := b.Size(); now != old {
		x.Store.Grew(old, now)
	}
	return added, ""
}

func (x *Ctx) bloomForWrite(key []byte) (keyspace.Bloom, bool, bool) {
	b, found, wrong := x.bloomAt(key)
	if wrong {
		x.Error(errWrongType)
		return b, false, false
	}
	created := false
	if !found {
		var ok bool
		if b, ok = x.createBloom(key, bfDefaults); !ok {
			return b, false, false
		}
		created = true
	}
	return b, true, created
}

func bfAdd(x *Ctx) bool {
	b, ok, created := x.bloomForWrite(x.Args[1])
	if !ok {
		return false
	}
	added, errText := x.bfAddOne(b, x.Args[2])
	if errText != "" {
		x.Error(errText)
		return created
	}
	x.W.Bool(added)
	return added || created
}

// bfAddMany adds items and writes the array reply: one boolean per item,
// or the results so far and one error element where an add failed.
//
// The items are hashed a block at a time and added with the chain's
// AddHashBatch, which checks a whole block against every link before
// taking it in order (the memory loads of independent items overlap) and
// gives exactly the replies and bits of one add after another. It stops
// before a new item that needs a new link; that one goes through
// bfAddHash, which checks the memory limit and BloomMaxLinks, grows the
// chain (or fails, ending the command) and accounts the growth.
func (x *Ctx) bfAddMany(b keyspace.Bloom, items [][]byte) bool {
	// The array length must be known first: find where (if anywhere) the
	// adds stop by running them, buffering the results.
	var small [256]bool
	res := small[:]
	if len(items) > len(res) {
		res = make([]bool, len(items))
	}
	errText := ""
	done := 0
	var hs [64]uint64
	hasher := b.Hasher()
	for done < len(items) && errText == "" {
		block := items[done:min(done+len(hs), len(items))]
		hasher.Sum64Batch(block, hs[:len(block)])
		out := res[done : done+len(block)]
		for j := 0; j < len(block); {
			j += b.AddHashBatch(hs[j:len(block)], out[j:])
			if j == len(block) {
				break
			}
			added, e := x.bfAddHash(b, hs[j])
			if e != "" {
				errText = e
				block = block[:j]
				break
			}
			out[j] = added
			j++
		}
		done += len(block)
	}
	added := 0
	for _, ok := range res[:done] {
		if ok {
			added++
		}
	}
	x.logAdded(items, res[:done], added)
	n := done
	if errText != "" {
		n++
	}
	x.W.Array(n)
	x.W.Bools(res[:done])
	if errText != "" {
		x.W.Error(errText)
	}
	return added > 0
}

// logAdded makes the log record, when some but not all items were added,
// the command with only the added items, in order (items is the tail of
// x.Args; they are moved to its front in place, x.Args is not used after
// the command). An item that was not added changed nothing, so replaying
// the added ones on the same state adds each of them again, and the
// replayed filter is the same. The log then grows with what changed, not
// with what was asked: a MADD of 100 mostly present items, the usual
// deduplication load, logs a few items instead of all of them, and the
// log is rewritten that much less often. It also keeps replay from going
// past an item that failed (OOM, a full chain), which the memory gate,
// off during replay, would otherwise let through. When every item was
// added the command as received is logged (no re-encoding); when none
// was but the command created the key, it too.
func (x *Ctx) logAdded(items [][]byte, res []bool, added int) {
	if added == 0 || added == len(items) {
		return
	}
	j := 0
	for i, ok := range res {
		if ok {
			items[j] = items[i]
			j++
		}
	}
	x.LogArgs = x.Args[:len(x.Args)-len(items)+added]
}

func bfMAdd(x *Ctx) bool {
	b, ok, created := x.bloomForWrite(x.Args[1])
	if !ok {
		return false
	}
	return x.bfAddMany(b, x.Args[2:]) || created
}

func bfInsert(x *Ctx) bool {
	a := x.Args
	p := bfDefaults
	nocreate, nonscaling := false, false
	itemsAt := -1
	for i := 2; i < len(a) && itemsAt < 0; i++ {
		o := a[i]
		if len(o) == 0 {
			x.Error(errUnknownArg)
			return false
		}
		c := o[0] | 0x20
		needValue := func() ([]byte, bool) {
			if i+1 >= len(a) {
				x.arityError()
				return nil, false
			}
			i++
			return a[i], true
		}
		switch {
		case c == 'i':
			itemsAt = i + 1
		case c == 'c':
			v, ok := needValue()
			if !ok {
				return false
			}
			n, ok := parseInt64(v)
			if !ok || n < 1 || n > keyspace.BloomMaxCapacity {
				x.Error("Bad capacity")
				return false
			}
			p.capacity = uint64(n)
		case c == 'e' && len(o) > 1 && o[1]|0x20 == 'r':
			v, ok := needValue()
			if !ok {
				return false
			}
			f, ok := parseErrorRate(v)
			if !ok || !(f > 0 && f < 1) {
				x.Error("Bad error rate")
				return false
			}
			if f < minErrorRate {
				x.Error(errRateTooSmall("error rate", f))
				return false
			}
			p.err = min(f, keyspace.BloomMaxErrorRate)
		case c == 'e':
			v, ok := needValue()
			if !ok {
				return false
			}
			n, ok := parseInt64(v)
			if !ok || n < 0 || n > keyspace.BloomMaxExpansion {
				x.Error("Bad expansion")
				return false
			}
			p.expansion = uint32(n)
			if n == 0 {
				nonscaling = true
			}
		case c == 'n' && len(o) > 2 && o[2]|0x20 == 'c':
			nocreate = true
		case c == 'n':
			nonscaling = true
		default:
			x.Error(errUnknownArg)
			return false
		}
	}
	if itemsAt < 0 || itemsAt >= len(a) {
		x.arityError()
		return false
	}
	if nonscaling {
		p.expansion = 0
	}
	b, found, wrong := x.bloomAt(a[1])
	if wrong {
		x.Error(errWrongType)
		return false
	}
	created := false
	if !found {
		if nocreate {
			x.Error(errNotFound)
			return false
		}
		var ok bool
		if b, ok = x.createBloom(a[1], p); !ok {
			return false
		}
		created = true
	}
	return x.bfAddMany(b, a[itemsAt:]) || created
}

func bfExists(x *Ctx) bool {
	b, found, _ := x.bloomAt(x.Args[1])
	x.W.Bool(found && b.C.Answer(b.Contains(x.Args[2])))
	return false
}

func bfMExists(x *Ctx) bool {
	b, found, _ := x.bloomAt(x.Args[1])
	items := x.Args[2:]
	x.W.Array(len(items))
	if !found {
		for range items {
			x.W.Bool(false)
		}
		return false
	}
	var buf [64]bool
	negatives := uint64(0)
	for len(items) > 0 {
		n := min(len(items), len(buf))
		b.ContainsBatch(items[:n], buf[:n])
		for _, ok := range buf[:n] {
			if !ok {
				negatives++
			}
		}
		x.W.Bools(buf[:n])
		items = items[n:]
	}
	// One atomic add per command: the counter is shared by every
	// connection querying this key.
	b.C.Negatives.Add(negatives)
	return false
}

var bfInfoFields = [...]struct{ word, name string }{
	{"capacity", "Capacity"},
	{"size", "Size"},
	{"filters", "Number of filters"},
	{"items", "Number of items inserted"},
	{"expansion", "Expansion rate"},
}

func (x *Ctx) bfInfoValue(b keyspace.Bloom, field int) {
	switch field {
	case 0:
		x.W.Int(int64(b.Capacity()))
	case 1:
		x.W.Int(int64(b.Size()))
	case 2:
		x.W.Int(int64(b.NumLinks()))
	case 3:
		x.W.Int(int64(b.Items()))
	case 4:
		if b.Expansion() == 0 {
			x.W.Null()
		} else {
			x.W.Int(int64(b.Expansion()))
		}
	}
}

func bfInfo(x *Ctx) bool {
	if len(x.Args) > 3 {
		x.arityError()
		return false
	}
	b, found, wrong := x.bloomAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	if len(x.Args) == 3 {
		for i, f := range bfInfoFields {
			if eq(x.Args[2], f.word) {
				if x.W.Proto >= 3 {
					x.W.Map(1)
					x.W.BulkString(f.name)
				} else {
					x.W.Array(1)
				}
				x.bfInfoValue(b, i)
				return false
			}
		}
		x.Error("Invalid information value")
		return false
	}
	x.W.Map(len(bfInfoFields))
	for i, f := range bfInfoFields {
		x.W.BulkString(f.name)
		x.bfInfoValue(b, i)
	}
	return false
}

func bfCard(x *Ctx) bool {
	b, found, wrong := x.bloomAt(x.Args[1])
	switch {
	case wrong:
		x.Error(errWrongType)
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(int64(b.Items()))
	}
	return false
}

func bfScanDump(x *Ctx) bool {
	b, found, wrong := x.bloomAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	it, ok := parseInt64(x.Args[2])
	if !ok {
		x.Error("Second argument must be numeric")
		return false
	}
	x.W.Array(2)
	switch {
	case it == 0:
		x.W.Int(1)
		x.W.Bulk(b.AppendHeader(nil))
	case it < 0:
		x.W.Int(0)
		x.W.BulkString("")
	default:
		chunk := b.Chunk(uint64(it - 1))
		if chunk == nil {
			x.W.Int(0)
			x.W.BulkString("")
		} else {
			x.W.Int(it + int64(len(chunk)))
			x.W.Bulk(chunk)
		}
	}
	return false
}

func bfLoadChunk(x *Ctx) bool {
	it, ok := parseInt64(x.Args[2])
	if !ok {
		x.Error("ERR Second argument must be numeric")
		return false
	}
	b, found, wrong := x.bloomAt(x.Args[1])
	if wrong {
		x.Error(errWrongType)
		return false
	}
	data := x.Args[3]
	if !found {
		if it != 1 {
			x.Error(errNotFound)
			return false
		}
		c, err := keyspace.BloomFromHeader(data, x.budgetFor(x.Args[1]))
		if err != nil {
			x.Error(errBadData)
			return false
		}
		x.Store.Set(x.Args[1], keyspace.NewBloom(c))
		x.W.Status("OK")
		return true
	}
	off := it - int64(len(data)) - 1
	if off < 0 || b.LoadChunk(uint64(off), data) != nil {
		x.Error(errBadData)
		return false
	}
	x.W.Status("OK")
	return true
}
