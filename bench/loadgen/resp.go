package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// A minimal RESP2 client, written for load generation: the caller appends
// whole pipelines of commands into one buffer (one write system call per
// pipeline) and reads the replies back with a reader that allocates nothing
// for integer, status and array-of-integer replies. It never sends HELLO, so
// both servers answer in RESP2. Not safe for concurrent use: one per
// connection goroutine.

// appendCommand appends one RESP array of bulk strings.
func appendCommand(b []byte, args ...[]byte) []byte {
	b = appendHeader(b, '*', len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b, s []byte) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkString(b []byte, s string) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// errReply is a RESP error reply from the server (the line after '-').
type errReply struct{ msg string }

func (e *errReply) Error() string { return "server error reply: " + e.msg }

// reader parses RESP2 replies from a buffered connection.
type reader struct{ br *bufio.Reader }

// line returns the next line without its CRLF; the slice is valid until the
// next read.
func (r *reader) line() ([]byte, error) {
	l, err := r.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("malformed reply line %q", l)
	}
	return l[:len(l)-2], nil
}

func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty integer")
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, errors.New("bad integer")
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<62)/10 {
			return 0, fmt.Errorf("bad integer %q", b)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// head reads one reply header: its type byte and, for ':', '*' and '$', the
// number; for '+' the status text is in s. An error reply is returned as
// *errReply.
func (r *reader) head() (kind byte, n int64, s []byte, err error) {
	l, err := r.line()
	if err != nil {
		return 0, 0, nil, err
	}
	kind = l[0]
	switch kind {
	case '+':
		return kind, 0, l[1:], nil
	case '-':
		return kind, 0, nil, &errReply{string(l[1:])}
	case ':', '*', '$':
		n, err = parseInt(l[1:])
		return kind, n, nil, err
	}
	return 0, 0, nil, fmt.Errorf("unexpected reply type %q", l)
}

// integer reads an integer reply.
func (r *reader) integer() (int64, error) {
	k, n, _, err := r.head()
	if err != nil {
		return 0, err
	}
	if k != ':' {
		return 0, fmt.Errorf("want an integer reply, got type %q", k)
	}
	return n, nil
}

// status reads a simple-string reply and checks its text.
func (r *reader) status(want string) error {
	k, _, s, err := r.head()
	if err != nil {
		return err
	}
	if k != '+' || string(s) != want {
		return fmt.Errorf("want +%s, got type %q %q", want, k, s)
	}
	return nil
}

// arrayLen reads an array header.
func (r *reader) arrayLen() (int, error) {
	k, n, _, err := r.head()
	if err != nil {
		return 0, err
	}
	if k != '*' {
		return 0, fmt.Errorf("want an array reply, got type %q", k)
	}
	return int(n), nil
}

// skip reads and discards one reply of any shape (used only in set-up).
func (r *reader) skip() error {
	k, n, _, err := r.head()
	if err != nil {
		return err
	}
	switch k {
	case '*':
		for i := int64(0); i < n; i++ {
			if err := r.skip(); err != nil {
				return err
			}
		}
	case '$':
		if n >= 0 {
			if _, err := r.br.Discard(int(n) + 2); err != nil {
				return err
			}
		}
	}
	return nil
}

// client is one connection.
type client struct {
	conn net.Conn
	r    reader
	buf  []byte
}

func dial(addr string) (*client, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &client{conn: c, r: reader{bufio.NewReaderSize(c, 64<<10)}}, nil
}

// do sends one command and discards its reply, returning an error reply as
// an error. For set-up, not for measured load.
func (c *client) do(args ...string) error {
	c.buf = c.buf[:0]
	c.buf = appendHeader(c.buf, '*', len(args))
	for _, a := range args {
		c.buf = appendBulkString(c.buf, a)
	}
	if _, err := c.conn.Write(c.buf); err != nil {
		return err
	}
	return c.r.skip()
}

func (c *client) Close() error { return c.conn.Close() }
