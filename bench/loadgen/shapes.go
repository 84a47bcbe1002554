package main

import (
	"fmt"
	"strconv"
)

// Items are the 12-digit decimal forms of 0..n-1 (the form redis-benchmark's
// __rand_int__ takes), formatted once into one table so that building a
// pipeline copies bytes and formats nothing.
const itemLen = 12

type keyspace struct {
	buf []byte
	n   int
}

func newKeyspace(n int) *keyspace {
	ks := &keyspace{buf: make([]byte, 0, n*itemLen), n: n}
	var tmp [20]byte
	for i := 0; i < n; i++ {
		d := strconv.AppendUint(tmp[:0], uint64(i), 10)
		for p := len(d); p < itemLen; p++ {
			ks.buf = append(ks.buf, '0')
		}
		ks.buf = append(ks.buf, d...)
	}
	return ks
}

func (k *keyspace) item(i int) []byte { return k.buf[i*itemLen : (i+1)*itemLen] }

// Keys the filter commands use; Reset creates them with the sizes
// redisbloom.md §7.1 used for RedisBloom.
const (
	bfKey = "bench:bf"
	cfKey = "bench:cf"
)

// An op is one command shape against one server: what one unit (one logical
// request carrying Items items) sends and which replies are correct. A unit
// is one RESP command, except the pipelined-SET/EXISTS baselines, where it is
// Items commands.
type op struct {
	Name   string // "bf.madd", "redis:mset", ...
	Server string // "bloomery" or "redis"
	Desc   string // the commands one unit sends
	Items  int    // items per unit
	Cmds   int    // RESP commands per unit
	Query  bool   // a membership query: runs start from a prefilled key
	Family string // "bf" or "cf" (which key a bloomery prefill fills)
	// add appends one unit for these items.
	add func(b []byte, items [][]byte) []byte
	// read reads and checks the replies of one unit of n items; with
	// present, every item was added before, so every query must find it.
	read func(r *reader, n int, present bool) error
}

var bfKeyB, cfKeyB = []byte(bfKey), []byte(cfKey)

func appendKeyed(b []byte, name string, key []byte, items [][]byte) []byte {
	b = appendHeader(b, '*', 2+len(items))
	b = appendBulkString(b, name)
	b = appendBulk(b, key)
	for _, it := range items {
		b = appendBulk(b, it)
	}
	return b
}

// readBool reads an integer reply that must be 0 or 1 (1 when must1).
// The common reply (":0\r\n" or ":1\r\n", already buffered) is checked in
// place; anything else goes through the general parser, which reports it.
func readBool(r *reader, must1 bool) error {
	if r.br.Buffered() >= 4 {
		b, _ := r.br.Peek(4)
		if simpleBool(b, must1) {
			r.br.Discard(4)
			return nil
		}
	}
	v, err := r.integer()
	if err != nil {
		return err
	}
	if v != 0 && v != 1 || must1 && v != 1 {
		return fmt.Errorf("reply %d, want %s", v, map[bool]string{true: "1", false: "0 or 1"}[must1])
	}
	return nil
}

