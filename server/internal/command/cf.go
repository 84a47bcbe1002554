package command

import (
	"errors"
	"fmt"

	"github.com/bloomery/bloomery/server/internal/keyspace"
	"github.com/bloomery/bloomery/server/internal/rbcuckoo"
)

func init() {
	register(
		&Spec{Name: "cf.reserve", Arity: -3, Flags: fWrite | fDenyOOM, Run: cfReserve, Group: "cf", Help: "CF.RESERVE key capacity [BUCKETSIZE bucketsize] [MAXITERATIONS maxiterations] [EXPANSION expansion]"},
		&Spec{Name: "cf.add", Arity: 3, Flags: fWrite | fDenyOOM, Run: cfAdd, Group: "cf", Help: "CF.ADD key item"},
		&Spec{Name: "cf.addnx", Arity: 3, Flags: fWrite | fDenyOOM, Run: cfAdd, Group: "cf", Help: "CF.ADDNX key item"},
		&Spec{Name: "cf.insert", Arity: -4, Flags: fWrite | fDenyOOM, Run: cfInsert, Group: "cf", Help: "CF.INSERT key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]"},
		&Spec{Name: "cf.insertnx", Arity: -4, Flags: fWrite | fDenyOOM, Run: cfInsert, Group: "cf", Help: "CF.INSERTNX key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]"},
		&Spec{Name: "cf.exists", Arity: 3, Flags: fRead, Run: cfExists, Group: "cf", Help: "CF.EXISTS key item"},
		&Spec{Name: "cf.mexists", Arity: -3, Flags: fRead, Run: cfMExists, Group: "cf", Help: "CF.MEXISTS key item [item ...]"},
		&Spec{Name: "cf.count", Arity: 3, Flags: fRead, Run: cfCount, Group: "cf", Help: "CF.COUNT key item"},
		&Spec{Name: "cf.del", Arity: 3, Flags: fWrite, Run: cfDel, Group: "cf", Help: "CF.DEL key item"},
		&Spec{Name: "cf.info", Arity: 2, Flags: fRead, Run: cfInfo, Group: "cf", Help: "CF.INFO key"},
		&Spec{Name: "cf.compact", Arity: 2, Flags: fWrite, Run: cfCompact, Group: "cf", Help: "CF.COMPACT key"},
		&Spec{Name: "cf.scandump", Arity: 3, Flags: fRead, Run: cfScanDump, Group: "cf", Help: "CF.SCANDUMP key iterator"},
		&Spec{Name: "cf.loadchunk", Arity: 4, Flags: fWrite | fDenyOOM, Run: cfLoadChunk, Group: "cf", Help: "CF.LOADCHUNK key iterator data"},
	)
}

func (x *Ctx) cuckooAt(key []byte) (c keyspace.Cuckoo, found, wrong bool) {
	v := x.Store.Get(key)
	if v == nil {
		return c, false, false
	}
	c, ok := v.(keyspace.Cuckoo)
	return c, ok, !ok
}

var cfDefaults = rbcuckoo.Params{
	Capacity: rbcuckoo.DefaultCapacity, BucketSize: rbcuckoo.DefaultBucketSize,
	MaxIterations: rbcuckoo.DefaultMaxIterations, Expansion: rbcuckoo.DefaultExpansion,
}

func (x *Ctx) createCuckoo(key []byte, p rbcuckoo.Params) (keyspace.Cuckoo, bool) {
	if !x.admitKey(key, rbcuckoo.SlotBytes(p)+56) {
		return keyspace.Cuckoo{}, false
	}
	f, err := rbcuckoo.New(p)
	if err != nil {
		x.Error("ERR " + err.Error())
		return keyspace.Cuckoo{}, false
	}
	c := keyspace.NewCuckoo(f)
	x.Store.Set(key, c)
	return c, true
}

