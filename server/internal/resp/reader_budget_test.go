package resp

import (
	"bytes"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// chunks is a source that returns one piece per Read (a piece larger
// than the buffer is returned over several Reads), then io.EOF.
type chunks struct{ parts [][]byte }

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.parts) > 0 && len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	return n, nil
}

func bulkCmd(args ...string) []byte {
	var b bytes.Buffer
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.Bytes()
}

// TestReaderShrinksAfterLargeRequest: after a 4 MiB command, the buffer
// goes back to its initial size even when the next command was already
// partly received with it (the buffer never drains completely), and the
// reader keeps no slice of the large buffer.
func TestReaderShrinksAfterLargeRequest(t *testing.T) {
	big := bulkCmd("SET", "k", strings.Repeat("v", 4<<20))
	ping := bulkCmd("PING")
	// The big command and the first half of a PING arrive together, and
	// every later read ends inside the next PING.
	first := append(append([]byte(nil), big...), ping[:5]...)
	rest := append(append(append([]byte(nil), ping[5:]...), ping...), ping[:5]...)
	src := &chunks{parts: [][]byte{first, rest, ping[5:]}}
	r := NewReader(src, DefaultLimits)
	args, err := r.ReadCommand()
	if err != nil || len(args) != 3 || len(args[2]) != 4<<20 {
		t.Fatalf("big command: %d args, %v", len(args), err)
	}
	grown := cap(r.buf)
	for i := range 3 {
		args, err = r.ReadCommand()
		if err != nil || len(args) != 1 || string(args[0]) != "PING" {
			t.Fatalf("PING %d: %q %v", i, args, err)
		}
	}
	if cap(r.buf) > initialBuffer {
		t.Fatalf("buffer grew to %d for a 4 MiB command and kept %d after it", grown, cap(r.buf))
	}
	for _, a := range r.args[:cap(r.args)] {
		if len(a) > 0 && cap(a) >= 4<<20 {
			t.Fatal("the reader still holds an argument of the large command")
		}
	}
}

// TestReaderBudgetRefusesDeclaredBulk: a command whose declared length
// would take the shared budget past its limit is refused on its header,
// before the buffer grows (the peer never has to send the bytes).
func TestReaderBudgetRefusesDeclaredBulk(t *testing.T) {
	b := &Budget{Limit: 1 << 20}
	hdr := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$400000000\r\nabc"
	r := NewReader(&chunks{parts: [][]byte{[]byte(hdr), bytes.Repeat([]byte("x"), 1<<20)}}, DefaultLimits)
	r.SetBudget(b)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err := r.ReadCommand()
	runtime.ReadMemStats(&ms1)
	if !IsProtocolError(err) || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("declared 400 MB under a 1 MiB budget: %v", err)
	}
	if got := ms1.TotalAlloc - ms0.TotalAlloc; got > 256<<10 {
		t.Fatalf("the refusal allocated %d bytes", got)
	}
	if b.Used() != initialBuffer {
		t.Fatalf("budget used %d, want the first buffer (%d)", b.Used(), initialBuffer)
	}
	r.Release()
	if b.Used() != 0 {
		t.Fatalf("budget used %d after Release", b.Used())
	}
}

// TestReaderBudgetShared: the budget is the total of all readers: while
// one holds a large incomplete command, another's growth past the limit
// is refused; once the first is released the second gets through.
func TestReaderBudgetShared(t *testing.T) {
	b := &Budget{Limit: 5 << 20}
	value := strings.Repeat("v", 2<<20)
	full := bulkCmd("SET", "k", value)
	// a receives all but the last byte of a 2 MiB command, then stalls.
	a := NewReader(&chunks{parts: [][]byte{full[:len(full)-1]}}, DefaultLimits)
	a.SetBudget(b)
	if _, err := a.ReadCommand(); err != io.ErrUnexpectedEOF {
		t.Fatalf("a: %v", err)
	}
	if b.Used() < 2<<20 {
		t.Fatalf("budget used %d while a holds 2 MiB", b.Used())
	}
	c := NewReader(&chunks{parts: [][]byte{full}}, DefaultLimits)
	c.SetBudget(b)
	if _, err := c.ReadCommand(); !IsProtocolError(err) {
		t.Fatalf("c over the shared budget: %v", err)
	}
	c.Release()
	a.Release()
	if b.Used() != 0 {
		t.Fatalf("budget used %d after both released", b.Used())
	}
	d := NewReader(&chunks{parts: [][]byte{full}}, DefaultLimits)
	d.SetBudget(b)
	args, err := d.ReadCommand()
	if err != nil || string(args[2]) != value {
		t.Fatalf("d within the budget: %v", err)
	}
	if _, err := d.ReadCommand(); err != io.EOF {
		t.Fatal(err)
	}
	if b.Used() > initialBuffer {
		t.Fatalf("budget used %d after d drained", b.Used())
	}
}