// readBools reads an array of n integer replies, each 0 or 1 (1 when must1).
func readBools(r *reader, n int, must1 bool) error {
	m, err := r.arrayLen()
	if err != nil {
		return err
	}
	if m != n {
		return fmt.Errorf("array of %d replies for %d items", m, n)
	}
	for i := 0; i < n; {
		// Check every whole element already buffered in one pass.
		k := min(n-i, r.br.Buffered()/4)
		b, _ := r.br.Peek(4 * k)
		j := 0
		for j < k && simpleBool(b[4*j:4*j+4], must1) {
			j++
		}
		r.br.Discard(4 * j)
		i += j
		if i < n {
			// The next element is not buffered whole (readBool waits for
			// it) or is not a plain 0/1 (readBool reports it).
			if err := readBool(r, must1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
			i++
		}
	}
	return nil
}

// simpleBool reports whether b is ":1\r\n", or ":0\r\n" when !must1.
func simpleBool(b []byte, must1 bool) bool {
	return b[0] == ':' && b[2] == '\r' && b[3] == '\n' && (b[1] == '1' || b[1] == '0' && !must1)
}

var one = []byte("1")

// ops returns every shape, bloomery's and the redis-server baselines, for a
// batch size.
func ops(batch int) map[string]*op {
	m := map[string]*op{}
	put := func(o *op) { m[o.Name] = o }
	single := func(name, cmd string, key []byte, fam string, query, alwaysOne bool) {
		put(&op{Name: name, Server: "bloomery", Desc: cmd + " " + string(key) + " <item>", Items: 1, Cmds: 1,
			Query: query, Family: fam,
			add: func(b []byte, items [][]byte) []byte { return appendKeyed(b, cmd, key, items) },
			read: func(r *reader, n int, present bool) error {
				return readBool(r, alwaysOne || query && present)
			}})
	}
	multi := func(name, cmd string, query bool) {
		put(&op{Name: name, Server: "bloomery", Desc: fmt.Sprintf("%s %s <%d items>", cmd, bfKey, batch),
			Items: batch, Cmds: 1, Query: query, Family: "bf",
			add: func(b []byte, items [][]byte) []byte { return appendKeyed(b, cmd, bfKeyB, items) },
			read: func(r *reader, n int, present bool) error {
				return readBools(r, n, query && present)
			}})
	}
	single("bf.add", "BF.ADD", bfKeyB, "bf", false, false)
	single("bf.exists", "BF.EXISTS", bfKeyB, "bf", true, false)
	single("cf.add", "CF.ADD", cfKeyB, "cf", false, true) // CF.ADD always inserts: 1
	single("cf.exists", "CF.EXISTS", cfKeyB, "cf", true, false)
	multi("bf.madd", "BF.MADD", false)
	multi("bf.mexists", "BF.MEXISTS", true)

	// redis-server baselines: the item is the key.
	put(&op{Name: "redis:set", Server: "redis", Desc: "SET <item> 1", Items: 1, Cmds: 1,
		add: func(b []byte, items [][]byte) []byte {
			return appendCommand(b, []byte("SET"), items[0], one)
		},
		read: func(r *reader, n int, present bool) error { return r.status("OK") }})
	put(&op{Name: "redis:exists", Server: "redis", Desc: "EXISTS <item>", Items: 1, Cmds: 1, Query: true,
		add: func(b []byte, items [][]byte) []byte {
			return appendCommand(b, []byte("EXISTS"), items[0])
		},
		read: func(r *reader, n int, present bool) error { return readBool(r, present) }})
	put(&op{Name: "redis:mset", Server: "redis", Desc: fmt.Sprintf("MSET <item> 1 ... (%d pairs, one command)", batch),
		Items: batch, Cmds: 1,
		add: func(b []byte, items [][]byte) []byte {
			b = appendHeader(b, '*', 1+2*len(items))
			b = appendBulkString(b, "MSET")
			for _, it := range items {
				b = appendBulk(b, it)
				b = appendBulk(b, one)
			}
			return b
		},
		read: func(r *reader, n int, present bool) error { return r.status("OK") }})
	put(&op{Name: "redis:exists-multi", Server: "redis",
		Desc:  fmt.Sprintf("EXISTS <item> ... (%d keys, one command, replies a count)", batch),
		Items: batch, Cmds: 1, Query: true,
		add: func(b []byte, items [][]byte) []byte { return appendKeyed(b, "EXISTS", items[0], items[1:]) },
		read: func(r *reader, n int, present bool) error {
			v, err := r.integer()
			if err != nil {
				return err
			}
			// Random items may repeat within a batch; EXISTS counts repeats.
			if v < 0 || v > int64(n) || present && v != int64(n) {
				return fmt.Errorf("EXISTS of %d keys replied %d", n, v)
			}
			return nil
		}})
	put(&op{Name: "redis:set-pipe", Server: "redis", Desc: fmt.Sprintf("%d pipelined SET <item> 1", batch),
		Items: batch, Cmds: batch,
		add: func(b []byte, items [][]byte) []byte {
			for _, it := range items {
				b = appendCommand(b, []byte("SET"), it, one)
			}
			return b
		},
		read: func(r *reader, n int, present bool) error {
			for i := 0; i < n; i++ {
				if err := r.status("OK"); err != nil {
					return err
				}
			}
			return nil
		}})
	put(&op{Name: "redis:exists-pipe", Server: "redis", Desc: fmt.Sprintf("%d pipelined EXISTS <item>", batch),
		Items: batch, Cmds: batch, Query: true,
		add: func(b []byte, items [][]byte) []byte {
			for _, it := range items {
				b = appendCommand(b, []byte("EXISTS"), it)
			}
			return b
		},
		read: func(r *reader, n int, present bool) error {
			for i := 0; i < n; i++ {
				if err := readBool(r, present); err != nil {
					return err
				}
			}
			return nil
		}})
	return m
}

// reset empties a server and, on bloomery, creates the filter keys with
// RedisBloom's §7.1 sizes: BF.RESERVE bench:bf 0.01 1000000 and
// CF.RESERVE bench:cf 4000000.
func reset(c *client, server string) error {
	if err := c.do("FLUSHALL"); err != nil {
		return err
	}
	if server != "bloomery" {
		return nil
	}
	if err := c.do("BF.RESERVE", bfKey, "0.01", "1000000"); err != nil {
		return err
	}
	return c.do("CF.RESERVE", cfKey, "4000000")
}

// prefill adds items 0..n-1 in commands of 1000 items (BF.MADD, CF.INSERT
// ... ITEMS, or MSET on redis-server), ten commands per pipeline.
func prefill(c *client, ks *keyspace, o *op, n int) error {
	const chunk, depth = 1000, 10
	for start := 0; start < n; {
		c.buf = c.buf[:0]
		sent := 0
		for ; sent < depth && start < n; sent++ {
			end := min(start+chunk, n)
			var args [][]byte
			switch {
			case o.Server == "redis":
				args = append(args, []byte("MSET"))
				for i := start; i < end; i++ {
					args = append(args, ks.item(i), one)
				}
			case o.Family == "bf":
				args = append(args, []byte("BF.MADD"), bfKeyB)
				for i := start; i < end; i++ {
					args = append(args, ks.item(i))
				}
			default:
				args = append(args, []byte("CF.INSERT"), cfKeyB, []byte("ITEMS"))
				for i := start; i < end; i++ {
					args = append(args, ks.item(i))
				}
			}
			c.buf = appendCommand(c.buf, args...)
			start = end
		}
		if _, err := c.conn.Write(c.buf); err != nil {
			return err
		}
		for ; sent > 0; sent-- {
			if err := c.r.skip(); err != nil {
				return fmt.Errorf("prefill: %w", err)
			}
		}
	}
	return nil
}
