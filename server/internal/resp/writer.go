package resp

import (
	"encoding/binary"
	"io"
	"math"
	"slices"
	"strconv"
)

// Writer accumulates replies in a buffer and writes them out on Flush.
// Proto selects the encoding of the types that differ between RESP2 and
// RESP3 (null, boolean, map, set, double); it is changed by HELLO.
type Writer struct {
	w     io.Writer
	buf   []byte
	Proto int
}

// NewWriter returns a RESP2 writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, Proto: 2} }

// Buffered returns the bytes waiting for Flush.
func (w *Writer) Buffered() int { return len(w.buf) }

// Cap returns the capacity of the reply buffer: the memory the writer
// holds (it is released by Flush once past 1 MiB).
func (w *Writer) Cap() int { return cap(w.buf) }

// Bytes returns the buffered replies (for tests and the log replayer).
func (w *Writer) Bytes() []byte { return w.buf }

// Reset drops the buffered replies.
func (w *Writer) Reset() { w.buf = w.buf[:0] }

// Flush writes the buffered replies. A buffer that grew past 1 MiB for a
// large reply is released afterwards so an idle connection holds little.
func (w *Writer) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// Status writes a simple string (+OK).
func (w *Writer) Status(s string) { w.buf = AppendStatus(w.buf, s) }

// Error writes an error line; msg is sent verbatim (it carries its own
// prefix such as "ERR " or "WRONGTYPE ", or none, as RedisBloom does).
func (w *Writer) Error(msg string) { w.buf = AppendError(w.buf, msg) }

// Int writes an integer.
func (w *Writer) Int(v int64) { w.buf = AppendInt(w.buf, v) }

// Bool writes a RESP3 boolean, or the integer 1/0 under RESP2.
func (w *Writer) Bool(v bool) {
	if w.Proto >= 3 {
		if v {
			w.buf = append(w.buf, "#t\r\n"...)
		} else {
			w.buf = append(w.buf, "#f\r\n"...)
		}
		return
	}
	if v {
		w.buf = append(w.buf, ":1\r\n"...)
	} else {
		w.buf = append(w.buf, ":0\r\n"...)
	}
}

// Bools writes Bool(v) for every v, growing the buffer once: the element
// replies of BF.MEXISTS and BF.MADD, 4 bytes each in both protocols.
func (w *Writer) Bools(vs []bool) {
	yes, no := uint32(':'|'1'<<8|'\r'<<16|'\n'<<24), uint32(':'|'0'<<8|'\r'<<16|'\n'<<24)
	if w.Proto >= 3 {
		yes, no = uint32('#'|'t'<<8|'\r'<<16|'\n'<<24), uint32('#'|'f'<<8|'\r'<<16|'\n'<<24)
	}
	n := len(w.buf)
	w.buf = slices.Grow(w.buf, 4*len(vs))[:n+4*len(vs)]
	out := w.buf[n:]
	for i, v := range vs {
		word := no
		if v {
			word = yes
		}
		binary.LittleEndian.PutUint32(out[4*i:], word)
	}
}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) { w.buf = AppendBulk(w.buf, b) }

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.buf = AppendBulkString(w.buf, s) }

// Null writes a null: "_" in RESP3, the null bulk string in RESP2.
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "$-1\r\n"...)
	}
}

// NullArray writes a null array ("*-1" in RESP2, "_" in RESP3).
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "*-1\r\n"...)
	}
}

// Array writes an array header for n elements.
func (w *Writer) Array(n int) { w.buf = appendPrefix(w.buf, '*', int64(n)) }

// Map writes a map header for n key/value pairs (RESP2: an array of 2n).
func (w *Writer) Map(n int) {
	if w.Proto >= 3 {
		w.buf = appendPrefix(w.buf, '%', int64(n))
	} else {
		w.buf = appendPrefix(w.buf, '*', int64(2*n))
	}
}

// Set writes a set header (RESP2: an array).
func (w *Writer) Set(n int) {
	if w.Proto >= 3 {
		w.buf = appendPrefix(w.buf, '~', int64(n))
	} else {
		w.buf = appendPrefix(w.buf, '*', int64(n))
	}
}

// Double writes a RESP3 double, or a bulk string under RESP2.
func (w *Writer) Double(f float64) {
	var s string
	switch {
	case math.IsInf(f, 1):
		s = "inf"
	case math.IsInf(f, -1):
		s = "-inf"
	case math.IsNaN(f):
		s = "nan"
	default:
		s = strconv.FormatFloat(f, 'g', 17, 64)
	}
	if w.Proto >= 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Verbatim writes a RESP3 verbatim string of format "txt" (INFO's reply
// type), or a bulk string under RESP2.
func (w *Writer) Verbatim(s string) {
	if w.Proto >= 3 {
		w.buf = appendPrefix(w.buf, '=', int64(len(s)+4))
		w.buf = append(w.buf, "txt:"...)
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Raw appends already-encoded bytes.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// AppendStatus appends "+s\r\n".
func AppendStatus(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendError appends "-msg\r\n"; CR and LF inside msg become spaces so a
// message can never break the framing.
func AppendError(b []byte, msg string) []byte {
	b = append(b, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

// AppendInt appends ":v\r\n".
func AppendInt(b []byte, v int64) []byte { return appendPrefix(b, ':', v) }

// AppendBulk appends "$len\r\nbytes\r\n".
func AppendBulk(b []byte, p []byte) []byte {
	b = appendPrefix(b, '$', int64(len(p)))
	b = append(b, p...)
	return append(b, '\r', '\n')
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendPrefix(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendArray appends an array header.
func AppendArray(b []byte, n int) []byte { return appendPrefix(b, '*', int64(n)) }

// AppendCommand appends args as a RESP array of bulk strings: the form
// clients send and the append-only log stores.
func AppendCommand(b []byte, args [][]byte) []byte {
	b = AppendArray(b, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

func appendPrefix(b []byte, c byte, v int64) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\r', '\n')
}
