package command

import (
	"crypto/subtle"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Version is the Redis version the server reports (the command set and
// reply shapes it follows).
const Version = "7.4.0"

func init() {
	register(
		&Spec{Name: "ping", Arity: -1, Run: ping, Group: "connection", Help: "PING [message]"},
		&Spec{Name: "echo", Arity: 2, Run: echo, Group: "connection", Help: "ECHO message"},
		&Spec{Name: "quit", Arity: -1, Flags: fNoAuth | fTxCtl, Run: quit, Group: "connection", Help: "QUIT"},
		&Spec{Name: "select", Arity: 2, Run: selectDB, Group: "connection", Help: "SELECT index (only 0)"},
		&Spec{Name: "hello", Arity: -1, Flags: fNoAuth, Run: hello, Group: "connection", Help: "HELLO [protover [AUTH username password] [SETNAME clientname]]"},
		&Spec{Name: "auth", Arity: -2, Flags: fNoAuth, Run: auth, Group: "connection", Help: "AUTH [username] password"},
		&Spec{Name: "client", Arity: -2, Run: client, Group: "connection", Help: "CLIENT SETNAME|GETNAME|ID|SETINFO|INFO|LIST ..."},
		&Spec{Name: "command", Arity: -1, Run: command, Group: "server", Help: "COMMAND [COUNT|DOCS|INFO|LIST ...]"},
		&Spec{Name: "info", Arity: -1, Flags: fRead, Run: info, Group: "server", Help: "INFO [section ...]"},
		&Spec{Name: "config", Arity: -2, Run: config, Group: "server", Help: "CONFIG GET parameter ..."},
		&Spec{Name: "dbsize", Arity: 1, Flags: fRead, Run: dbsize, Group: "server", Help: "DBSIZE"},
		&Spec{Name: "exists", Arity: -2, Flags: fRead, Run: exists, Group: "generic", Help: "EXISTS key [key ...]"},
		&Spec{Name: "del", Arity: -2, Flags: fWrite | fAllKeys, Run: del, Group: "generic", Help: "DEL key [key ...]"},
		&Spec{Name: "unlink", Arity: -2, Flags: fWrite | fAllKeys, Run: del, Group: "generic", Help: "UNLINK key [key ...]"},
		&Spec{Name: "type", Arity: 2, Flags: fRead, Run: typeCmd, Group: "generic", Help: "TYPE key"},
		&Spec{Name: "keys", Arity: 2, Flags: fRead, Run: keys, Group: "generic", Help: "KEYS pattern"},
		&Spec{Name: "scan", Arity: -2, Flags: fRead, Run: scan, Group: "generic", Help: "SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]"},
		&Spec{Name: "rename", Arity: 3, Flags: fWrite | fAllKeys, Run: rename, Group: "generic", Help: "RENAME key newkey"},
		&Spec{Name: "flushall", Arity: -1, Flags: fWrite | fFlush, Run: flushall, Group: "server", Help: "FLUSHALL [ASYNC|SYNC]"},
		&Spec{Name: "flushdb", Arity: -1, Flags: fWrite | fFlush, Run: flushall, Group: "server", Help: "FLUSHDB [ASYNC|SYNC]"},
		&Spec{Name: "save", Arity: 1, Flags: fNoMulti, Run: save, Group: "server", Help: "SAVE"},
		&Spec{Name: "bgsave", Arity: -1, Flags: fNoMulti, Run: bgsave, Group: "server", Help: "BGSAVE"},
		&Spec{Name: "bgrewriteaof", Arity: 1, Flags: fNoMulti, Run: bgsave, Group: "server", Help: "BGREWRITEAOF (same as BGSAVE: a snapshot resets the log)"},
		&Spec{Name: "lastsave", Arity: 1, Run: lastsave, Group: "server", Help: "LASTSAVE"},
		&Spec{Name: "shutdown", Arity: -1, Flags: fNoMulti, Run: shutdown, Group: "server", Help: "SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] | SHUTDOWN ABORT"},
		&Spec{Name: "time", Arity: 1, Run: timeCmd, Group: "server", Help: "TIME"},
	)
}

func ping(x *Ctx) bool {
	switch len(x.Args) {
	case 1:
		x.W.Status("PONG")
	case 2:
		x.W.Bulk(x.Args[1])
	default:
		x.arityError()
	}
	return false
}

func echo(x *Ctx) bool { x.W.Bulk(x.Args[1]); return false }

func quit(x *Ctx) bool { x.W.Status("OK"); x.C.Close = true; return false }

func selectDB(x *Ctx) bool {
	n, err := strconv.Atoi(string(x.Args[1]))
	switch {
	case err != nil:
		x.Error(errNotInt)
	case n != 0:
		x.Error("ERR DB index is out of range")
	default:
		x.W.Status("OK")
	}
	return false
}

// checkPassword reports whether user (nil for AUTH's one-argument form)
// and pass are right, comparing the password in constant time; a wrong
// pair is reported to the connection's OnAuthFail.
func (x *Ctx) checkPassword(user, pass []byte) bool {
	if x.Password == "" {
		return false
	}
	ok := subtle.ConstantTimeCompare(pass, []byte(x.Password)) == 1
	if user != nil && !eq(user, "default") {
		ok = false
	}
	if !ok && x.C.OnAuthFail != nil {
		x.C.OnAuthFail()
	}
	return ok
}

func (x *Ctx) authOK() {
	x.C.Authed = true
	if x.C.OnAuth != nil {
		x.C.OnAuth()
	}
}

func auth(x *Ctx) bool {
	if len(x.Args) > 3 {
		x.Error(errSyntax)
		return false
	}
	if x.Password == "" {
		x.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return false
	}
	var user []byte
	pass := x.Args[1]
	if len(x.Args) == 3 {
		user, pass = x.Args[1], x.Args[2]
	}
	if !x.checkPassword(user, pass) {
		x.Error(errWrongPass)
		return false
	}
	x.authOK()
	x.W.Status("OK")
	return false
}

func hello(x *Ctx) bool {
	proto := x.W.Proto
	args := x.Args[1:]
	if len(args) > 0 {
		v, err := strconv.Atoi(string(args[0]))
		if err != nil {
			x.Error("ERR Protocol version is not an integer or out of range")
			return false
		}
		if v < 2 || v > 3 {
			x.Error("NOPROTO unsupported protocol version")
			return false
		}
		proto = v
		args = args[1:]
	}
	var name []byte
	authed := false
	for len(args) > 0 {
		switch {
		case eq(args[0], "auth") && len(args) >= 3:
			if x.Password == "" {
				// Redis accepts AUTH default <anything> when no
				// password is configured ("nopass" default user).
				if !eq(args[1], "default") {
					x.Error(errWrongPass)
					return false
				}
			} else if !x.checkPassword(args[1], args[2]) {
				x.Error(errWrongPass)
				return false
			}
			authed = true
			args = args[3:]
		case eq(args[0], "setname") && len(args) >= 2:
			name = args[1]
			args = args[2:]
		default:
			x.Error(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", args[0]))
			return false
		}
	}
	if x.Password != "" && !x.C.Authed && !authed {
		x.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return false
	}
	if authed && x.Password != "" {
		x.authOK()
	}
	if name != nil {
		x.C.Name = string(name)
	}
	x.W.Proto = proto
	w := x.W
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(Version)
	w.BulkString("proto")
	w.Int(int64(proto))
	w.BulkString("id")
	w.Int(x.C.ID)
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(1)
	w.Map(4)
	w.BulkString("name")
	w.BulkString("bf")
	w.BulkString("ver")
	w.Int(80800)
	w.BulkString("path")
	w.BulkString("bloomery")
	w.BulkString("args")
	w.Array(0)
	return false
}

func client(x *Ctx) bool {
	sub := strings.ToLower(string(x.Args[1]))
	n := len(x.Args)
	switch {
	case sub == "setname" && n == 3:
		for _, c := range x.Args[2] {
			if c <= ' ' || c > '~' {
				x.Error("ERR Client names cannot contain spaces, newlines or special characters.")
				return false
			}
		}
		x.C.Name = string(x.Args[2])
		x.W.Status("OK")
	case sub == "getname" && n == 2:
		if x.C.Name == "" {
			x.W.Null()
		} else {
			x.W.BulkString(x.C.Name)
		}
	case sub == "id" && n == 2:
		x.W.Int(x.C.ID)
	case sub == "setinfo" && n == 4:
		switch {
		case eq(x.Args[2], "lib-name"):
			x.C.LibName = string(x.Args[3])
		case eq(x.Args[2], "lib-ver"):
			x.C.LibVer = string(x.Args[3])
		default:
			x.Error(fmt.Sprintf("ERR Unrecognized option '%s'", x.Args[2]))
			return false
		}
		x.W.Status("OK")
	case sub == "info" && n == 2:
		x.W.Verbatim(fmt.Sprintf("id=%d addr=%s name=%s lib-name=%s lib-ver=%s resp=%d\n", x.C.ID, x.C.Addr, x.C.Name, x.C.LibName, x.C.LibVer, x.W.Proto))
	case sub == "list":
		x.W.Verbatim(x.Hooks.ClientList())
	case sub == "setinfo" || sub == "setname" || sub == "getname" || sub == "id" || sub == "info":
		x.Error(fmt.Sprintf("ERR wrong number of arguments for 'client|%s' command", sub))
	default:
		x.Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try CLIENT HELP.", x.Args[1]))
	}
	return false
}

func sortedSpecs() []*Spec {
	s := Specs()
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}

func (x *Ctx) commandInfo(s *Spec) {
	w := x.W
	w.Array(10)
	w.BulkString(s.Name)
	w.Int(int64(s.Arity))
	var flags []string
	if s.Flags&fWrite != 0 {
		flags = append(flags, "write")
	}
	if s.Flags&fRead != 0 {
		flags = append(flags, "readonly")
	}
	if s.Flags&fDenyOOM != 0 {
		flags = append(flags, "denyoom")
	}
	if s.Flags&fNoAuth != 0 {
		flags = append(flags, "no-auth")
	}
	w.Set(len(flags))
	for _, f := range flags {
		w.Status(f)
	}
	first := 0
	if s.Flags&(fWrite|fRead) != 0 && s.Arity != 1 && s.Arity != -1 && s.Group != "server" {
		first = 1
	}
	w.Int(int64(first))
	w.Int(int64(first))
	w.Int(int64(first))
	w.Set(0)
	w.Set(0)
	w.Array(0)
	w.Array(0)
}

func command(x *Ctx) bool {
	w := x.W
	if len(x.Args) == 1 {
		specs := sortedSpecs()
		w.Array(len(specs))
		for _, s := range specs {
			x.commandInfo(s)
		}
		return false
	}
	sub := strings.ToLower(string(x.Args[1]))
	switch sub {
	case "count":
		w.Int(int64(len(table)))
	case "list":
		specs := sortedSpecs()
		w.Array(len(specs))
		for _, s := range specs {
			w.BulkString(s.Name)
		}
	case "info":
		names := x.Args[2:]
		if len(names) == 0 {
			specs := sortedSpecs()
			w.Array(len(specs))
			for _, s := range specs {
				x.commandInfo(s)
			}
			return false
		}
		w.Array(len(names))
		for _, n := range names {
			if s := Lookup(string(n)); s != nil {
				x.commandInfo(s)
			} else {
				w.NullArray()
			}
		}
	case "docs":
		var specs []*Spec
		if len(x.Args) == 2 {
			specs = sortedSpecs()
		} else {
			for _, n := range x.Args[2:] {
				if s := Lookup(string(n)); s != nil {
					specs = append(specs, s)
				}
			}
		}
		w.Map(len(specs))
		for _, s := range specs {
			w.BulkString(s.Name)
			w.Map(4)
			w.BulkString("summary")
			w.BulkString(s.Help)
			w.BulkString("since")
			w.BulkString("1.0.0")
			w.BulkString("group")
			w.BulkString(s.Group)
			w.BulkString("arguments")
			w.Array(0)
		}
	default:
		x.Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try COMMAND HELP.", x.Args[1]))
	}
	return false
}

// InfoSections are the sections INFO renders by default, in order.
var InfoSections = []string{"server", "clients", "memory", "persistence", "stats", "keyspace"}

func info(x *Ctx) bool {
	secs := InfoSections
	if len(x.Args) > 1 {
		secs = nil
		for _, a := range x.Args[1:] {
			s := strings.ToLower(string(a))
			if s == "all" || s == "default" || s == "everything" {
				secs = InfoSections
				break
			}
			secs = append(secs, s)
		}
	}
	var b strings.Builder
	for _, s := range secs {
		body := x.Hooks.Info(s)
		if body == "" && s != "keyspace" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(s[:1]) + s[1:] + "\r\n")
		b.WriteString(body)
	}
	x.W.Verbatim(b.String())
	return false
}

func config(x *Ctx) bool {
	sub := strings.ToLower(string(x.Args[1]))
	switch sub {
	case "get":
		if len(x.Args) < 3 {
			x.Error("ERR wrong number of arguments for 'config|get' command")
			return false
		}
		// Each argument is a glob pattern (Redis 7 takes several); a
		// parameter matched by more than one is reported once.
		var pairs []string
		var seen [len(configNames)]bool
		for _, a := range x.Args[2:] {
			pat := strings.ToLower(string(a))
			for i, p := range configNames {
				if !seen[i] && globMatch(p, pat) {
					if v, ok := x.Hooks.Config(p); ok {
						seen[i] = true
						pairs = append(pairs, p, v)
					}
				}
			}
		}
		x.W.Map(len(pairs) / 2)
		for _, p := range pairs {
			x.W.BulkString(p)
		}
	case "resetstat":
		for _, st := range x.Env.Stats() {
			st.reset()
		}
		x.W.Status("OK")
	case "set":
		x.Error("ERR CONFIG SET is not supported; restart the server with new flags")
	default:
		x.Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try CONFIG HELP.", x.Args[1]))
	}
	return false
}

var configNames = [...]string{"appendfsync", "appendonly", "bind", "client-output-buffer-limit", "client-query-buffer-budget", "databases", "dir", "maxclients", "maxmemory", "maxmemory-policy", "port", "save", "timeout"}

func dbsize(x *Ctx) bool { x.W.Int(int64(x.Store.Len())); return false }

func exists(x *Ctx) bool {
	n := 0
	for _, k := range x.Args[1:] {
		if x.Store.Get(k) != nil {
			n++
		}
	}
	x.W.Int(int64(n))
	return false
}

func del(x *Ctx) bool {
	n := 0
	for _, k := range x.Args[1:] {
		if x.Store.Delete(k) {
			n++
		}
	}
	x.W.Int(int64(n))
	return n > 0
}

func typeCmd(x *Ctx) bool {
	if v := x.Store.Get(x.Args[1]); v != nil {
		x.W.Status(v.Type())
	} else {
		x.W.Status("none")
	}
	return false
}

func keys(x *Ctx) bool {
	pat := string(x.Args[1])
	var out []string
	for _, k := range x.Store.Keys() {
		if globMatch(k, pat) {
			out = append(out, k)
		}
	}
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
	return false
}

// scan iterates the sorted key list; the cursor is the index of the next
// key. Keys present for the whole iteration are returned at least once.
func scan(x *Ctx) bool {
	cur, err := strconv.ParseUint(string(x.Args[1]), 10, 64)
	if err != nil {
		x.Error("ERR invalid cursor")
		return false
	}
	pat, count, typ := "*", 10, ""
	for i := 2; i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) {
			x.Error(errSyntax)
			return false
		}
		v := string(x.Args[i+1])
		switch {
		case eq(x.Args[i], "match"):
			pat = v
		case eq(x.Args[i], "count"):
			n, err := strconv.Atoi(v)
			if err != nil {
				x.Error(errNotInt)
				return false
			}
			if n < 1 {
				x.Error(errSyntax)
				return false
			}
			count = n
		case eq(x.Args[i], "type"):
			typ = v
		default:
			x.Error(errSyntax)
			return false
		}
	}
	all := x.Store.Keys()
	var out []string
	i := cur
	for ; i < uint64(len(all)) && i < cur+uint64(count); i++ {
		k := all[i]
		if !globMatch(k, pat) {
			continue
		}
		if typ != "" && !strings.EqualFold(x.Store.Get([]byte(k)).Type(), typ) {
			continue
		}
		out = append(out, k)
	}
	if i >= uint64(len(all)) {
		i = 0
	}
	x.W.Array(2)
	x.W.BulkString(strconv.FormatUint(i, 10))
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
	return false
}

