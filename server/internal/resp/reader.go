// Package resp implements the Redis serialization protocol for the server:
// a request reader (RESP arrays of bulk strings and inline commands) with
// limits, and an append-style reply writer for RESP2 and RESP3.
//
// Neither type is safe for concurrent use: each connection owns one Reader
// and one Writer.
package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Default limits, the same as Redis's defaults where Redis has one.
const (
	DefaultMaxBulk  = 512 << 20 // proto-max-bulk-len
	DefaultMaxArgs  = 1 << 20   // arguments per command
	DefaultMaxQuery = 1 << 30   // client-query-buffer-limit: bytes of one command
	MaxInline       = 64 << 10  // PROTO_INLINE_MAX_SIZE

	// Before authentication Redis accepts at most 10 arguments of at most
	// 16 KiB each; so do we, so an unauthenticated peer cannot make the
	// server allocate.
	UnauthMaxArgs = 10
	UnauthMaxBulk = 16 << 10
)

// Limits bound what one command may make the reader buffer.
type Limits struct {
	MaxBulk  int // bytes of one argument
	MaxArgs  int // arguments of one command
	MaxQuery int // total argument bytes of one command
}

// DefaultLimits are Redis's defaults.
var DefaultLimits = Limits{MaxBulk: DefaultMaxBulk, MaxArgs: DefaultMaxArgs, MaxQuery: DefaultMaxQuery}

// ProtocolError is a malformed or over-limit request. Its Error text is the
// reply Redis sends ("ERR Protocol error: ..."), after which the server
// closes the connection, as Redis does.
type ProtocolError struct {
	Msg    string
	budget bool // refused by the Budget
}

// OverBudget reports whether the request was refused because the
// query-buffer Budget was exhausted (not because it was malformed).
func (e *ProtocolError) OverBudget() bool { return e.budget }

func (e *ProtocolError) Error() string { return "ERR Protocol error: " + e.Msg }

func protoErr(format string, a ...any) error { return &ProtocolError{Msg: fmt.Sprintf(format, a...)} }

// IsProtocolError reports whether err is a *ProtocolError.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

// Reader reads commands from its own buffer, which it fills with one Read
// of the connection at a time. The argument slices it returns are
// sub-slices of that buffer (or, for inline commands, of a small arena):
// parsing copies nothing and, once the buffer and the argument slice have
// grown to the connection's largest command, allocates nothing. They are
// valid until the next call to ReadCommand.
//
// The buffer grows only when it is full of received bytes of one
// incomplete command, doubling each time, so memory follows what the peer
// has sent, never what it announced (a peer announcing a 500 MB argument
// and sending 3 bytes costs nothing). A buffer that grew past bigBuffer is
// released when it drains, or replaced by a small one when what is left
// in it fits, and the Reader keeps no slice of a released buffer (the GC
// can free it as soon as the caller drops the last command's arguments).
// With a Budget (SetBudget), the buffer is charged to it and a command
// that would take the budget past its limit is refused before the buffer
// grows.
//
// A multibulk command received in pieces is parsed incrementally: the
// arguments already parsed are kept as offsets from the command's start,
// so a command of n arguments costs O(n) to parse however many reads it
// arrives in.
type Reader struct {
	src    io.Reader
	buf    []byte // received bytes are buf[r:w]
	r, w   int
	err    error // the read error to report once buf[r:w] is used up
	lim    Limits
	unauth bool
	args   [][]byte
	arena  []byte // inline commands' unquoted arguments
	// Parse state of the multibulk command starting at r (pending is set
	// while it is incomplete).
	pending bool
	count   int    // arguments announced
	pos     int    // offset from r of the next argument's '$' line
	total   int    // argument bytes so far (checked against MaxQuery)
	spans   []span // arguments parsed so far, offsets from r
	// raw is the last multibulk command's bytes as received (nil after
	// an inline command).
	raw []byte
	// Offset counts bytes consumed by complete commands (used by log replay
	// to find the end of the last whole command).
	Offset int64
	budget *Budget // nil: none
	held   int64   // bytes of buf charged to budget
	// need is the length from r of the pending command up to the end of
	// the argument being received, when that is past the buffer's end
	// (else 0): the buffer then grows to it rather than past it.
	need int
}

