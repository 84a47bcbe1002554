package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, in string, lim Limits) ([]string, error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), lim)
	var out []string
	for {
		args, err := r.ReadCommand()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = string(a)
		}
		out = append(out, strings.Join(parts, "|"))
	}
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{"*2\r\n$4\r\nPING\r\n$0\r\n\r\n", "PING|", ""},
		{"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", "PING,PING", ""},
		{"PING a  b\r\n", "PING|a|b", ""},
		{"ECHO \"a\\tb\\x41\"\r\n", "ECHO|a\tbA", ""},
		{"ECHO 'it\\'s'\r\n", "ECHO|it's", ""},
		{"\r\nPING\n", ",PING", ""},
		{"*0\r\n", "", ""},
		{"*1\r\n$3\r\nab", "", "unexpected EOF"},
		{"*2\r\n$1\r\na\r\n", "", "unexpected EOF"},
		{"*1\r\n$1\r\nabc\r\n", "", "ERR Protocol error: bulk string not terminated by CRLF"},
		{"*2\r\n$3\r\nabc\r\n$12\r\nabcdefghijklX\r\n", "", "ERR Protocol error: bulk string not terminated by CRLF"},
		{"*2\r\n$3\r\nabc\r\n$1x\r\na\r\n", "", "ERR Protocol error: invalid bulk length"},
		{"*2\r\n$3\r\nabc\r\n$12\r", "", "unexpected EOF"},
		{"*3\r\n$2\r\nab\r\n$12\r\nabcdefghijkl\r\n$100\r\n" + strings.Repeat("b", 100) + "\r\n", "ab|abcdefghijkl|" + strings.Repeat("b", 100), ""},
		{"*1\r\n$-1\r\n", "", "ERR Protocol error: invalid bulk length"},
		{"*1\r\n$99999\r\n", "", "ERR Protocol error: invalid bulk length"},
		{"*4\r\n", "", "ERR Protocol error: invalid multibulk length"},
		{"*1000\r\n", "", "ERR Protocol error: invalid multibulk length"},
		{"*1x\r\n", "", "ERR Protocol error: invalid multibulk length"},
		{"*\r\n", "", "ERR Protocol error: invalid multibulk length"},
		{"*2\r", "", "unexpected EOF"},
		{"*02\r\n$1\r\na\r\n$1\r\nb\r\n*-1\r\n", "a|b,", ""},
		{"*1\r\n:1\r\n", "", "ERR Protocol error: expected '$', got ':'"},
		{"ECHO \"a\r\n", "", "ERR Protocol error: unbalanced quotes in request"},
		{"ECHO \"a\"b\r\n", "", "ERR Protocol error: unbalanced quotes in request"},
		{"*2\r\n$600\r\n" + strings.Repeat("a", 600) + "\r\n$600\r\n", "", "ERR Protocol error: query buffer limit exceeded (1000 bytes)"},
	} {
		got, err := readAll(t, tc.in, Limits{MaxBulk: 1000, MaxArgs: 3, MaxQuery: 1000})
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%q: got %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestUnauthenticatedLimits(t *testing.T) {
	r := NewReader(strings.NewReader(fmt.Sprintf("*1\r\n$%d\r\n%s\r\n", UnauthMaxBulk+1, strings.Repeat("x", UnauthMaxBulk+1))), Limits{})
	r.SetUnauthenticated(true)
	if _, err := r.ReadCommand(); !IsProtocolError(err) {
		t.Fatalf("unauthenticated 16 KiB+ argument accepted: %v", err)
	}
}

// A peer announcing a huge argument and sending nothing does not make the
// reader allocate the announced size.
func TestNoAllocationByAnnouncement(t *testing.T) {
	r := NewReader(strings.NewReader("*1\r\n$500000000\r\nabc"), Limits{})
	_, err := r.ReadCommand()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	if cap(r.arena) > 1<<20 || cap(r.buf) > 1<<20 {
		t.Fatalf("buffers grew to %d + %d bytes for a 3-byte argument", cap(r.arena), cap(r.buf))
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Bool(true)
	w.Bools([]bool{false, true})
	w.Null()
	w.Map(1)
	w.Double(1.5)
	w.Proto = 3
	w.Bool(false)
	w.Bools([]bool{true, false})
	w.Bools(nil)
	w.Null()
	w.Map(1)
	w.Double(1.5)
	w.Verbatim("x")
	w.Error("ERR a\r\nb")
	w.Flush()
	want := ":1\r\n:0\r\n:1\r\n$-1\r\n*2\r\n$3\r\n1.5\r\n#f\r\n#t\r\n#f\r\n_\r\n%1\r\n,1.5\r\n=5\r\ntxt:x\r\n-ERR a  b\r\n"
	if buf.String() != want {
		t.Fatalf("got %q\nwant %q", buf.String(), want)
	}
}

// FuzzReader: the reader never panics, and every command it returns
// re-encodes (AppendCommand) to bytes it reads back identically.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$4\r\nPING\r\n$0\r\n\r\n", "PING a \"b c\" 'd'\r\n", "*1\r\n$3\r\nabc\r\n*0\r\n",
		"*-1\r\n", "$3\r\nabc\r\n", "ECHO \"\\x4", "*1\r\n$1\r\na\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), Limits{MaxBulk: 1 << 16, MaxArgs: 64, MaxQuery: 1 << 17})
		for i := 0; i < 100; i++ {
			args, err := r.ReadCommand()
			if err != nil {
				return
			}
			enc := AppendCommand(nil, args)
			r2 := NewReader(bytes.NewReader(enc), Limits{})
			back, err := r2.ReadCommand()
			if err != nil || len(back) != len(args) {
				t.Fatalf("re-read %q: %v", enc, err)
			}
			for j := range back {
				if !bytes.Equal(back[j], args[j]) {
					t.Fatalf("argument %d changed: %q vs %q", j, back[j], args[j])
				}
			}
		}
	})
}