func rename(x *Ctx) bool {
	if !x.Store.Rename(x.Args[1], x.Args[2]) {
		x.Error("ERR no such key")
		return false
	}
	x.W.Status("OK")
	return true
}

func flushall(x *Ctx) bool {
	if len(x.Args) > 2 || (len(x.Args) == 2 && !eq(x.Args[1], "async") && !eq(x.Args[1], "sync")) {
		x.Error(errSyntax)
		return false
	}
	x.Store.Flush()
	x.W.Status("OK")
	return true
}

func save(x *Ctx) bool {
	if err := x.Hooks.Save(); err != nil {
		x.Error("ERR " + err.Error())
		return false
	}
	x.W.Status("OK")
	return false
}

func bgsave(x *Ctx) bool {
	if err := x.Hooks.BGSave(); err != nil {
		x.Error("ERR " + err.Error())
		return false
	}
	if eq(x.Args[0], "bgrewriteaof") {
		x.W.Status("Background append only file rewriting started")
	} else {
		x.W.Status("Background saving started")
	}
	return false
}

func lastsave(x *Ctx) bool { x.W.Int(x.Hooks.LastSave()); return false }

// shutdown is SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] | SHUTDOWN ABORT, as
// in Redis. The server has no replicas to wait for, so a shutdown is
// never pending: NOW changes nothing and ABORT always answers that no
// shutdown is in progress. SAVE (the default) writes a snapshot first;
// NOSAVE skips it (the log is still written and fsynced). If the
// snapshot fails the server keeps running, unless FORCE.
func shutdown(x *Ctx) bool {
	save, nosave, force, abort := false, false, false, false
	for _, a := range x.Args[1:] {
		switch {
		case eq(a, "nosave"):
			nosave = true
		case eq(a, "save"):
			save = true
		case eq(a, "force"):
			force = true
		case eq(a, "abort"):
			abort = true
		case eq(a, "now"):
		default:
			x.Error(errSyntax)
			return false
		}
	}
	if (abort && len(x.Args) > 2) || (save && nosave) {
		x.Error(errSyntax)
		return false
	}
	if abort {
		x.Error("ERR No shutdown in progress.")
		return false
	}
	if err := x.Hooks.Shutdown(!nosave, force); err != nil {
		x.Error("ERR Errors trying to SHUTDOWN. Check logs: " + err.Error())
		return false
	}
	x.C.Close = true
	return false
}