func cfReserve(x *Ctx) bool {
	a := x.Args
	if len(a)%2 == 0 {
		x.arityError()
		return false
	}
	capacity, ok := parseInt64(a[2])
	if !ok {
		x.Error("Bad capacity")
		return false
	}
	p := cfDefaults
	for i := 3; i+1 < len(a); i += 2 {
		var name string
		var lo, hi int64
		var dst *uint16
		switch {
		case eq(a[i], "bucketsize"):
			name, lo, hi, dst = "BUCKETSIZE", 1, 255, &p.BucketSize
		case eq(a[i], "maxiterations"):
			name, lo, hi, dst = "MAXITERATIONS", 1, 65535, &p.MaxIterations
		case eq(a[i], "expansion"):
			name, lo, hi, dst = "EXPANSION", 0, rbcuckoo.MaxExpansion, &p.Expansion
		default:
			continue
		}
		v, ok := parseInt64(a[i+1])
		if !ok {
			x.Error("Couldn't parse " + name)
			return false
		}
		if v < lo || v > hi {
			x.Error(fmt.Sprintf("%s: value must be in the range [%d, %d]", name, lo, hi))
			return false
		}
		*dst = uint16(v)
	}
	if capacity < 2*int64(p.BucketSize) || capacity > rbcuckoo.MaxCapacity {
		x.Error("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]")
		return false
	}
	p.Capacity = uint64(capacity)
	if v := x.Store.Get(a[1]); v != nil {
		_, same := v.(keyspace.Cuckoo)
		x.existsError(same)
		return false
	}
	if _, ok := x.createCuckoo(a[1], p); !ok {
		return false
	}
	x.W.Status("OK")
	return true
}

// cfAddOne inserts one item: 1 added, 0 present (nx only), or an error.
// A sub-filter is added only if it fits under the memory limit.
func (x *Ctx) cfAddOne(c keyspace.Cuckoo, item []byte, nx bool) (bool, error) {
	old := c.Size()
	var added bool
	var err error
	if nx {
		added, err = c.AddNXNoGrow(item)
	} else {
		err = c.AddNoGrow(item)
		added = err == nil
	}
	if errors.Is(err, rbcuckoo.ErrNeedsGrowth) {
		if c.NextSubBytes()+16 > x.memLimit() {
			return false, errOOMValue
		}
		if nx {
			added, err = c.AddNX(item)
		} else {
			err = c.Add(item)
			added = err == nil
		}
	}
	if now := c.Size(); now != old {
		x.Store.Grew(old, now)
	}
	return added, err
}

//lint:ignore ST1005 Redis's reply text, sent to clients as is
var errOOMValue = errors.New(errOOM)

func (x *Ctx) cuckooForWrite(key []byte, p rbcuckoo.Params, nocreate bool) (keyspace.Cuckoo, bool, bool) {
	c, found, wrong := x.cuckooAt(key)
	if wrong {
		x.Error(errWrongType)
		return c, false, false
	}
	if found {
		return c, true, false
	}
	if nocreate {
		x.Error(errNotFound)
		return c, false, false
	}
	c, ok := x.createCuckoo(key, p)
	return c, ok, ok
}

func cfAdd(x *Ctx) bool {
	nx := eq(x.Args[0], "cf.addnx")
	c, ok, created := x.cuckooForWrite(x.Args[1], cfDefaults, false)
	if !ok {
		return false
	}
	if err := c.CheckExpansions(); err != nil {
		x.Error(err.Error())
		return created
	}
	added, err := x.cfAddOne(c, x.Args[2], nx)
	if err != nil {
		x.Error(err.Error())
		return created
	}
	x.W.Bool(added)
	return added || created
}