// chunkReader returns at most the next size(i) bytes per Read.
type chunkReader struct {
	data []byte
	i    int
	size func(i int) int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), max(1, c.size(c.i)))
	c.i++
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// The same stream read whole and in pieces of every size (including one
// byte at a time, and commands larger than the initial buffer that arrive
// in many reads) yields the same commands and the same Offset.
func TestReaderPieces(t *testing.T) {
	var cmds [][][]byte
	big := bytes.Repeat([]byte("x"), 3*initialBuffer+7)
	many := make([][]byte, 20000)
	for i := range many {
		many[i] = []byte(fmt.Sprintf("item%d", i))
	}
	cmds = append(cmds, [][]byte{[]byte("SET"), []byte("k"), big})
	cmds = append(cmds, append([][]byte{[]byte("BF.MADD"), []byte("k")}, many...))
	for i := 0; i < 3000; i++ {
		c := [][]byte{[]byte("BF.ADD"), []byte("key"), []byte(strings.Repeat("v", i%97))}
		cmds = append(cmds, c)
	}
	cmds = append(cmds, [][]byte{[]byte("")}, [][]byte{[]byte("PING"), big[:initialBuffer-20]})
	var stream []byte
	for _, c := range cmds {
		stream = AppendCommand(stream, c)
	}
	stream = append(stream, "PING  a\r\n"...)
	want := append(cmds, [][]byte{[]byte("PING"), []byte("a")})
	for name, size := range map[string]func(int) int{
		"whole":   func(int) int { return len(stream) },
		"1 byte":  func(int) int { return 1 },
		"7 bytes": func(int) int { return 7 },
		"varied":  func(i int) int { return (i*7919)%9000 + 1 },
		"4 KiB":   func(int) int { return 4096 },
	} {
		r := NewReader(&chunkReader{data: stream, size: size}, Limits{})
		for i, w := range want {
			got, err := r.ReadCommand()
			if err != nil {
				t.Fatalf("%s: command %d: %v", name, i, err)
			}
			if len(got) != len(w) {
				t.Fatalf("%s: command %d: %d arguments, want %d", name, i, len(got), len(w))
			}
			for j := range w {
				if !bytes.Equal(got[j], w[j]) {
					t.Fatalf("%s: command %d argument %d differs", name, i, j)
				}
			}
			if i < len(cmds) && !bytes.Equal(r.Raw(), AppendCommand(nil, w)) {
				t.Fatalf("%s: command %d: Raw is not the bytes sent", name, i)
			}
			if i == len(cmds) && r.Raw() != nil {
				t.Fatalf("%s: inline command has Raw bytes", name)
			}
		}
		if _, err := r.ReadCommand(); err != io.EOF {
			t.Fatalf("%s: after the stream: %v, want EOF", name, err)
		}
		if r.Offset != int64(len(stream)) {
			t.Fatalf("%s: Offset %d, want %d", name, r.Offset, len(stream))
		}
		if cap(r.buf) > bigBuffer {
			t.Fatalf("%s: drained buffer kept %d bytes", name, cap(r.buf))
		}
	}
}

// repeatReader serves the same bytes forever.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.data[r.off:])
		n += c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}

// Reading pipelined BF.MADD commands of 100 items allocates nothing once
// the buffers have grown.
func TestReadCommandAllocs(t *testing.T) {
	args := [][]byte{[]byte("BF.MADD"), []byte("bench:bf")}
	for i := 0; i < 100; i++ {
		args = append(args, []byte(fmt.Sprintf("%012d", i*7777)))
	}
	r := NewReader(&repeatReader{data: AppendCommand(nil, args)}, Limits{})
	for i := 0; i < 100; i++ {
		r.ReadCommand()
	}
	allocs := testing.AllocsPerRun(1000, func() {
		got, err := r.ReadCommand()
		if err != nil || len(got) != 102 || !bytes.Equal(got[101], args[101]) {
			t.Fatalf("read %d args, %v", len(got), err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per command, want 0", allocs)
	}
}

// BenchmarkReadCommand: a pipelined BF.MADD of 100 12-byte items.
func BenchmarkReadCommand(b *testing.B) {
	args := [][]byte{[]byte("BF.MADD"), []byte("bench:bf")}
	for i := 0; i < 100; i++ {
		args = append(args, []byte(fmt.Sprintf("%012d", i*7777)))
	}
	r := NewReader(&repeatReader{data: AppendCommand(nil, args)}, Limits{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ReadCommand(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadCommandSingle: a pipelined BF.ADD of one 12-byte item.
func BenchmarkReadCommandSingle(b *testing.B) {
	args := [][]byte{[]byte("BF.ADD"), []byte("bench:bf"), []byte("000000123456")}
	r := NewReader(&repeatReader{data: AppendCommand(nil, args)}, Limits{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ReadCommand(); err != nil {
			b.Fatal(err)
		}
	}
}
