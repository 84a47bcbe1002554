package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startServer runs a server on a loopback port for the test's lifetime.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(context.Background(), ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, ln.Addr().String()
}

// client is a minimal RESP client that decodes replies into Go values:
// string (simple), []byte (bulk), int64, bool, nil, []any, map (as
// []any pairs tagged by mapReply), float64, and respErr for errors.
type client struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

type respErr string

func (e respErr) Error() string { return string(e) }

type mapReply []any

func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func encode(args ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

func (c *client) send(args ...string) {
	c.t.Helper()
	if _, err := c.nc.Write(encode(args...)); err != nil {
		c.t.Fatal(err)
	}
}

// do sends one command and returns its decoded reply.
func (c *client) do(args ...string) any {
	c.t.Helper()
	c.send(args...)
	return c.read()
}

func (c *client) read() any {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := readReply(c.br)
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return v
}

func readReply(br *bufio.Reader) (any, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("bad line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return respErr(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '#':
		return body == "t", nil
	case '_':
		return nil, nil
	case ',':
		return strconv.ParseFloat(body, 64)
	case '$', '=':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*', '~', '%':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		if line[0] == '%' {
			n *= 2
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(br); err != nil {
				return nil, err
			}
		}
		if line[0] == '%' {
			return mapReply(out), nil
		}
		return out, nil
	}
	return nil, errors.New("unknown reply type " + line[:1])
}

// show renders a reply compactly for comparisons: 1, "OK", "b:bulk",
// "E:err", nil, [a b], {k:v}.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return x
	case []byte:
		return "b:" + string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case respErr:
		return "E:" + string(x)
	case mapReply:
		parts := make([]string, 0, len(x)/2)
		for i := 0; i+1 < len(x); i += 2 {
			parts = append(parts, show(x[i])+"="+show(x[i+1]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = show(x[i])
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// expect runs a command and compares show(reply) with want.
func (c *client) expect(want string, args ...string) {
	c.t.Helper()
	if got := show(c.do(args...)); got != want {
		c.t.Errorf("%q:\n got %s\nwant %s", args, got, want)
	}
}
