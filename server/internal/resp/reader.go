// Package resp implements the Redis serialization protocol for the server:
// a request reader (RESP arrays of bulk strings and inline commands) with
// limits, and an append-style reply writer for RESP2 and RESP3.
//
// Neither type is safe for concurrent use: each connection owns one Reader
// and one Writer.
package resp

import (
	"bufio"
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
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "ERR Protocol error: " + e.Msg }

func protoErr(format string, a ...any) error { return &ProtocolError{Msg: fmt.Sprintf(format, a...)} }

// IsProtocolError reports whether err is a *ProtocolError.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

// Reader reads commands. The argument slices it returns alias an internal
// buffer and are valid until the next call to ReadCommand.
type Reader struct {
	br     *bufio.Reader
	lim    Limits
	unauth bool
	args   [][]byte
	arena  []byte
	// Offset counts bytes consumed by complete commands (used by log replay
	// to find the end of the last whole command).
	Offset int64
}

// NewReader returns a Reader over r with the given limits (zero fields take
// the defaults).
func NewReader(r io.Reader, lim Limits) *Reader {
	if lim.MaxBulk <= 0 {
		lim.MaxBulk = DefaultMaxBulk
	}
	if lim.MaxArgs <= 0 {
		lim.MaxArgs = DefaultMaxArgs
	}
	if lim.MaxQuery <= 0 {
		lim.MaxQuery = DefaultMaxQuery
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), lim: lim}
}

// SetUnauthenticated switches the reader to the tight limits Redis applies
// before a client has authenticated.
func (r *Reader) SetUnauthenticated(on bool) { r.unauth = on }

// Buffered reports how many bytes are already read from the connection
// and waiting: when it is zero after a command, the pipeline is drained
// and the replies should be flushed.
func (r *Reader) Buffered() int { return r.br.Buffered() }

func (r *Reader) limits() (maxArgs, maxBulk int) {
	if r.unauth {
		return UnauthMaxArgs, UnauthMaxBulk
	}
	return r.lim.MaxArgs, r.lim.MaxBulk
}

// ReadCommand reads the next command. An empty inline line yields a
// zero-length command (callers skip it). Errors: io.EOF at a clean
// boundary, io.ErrUnexpectedEOF inside a command, *ProtocolError for a
// malformed or over-limit request, or the connection's read error.
func (r *Reader) ReadCommand() ([][]byte, error) {
	r.args = r.args[:0]
	r.arena = r.arena[:0]
	var n int64
	b, err := r.br.Peek(1)
	if err != nil {
		return nil, err
	}
	if b[0] != '*' {
		args, used, err := r.readInline()
		if err == nil {
			r.Offset += used
		}
		return args, err
	}
	line, err := r.readLine(&n, MaxInline)
	if err != nil {
		return nil, eofInside(err)
	}
	maxArgs, maxBulk := r.limits()
	count, ok := parseInt(line[1:])
	if !ok || count > int64(maxArgs) {
		return nil, protoErr("invalid multibulk length")
	}
	if count <= 0 {
		r.Offset += n
		return r.args, nil
	}
	// Offsets into the arena, turned into slices once the arena stops moving.
	type span struct{ off, n int }
	var spansBuf [16]span
	spans := spansBuf[:0]
	total := 0
	for i := int64(0); i < count; i++ {
		line, err := r.readLine(&n, MaxInline)
		if err != nil {
			return nil, eofInside(err)
		}
		if line[0] != '$' {
			return nil, protoErr("expected '$', got '%c'", line[0])
		}
		blen, ok := parseInt(line[1:])
		if !ok || blen < 0 || blen > int64(maxBulk) {
			return nil, protoErr("invalid bulk length")
		}
		total += int(blen)
		if total > r.lim.MaxQuery {
			return nil, protoErr("query buffer limit exceeded (%d bytes)", r.lim.MaxQuery)
		}
		off := len(r.arena)
		if err := r.readBulk(int(blen)); err != nil {
			return nil, eofInside(err)
		}
		n += blen + 2
		spans = append(spans, span{off, int(blen)})
	}
	for _, s := range spans {
		r.args = append(r.args, r.arena[s.off:s.off+s.n:s.off+s.n])
	}
	r.Offset += n
	return r.args, nil
}

// readBulk appends blen bytes plus CRLF to the arena. The arena grows as
// data arrives, never by the announced length alone, so a peer that
// announces a huge argument and sends nothing costs nothing.
func (r *Reader) readBulk(blen int) error {
	for blen > 0 {
		chunk := min(blen, 64<<10)
		off := len(r.arena)
		r.arena = append(r.arena, make([]byte, chunk)...)
		if _, err := io.ReadFull(r.br, r.arena[off:]); err != nil {
			return err
		}
		blen -= chunk
	}
	var crlf [2]byte
	if _, err := io.ReadFull(r.br, crlf[:]); err != nil {
		return err
	}
	if crlf != [2]byte{'\r', '\n'} {
		return protoErr("bulk string not terminated by CRLF")
	}
	return nil
}

func eofInside(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readLine reads one CRLF-terminated line (returned without CRLF; it
// aliases the bufio buffer when it fits).
func (r *Reader) readLine(n *int64, max int) ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, protoErr("too big inline request")
	}
	if err != nil {
		if len(line) > 0 && err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	*n += int64(len(line))
	if len(line) > max {
		return nil, protoErr("too big inline request")
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, protoErr("line not terminated by CRLF")
	}
	line = line[:len(line)-2]
	if len(line) == 0 {
		return nil, protoErr("empty line")
	}
	return line, nil
}

// readInline parses a telnet-style command line: arguments separated by
// spaces, with "double" (backslash escapes) and 'single' quotes.
func (r *Reader) readInline() ([][]byte, int64, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, 0, protoErr("too big inline request")
	}
	if err != nil {
		if len(line) > 0 && err == io.EOF {
			return nil, 0, io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	used := int64(len(line))
	line = bytes.TrimRight(line, "\r\n")
	maxArgs, _ := r.limits()
	r.arena = append(r.arena, line...)
	// The parsed arguments are appended after the raw line; src keeps
	// pointing at the line even if the arena moves.
	src := r.arena[:len(line):len(line)]
	type span struct{ off, n int }
	var spans []span
	i := 0
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
		spans = append(spans, span{off, len(r.arena) - off})
		if len(spans) > maxArgs {
			return nil, 0, protoErr("invalid multibulk length")
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