type span struct{ off, n int }

const (
	initialBuffer = 64 << 10
	// bigBuffer: a buffer grown past it for a large command is released
	// once drained, so an idle connection holds at most initialBuffer.
	bigBuffer = 1 << 20
)

// NewReader returns a Reader over src with the given limits (zero fields
// take the defaults).
func NewReader(src io.Reader, lim Limits) *Reader {
	if lim.MaxBulk <= 0 {
		lim.MaxBulk = DefaultMaxBulk
	}
	if lim.MaxArgs <= 0 {
		lim.MaxArgs = DefaultMaxArgs
	}
	if lim.MaxQuery <= 0 {
		lim.MaxQuery = DefaultMaxQuery
	}
	return &Reader{src: src, lim: lim}
}

// SetBudget makes the reader charge its buffer to b (see Budget). Call it
// before the first ReadCommand.
func (r *Reader) SetBudget(b *Budget) { r.budget = b }

// Release frees the reader's buffer and returns its charge to the budget;
// the reader must not be used afterwards. A server calls it when the
// connection ends.
func (r *Reader) Release() { r.setBuf(nil) }

// BufferCap returns the capacity of the reader's buffer (for tests and
// diagnostics).
func (r *Reader) BufferCap() int { return cap(r.buf) }

// setBuf replaces the buffer, moving the budget's charge from the old one
// to nb (already reserved by the caller when it had to be), and forgets
// every slice of the old one.
func (r *Reader) setBuf(nb []byte) {
	if cap(r.buf) > 0 {
		// The argument slices of the last command point into the old
		// buffer: clear them so the GC can free it.
		clear(r.args[:cap(r.args)])
		r.raw = nil
	}
	r.buf = nb
	if r.budget != nil {
		r.budget.charge(int64(cap(nb)) - r.held)
	}
	r.held = int64(cap(nb))
}

// SetUnauthenticated switches the reader to the tight limits Redis applies
// before a client has authenticated.
func (r *Reader) SetUnauthenticated(on bool) { r.unauth = on }

// Buffered reports how many bytes are already read from the connection
// and waiting: when it is zero after a command, the pipeline is drained
// and the replies should be flushed.
func (r *Reader) Buffered() int { return r.w - r.r }

func (r *Reader) limits() (maxArgs, maxBulk int) {
	if r.unauth {
		return UnauthMaxArgs, UnauthMaxBulk
	}
	return r.lim.MaxArgs, r.lim.MaxBulk
}

// Raw returns the bytes of the last command as received when it was a
// RESP array (valid, like the arguments, until the next ReadCommand), or
// nil for an inline or empty command. Parsing them again yields the same
// arguments, so the append-only log can store them without re-encoding.
func (r *Reader) Raw() []byte { return r.raw }