func cfInsert(x *Ctx) bool {
	a := x.Args
	nx := eq(a[0], "cf.insertnx")
	p := cfDefaults
	nocreate := false
	itemsAt := -1
	for i := 2; i < len(a) && itemsAt < 0; i++ {
		switch {
		case eq(a[i], "items"):
			itemsAt = i + 1
		case eq(a[i], "capacity"):
			if i+1 >= len(a) {
				x.arityError()
				return false
			}
			i++
			n, ok := parseInt64(a[i])
			if !ok {
				x.Error("Bad capacity")
				return false
			}
			if n < 2*int64(p.BucketSize) || n > rbcuckoo.MaxCapacity {
				x.Error("Capacity must be in the range [cf-bucket-size * 2, 1073741824]")
				return false
			}
			p.Capacity = uint64(n)
		case eq(a[i], "nocreate"):
			nocreate = true
		default:
			x.Error(errUnknownArg)
			return false
		}
	}
	if itemsAt < 0 || itemsAt >= len(a) {
		x.arityError()
		return false
	}
	c, ok, created := x.cuckooForWrite(a[1], p, nocreate)
	if !ok {
		return false
	}
	if err := c.CheckExpansions(); err != nil {
		x.Error(err.Error())
		return created
	}
	items := a[itemsAt:]
	x.W.Array(len(items))
	dirty := created
	for _, it := range items {
		added, err := x.cfAddOne(c, it, nx)
		switch {
		case err != nil && nx:
			x.W.Int(-1)
		case err != nil:
			if x.W.Proto >= 3 {
				x.W.Bool(false)
			} else {
				x.W.Int(-1)
			}
		case nx:
			x.W.Int(b2i(added))
		default:
			x.W.Bool(true)
		}
		dirty = dirty || added
	}
	return dirty
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cfExists(x *Ctx) bool {
	c, found, _ := x.cuckooAt(x.Args[1])
	x.W.Bool(found && c.C.Answer(c.Contains(x.Args[2])))
	return false
}

func cfMExists(x *Ctx) bool {
	c, found, _ := x.cuckooAt(x.Args[1])
	items := x.Args[2:]
	x.W.Array(len(items))
	for _, it := range items {
		x.W.Bool(found && c.C.Answer(c.Contains(it)))
	}
	return false
}

func cfCount(x *Ctx) bool {
	c, found, _ := x.cuckooAt(x.Args[1])
	n := 0
	if found {
		n = c.Count(x.Args[2])
	}
	x.W.Int(int64(n))
	return false
}

func cfDel(x *Ctx) bool {
	c, found, _ := x.cuckooAt(x.Args[1])
	if !found {
		x.Error("Not found")
		return false
	}
	ok := c.Delete(x.Args[2])
	x.W.Bool(ok)
	return ok
}

func cfInfo(x *Ctx) bool {
	c, found, wrong := x.cuckooAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	w := x.W
	w.Map(8)
	for _, kv := range [...]struct {
		k string
		v uint64
	}{
		{"Size", c.Size()},
		{"Number of buckets", c.Buckets()},
		{"Number of filters", uint64(c.NumFilters())},
		{"Number of items inserted", c.Items()},
		{"Number of items deleted", c.Deleted()},
		{"Bucket size", uint64(c.BucketSize())},
		{"Expansion rate", uint64(c.Expansion())},
		{"Max iterations", uint64(c.MaxIterations())},
	} {
		w.BulkString(kv.k)
		w.Int(int64(kv.v))
	}
	return false
}

func cfCompact(x *Ctx) bool {
	c, found, wrong := x.cuckooAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	old := c.Size()
	c.Compact()
	x.Store.Grew(old, c.Size())
	x.W.Status("OK")
	return true
}

func cfScanDump(x *Ctx) bool {
	it, ok := parseInt64(x.Args[2])
	if !ok || it < 0 {
		x.Error("Invalid position")
		return false
	}
	c, found, wrong := x.cuckooAt(x.Args[1])
	if !x.present(found, wrong) {
		return false
	}
	x.W.Array(2)
	if c.Items() == 0 {
		x.W.Int(0)
		x.W.Null()
		return false
	}
	if it == 0 {
		x.W.Int(1)
		x.W.Bulk(c.AppendHeader(nil))
		return false
	}
	chunk := c.Chunk(uint64(it - 1))
	if chunk == nil {
		x.W.Int(0)
		x.W.Null()
		return false
	}
	x.W.Int(it + int64(len(chunk)))
	x.W.Bulk(chunk)
	return false
}

func cfLoadChunk(x *Ctx) bool {
	it, ok := parseInt64(x.Args[2])
	if !ok || it <= 0 {
		x.Error("Invalid position")
		return false
	}
	c, found, wrong := x.cuckooAt(x.Args[1])
	if wrong {
		x.Error(errWrongType)
		return false
	}
	data := x.Args[3]
	if it == 1 {
		if found {
			x.Error(errItemExists)
			return false
		}
		if len(data) != rbcuckoo.HeaderLen {
			x.Error("Invalid header")
			return false
		}
		f, err := rbcuckoo.FromHeader(data, x.budgetFor(x.Args[1]))
		if err != nil {
			x.Error("Couldn't create filter!")
			return false
		}
		x.Store.Set(x.Args[1], keyspace.NewCuckoo(f))
		x.W.Status("OK")
		return true
	}
	if !found {
		x.Error(errNotFound)
		return false
	}
	off := it - int64(len(data)) - 1
	if off < 0 || c.LoadChunk(uint64(off), data) != nil {
		x.Error("Couldn't load chunk!")
		return false
	}
	x.W.Status("OK")
	return true
}