func timeCmd(x *Ctx) bool {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkString(strconv.FormatInt(now.Unix(), 10))
	x.W.BulkString(strconv.Itoa(now.Nanosecond() / 1000))
	return false
}

// globMatch reports whether key s matches pattern p in Redis' glob
// syntax (stringmatchlen): * any run, ? any byte, [abc] [^abc] [a-z]
// classes (a reversed range is swapped, \ escapes inside a class, an
// unterminated class takes the rest of the pattern), and \ escaping the
// next byte. Bytes compare exactly. A pattern of stars matches the empty
// key (Redis gives that answer for KEYS * and SCAN MATCH *).
//
// Cost: O(len(p)*len(s)) time, no allocation, no recursion. Every token
// but * matches exactly one byte, so on a mismatch only the latest star
// needs to take one more byte: earlier stars can never help (the classic
// wildcard argument), and no pattern can make the work exponential.
func globMatch(s, p string) bool {
	ok, _ := globMatchSteps(s, p)
	return ok
}

// globMatchSteps is globMatch, also reporting the work done: pattern bytes
// examined plus restarts after the latest star (for tests of the bound).
func globMatchSteps(s, p string) (bool, int) {
	steps := 0
	si, pi := 0, 0
	starP, starS := -1, 0 // pattern index after the latest star; key index it resumes from
	for {
		if pi < len(p) {
			if p[pi] == '*' {
				for pi < len(p) && p[pi] == '*' {
					pi++
					steps++
				}
				if pi == len(p) {
					return true, steps
				}
				starP, starS = pi, si
				continue
			}
			if si < len(s) {
				n, ok := globToken(s[si], p[pi:])
				steps += n
				if ok {
					si++
					pi += n
					continue
				}
			}
		} else if si == len(s) {
			return true, steps
		}
		if starP < 0 || starS >= len(s) {
			return false, steps
		}
		starS++
		si, pi = starS, starP
		steps++
	}
}

// globToken matches byte c against the token (not a star) that begins p,
// returning the token's length in bytes and whether c matches it.
func globToken(c byte, p string) (int, bool) {
	switch p[0] {
	case '?':
		return 1, true
	case '\\':
		if len(p) >= 2 {
			return 2, p[1] == c
		}
		return 1, c == '\\'
	case '[':
		j := 1
		not := j < len(p) && p[j] == '^'
		if not {
			j++
		}
		match := false
		n := len(p)
		for j < len(p) {
			if p[j] == '\\' && len(p)-j >= 2 {
				match = match || p[j+1] == c
				j += 2
				continue
			}
			if p[j] == ']' {
				n = j + 1
				break
			}
			if len(p)-j >= 3 && p[j+1] == '-' {
				lo, hi := p[j], p[j+2]
				if lo > hi {
					lo, hi = hi, lo
				}
				match = match || (lo <= c && c <= hi)
				j += 3
				continue
			}
			match = match || p[j] == c
			j++
		}
		return n, match != not
	}
	return 1, p[0] == c
}