// ReadCommand reads the next command. An empty inline line yields a
// zero-length command (callers skip it). Errors: io.EOF at a clean
// boundary, io.ErrUnexpectedEOF inside a command, *ProtocolError for a
// malformed or over-limit request, or the connection's read error.
func (r *Reader) ReadCommand() ([][]byte, error) {
	r.args = r.args[:0]
	r.arena = r.arena[:0]
	r.raw = nil
	if r.r == r.w {
		r.r, r.w = 0, 0
		if cap(r.buf) > bigBuffer {
			r.setBuf(nil)
		}
	}
	for {
		var (
			args [][]byte
			used int
			err  error
		)
		if r.w > r.r {
			r.need = 0
			if r.buf[r.r] == '*' || r.pending {
				args, used, err = r.parseMultibulk()
			} else {
				args, used, err = r.parseInline()
			}
			if err != nil {
				r.pending = false
				return nil, err
			}
			if used > 0 {
				r.r += used
				r.Offset += int64(used)
				return args, nil
			}
		}
		if err := r.fill(); err != nil {
			if err == io.EOF && r.w > r.r {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// fill reads once more from the source, making room first: the partial
// command at r moves to the front of the buffer, and a buffer full of
// one command doubles.
func (r *Reader) fill() error {
	if r.err != nil {
		return r.err
	}
	if r.buf == nil {
		r.setBuf(make([]byte, initialBuffer))
	}
	if r.r > 0 && len(r.buf) > bigBuffer && r.w-r.r <= initialBuffer/2 {
		// A large command is done and what follows is small: go back to
		// a small buffer rather than keep the large one.
		nb := make([]byte, initialBuffer)
		r.w = copy(nb, r.buf[r.r:r.w])
		r.r = 0
		r.setBuf(nb)
	}
	if r.r > 0 && len(r.buf)-r.w < len(r.buf)/2 {
		n := copy(r.buf, r.buf[r.r:r.w])
		r.r, r.w = 0, n
	}
	if r.w == len(r.buf) {
		size := 2 * len(r.buf)
		if r.need > len(r.buf) && r.need < size {
			size = r.need
		}
		if r.budget != nil && !r.budget.reserve(int64(size)) {
			return budgetErr(r.budget.Limit, 0)
		}
		nb := make([]byte, size)
		r.w = copy(nb, r.buf[r.r:r.w])
		r.r = 0
		if r.budget != nil {
			r.budget.charge(-int64(size)) // reserved above; setBuf charges it
		}
		r.setBuf(nb)
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			return errors.New("resp: invalid Read count")
		}
		r.w += n
		if err != nil {
			r.err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}

// line returns the CRLF-terminated line starting at absolute offset p
// (without its CRLF) and the offset just past it, or next < 0 when the
// line is incomplete.
func (r *Reader) line(p int) (line []byte, next int, err error) {
	i := bytes.IndexByte(r.buf[p:r.w], '\n')
	if i < 0 {
		if r.w-p >= MaxInline {
			return nil, 0, protoErr("too big inline request")
		}
		return nil, -1, nil
	}
	line = r.buf[p : p+i+1]
	if len(line) > MaxInline {
		return nil, 0, protoErr("too big inline request")
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, 0, protoErr("line not terminated by CRLF")
	}
	line = line[:len(line)-2]
	if len(line) == 0 {
		return nil, 0, protoErr("empty line")
	}
	return line, p + i + 1, nil
}

// bulkHeader parses a "$<len>\r\n" line at absolute offset p through
// line, for the same errors as any other line (parseMultibulk handles the
// common well-formed header itself). next < 0 means the line is
// incomplete.
func (r *Reader) bulkHeader(p, maxBulk int) (blen, next int, err error) {
	line, next, err := r.line(p)
	if err != nil || next < 0 {
		return 0, next, err
	}
	if line[0] != '$' {
		return 0, 0, protoErr("expected '$', got '%c'", line[0])
	}
	n, ok := parseInt(line[1:])
	if !ok || n < 0 || n > int64(maxBulk) {
		return 0, 0, protoErr("invalid bulk length")
	}
	return int(n), next, nil
}

// parseMultibulk parses (or resumes parsing) the RESP array at r. It
// returns the bytes used, or 0 when the command is incomplete.
func (r *Reader) parseMultibulk() ([][]byte, int, error) {
	maxArgs, maxBulk := r.limits()
	if !r.pending {
		// Fast path: "*<1-3 digits>\r\n" with a nonzero count, the header
		// of every usual command; anything else takes the general path.
		count, next := shortCount(r.buf[r.r:r.w])
		if count > 0 {
			next += r.r
		} else {
			line, n, err := r.line(r.r)
			if err != nil || n < 0 {
				return nil, 0, err
			}
			c, ok := parseInt(line[1:])
			if !ok {
				return nil, 0, protoErr("invalid multibulk length")
			}
			count, next = c, n
		}
		if count > int64(maxArgs) {
			return nil, 0, protoErr("invalid multibulk length")
		}
		if count <= 0 {
			return r.args, next - r.r, nil
		}
		r.pending = true
		r.count, r.pos, r.total = int(count), next-r.r, 0
		r.spans = r.spans[:0]
	}
	// The loop works on locals and stores the state back only when it
	// stops: this is the per-argument hot path of every command.
	buf, base := r.buf[:r.w], r.r
	pos, total, spans, count := base+r.pos, r.total, r.spans, r.count
	maxQuery := r.lim.MaxQuery
	for len(spans) < count {
		if maxBulk >= 99 {
			pos, spans, total = shortArgs(buf, pos, base, spans, count, total, maxQuery)
			if len(spans) == count {
				break
			}
		}
		// Fast paths: "$<digits>\r\n" with the whole header buffered;
		// first the one- and two-digit lengths of typical items.
		blen, start := 0, -1
		if pos+5 <= len(buf) && buf[pos] == '$' && buf[pos+1]-'0' <= 9 {
			d1 := int(buf[pos+1] - '0')
			if buf[pos+2] == '\r' && buf[pos+3] == '\n' {
				blen, start = d1, pos+4
			} else if d2 := buf[pos+2] - '0'; d2 <= 9 && buf[pos+3] == '\r' && buf[pos+4] == '\n' {
				blen, start = d1*10+int(d2), pos+5
			}
			if blen > maxBulk {
				start = -1 // the general path reports it
			}
		}
		if start < 0 && pos < len(buf) && buf[pos] == '$' {
			q, v := pos+1, 0
			for q < len(buf) && q-pos <= 10 {
				c := buf[q]
				if c < '0' || c > '9' {
					break
				}
				v = v*10 + int(c-'0')
				q++
			}
			if q > pos+1 && q+1 < len(buf) && buf[q] == '\r' && buf[q+1] == '\n' && v <= maxBulk {
				blen, start = v, q+2
			}
		}
		if start < 0 {
			var err error
			blen, start, err = r.bulkHeader(pos, maxBulk)
			if err != nil || start < 0 {
				r.pos, r.total, r.spans = pos-base, total, spans
				return nil, 0, err
			}
		}
		if total+blen > maxQuery {
			return nil, 0, protoErr("query buffer limit exceeded (%d bytes)", maxQuery)
		}
		end := start + blen
		if end+2 > len(buf) {
			if need := end + 2 - base; need > len(r.buf) {
				if r.budget != nil && !r.budget.fits(int64(need)-r.held) {
					return nil, 0, budgetErr(r.budget.Limit, need)
				}
				r.need = need
			}
			r.pos, r.total, r.spans = pos-base, total, spans
			return nil, 0, nil
		}
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return nil, 0, protoErr("bulk string not terminated by CRLF")
		}
		total += blen
		spans = append(spans, span{start - base, blen})
		pos = end + 2
	}
	r.pos, r.total, r.spans = pos-base, total, spans
	r.pending = false
	r.raw = buf[base:pos:pos]
	args := r.args
	for _, s := range spans {
		a := base + s.off
		args = append(args, buf[a:a+s.n:a+s.n])
	}
	r.args = args
	return args, pos - base, nil
}

// shortCount parses a multibulk header "*d\r\n", "*dd\r\n" or "*ddd\r\n"
// at the start of b (b[0] is '*') and returns the count and the header's
// length, or count 0 for any other (or incomplete) header.
func shortCount(b []byte) (count int64, n int) {
	if len(b) < 4 {
		return 0, 0
	}
	v := uint(0)
	for i := 1; i < len(b) && i <= 4; i++ {
		c := b[i]
		if c == '\r' {
			if i == 1 || i+1 >= len(b) || b[i+1] != '\n' {
				return 0, 0
			}
			return int64(v), i + 2
		}
		if d := uint(c) - '0'; d <= 9 {
			v = v*10 + d
		} else {
			return 0, 0
		}
	}
	return 0, 0
}

// shortArgs is parseMultibulk's loop for the usual arguments: it takes
// consecutive arguments of at most 99 bytes ("$d\r\n" or "$dd\r\n"
// headers) whose header, body and CRLF are all in buf, from pos, until
// count arguments are parsed or the next one is anything else (longer,
// incomplete, malformed or over maxQuery), which the general loop then
// handles, errors included. Its few live values stay in registers, which
// the general loop's do not. The caller ensures maxBulk >= 99.
func shortArgs(buf []byte, pos, base int, spans []span, count, total, maxQuery int) (int, []span, int) {
	for len(spans) < count && pos+5 <= len(buf) && buf[pos] == '$' {
		d1 := uint(buf[pos+1]) - '0'
		if d1 > 9 {
			break
		}
		var blen, start int
		if c := buf[pos+2]; c == '\r' {
			if buf[pos+3] != '\n' {
				break
			}
			blen, start = int(d1), pos+4
		} else {
			d2 := uint(c) - '0'
			if d2 > 9 || buf[pos+3] != '\r' || buf[pos+4] != '\n' {
				break
			}
			blen, start = int(d1*10+d2), pos+5
		}
		end := start + blen
		if end+2 > len(buf) || buf[end] != '\r' || buf[end+1] != '\n' || total+blen > maxQuery {
			break
		}
		spans = append(spans, span{start - base, blen})
		total += blen
		pos = end + 2
	}
	return pos, spans, total
}

// parseInline parses a telnet-style command line at r: arguments
// separated by spaces, with "double" (backslash escapes) and 'single'
// quotes. It returns the bytes used, or 0 when the line is incomplete.
func (r *Reader) parseInline() ([][]byte, int, error) {
	i := bytes.IndexByte(r.buf[r.r:r.w], '\n')
	if i < 0 {
		if r.w-r.r >= MaxInline {
			return nil, 0, protoErr("too big inline request")
		}
		return nil, 0, nil
	}
	line := r.buf[r.r : r.r+i+1]
	used := len(line)
	line = bytes.TrimRight(line, "\r\n")
	// The same limits as a RESP array's: argument count, bytes per
	// argument (before authentication 16 KiB, although a line may be up to
	// MaxInline) and total bytes.
	maxArgs, maxBulk := r.limits()
	total := 0
	r.arena = append(r.arena, line...)
	// The parsed arguments are appended after the raw line; src keeps
	// pointing at the line even if the arena moves.
	src := r.arena[:len(line):len(line)]
	var spans []span
	i = 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= len(src) {
			break
		}
		off := len(r.arena)
		switch src[i] {
		case '"':
			i++
			closed := false
			for i < len(src) {
				c := src[i]
				if c == '\\' && i+1 < len(src) {
					i++
					switch src[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'x':
						if i+2 < len(src) {
							if v, err := strconv.ParseUint(string(src[i+1:i+3]), 16, 8); err == nil {
								c = byte(v)
								i += 2
								break
							}
						}
						c = 'x'
					default:
						c = src[i]
					}
					r.arena = append(r.arena, c)
					i++
					continue
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				r.arena = append(r.arena, c)
				i++
			}
			if !closed || (i < len(src) && src[i] != ' ' && src[i] != '\t') {
				return nil, 0, protoErr("unbalanced quotes in request")
			}
		case '\'':
			i++
			closed := false
			for i < len(src) {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\'' {
					r.arena = append(r.arena, '\'')
					i += 2
					continue
				}
				if src[i] == '\'' {
					closed = true
					i++
					break
				}
				r.arena = append(r.arena, src[i])
				i++
			}
			if !closed || (i < len(src) && src[i] != ' ' && src[i] != '\t') {
				return nil, 0, protoErr("unbalanced quotes in request")
			}
		default:
			for i < len(src) && src[i] != ' ' && src[i] != '\t' {
				r.arena = append(r.arena, src[i])
				i++
			}
		}
		n := len(r.arena) - off
		spans = append(spans, span{off, n})
		if len(spans) > maxArgs {
			return nil, 0, protoErr("invalid multibulk length")
		}
		if n > maxBulk {
			return nil, 0, protoErr("invalid bulk length")
		}
		if total += n; total > r.lim.MaxQuery {
			return nil, 0, protoErr("query buffer limit exceeded (%d bytes)", r.lim.MaxQuery)
		}
	}
	for _, s := range spans {
		r.args = append(r.args, r.arena[s.off:s.off+s.n:s.off+s.n])
	}
	return r.args, used, nil
}

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
