package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/bloomery/bloomery/server/internal/resp"
)

// Log file format, version 2 (little-endian):
//
//	file header, 16 bytes:
//	  8   magic "BLMYALOG"
//	  4   version (2)
//	  4   CRC-32C of the 12 bytes before
//	records, each:
//	  4   payload length n
//	  4   CRC-32C of the payload
//	  4   CRC-32C of the 8 bytes before (the header check)
//	  n   payload: one or more whole commands as RESP arrays
//
// One record is one group-commit write: every command appended since the
// previous write, so the framing costs 12 bytes and one CRC pass per
// write, not per command. A record is verified whole before any of its
// commands is replayed, so a record is applied entirely or not at all.
//
// Version 1 (logs written before the header existed) is plain RESP
// arrays with no header; it is still replayed, and a server never
// appends to it: it starts a new generation in version 2.
const (
	logMagic   = "BLMYALOG"
	logVersion = 2
	fileHdrLen = 16
	recHdrLen  = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileHeader is the version 2 file header.
func fileHeader() []byte {
	b := make([]byte, 0, fileHdrLen)
	b = append(b, logMagic...)
	b = binary.LittleEndian.AppendUint32(b, logVersion)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// frame fills the first recHdrLen bytes of rec (a record whose payload
// follows them) with its header.
func frame(rec []byte) {
	putRecHeader(rec[:recHdrLen], rec[recHdrLen:])
}

func putRecHeader(h, payload []byte) {
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[8:], crc32.Checksum(h[:8], castagnoli))
}

// maxRecord bounds one record's payload: the framing's u32 length.
const maxRecord = 1<<32 - 1

// logDamage describes where and why a log stops being readable. Torn
// reports damage that is provably an incomplete final record (a crash
// during the last write): a header cut short, a valid header whose
// length runs past the end of the file, a final record whose payload
// ends in zero bytes that were never written, or zero bytes up to the
// end. Anything else is corruption.
type logDamage struct {
	Off    int64 // offset of the first byte not replayed
	Torn   bool
	Reason string
}

func (d *logDamage) Error() string { return fmt.Sprintf("at byte %d: %s", d.Off, d.Reason) }

// decodeLog reads a log file of size bytes from r (positioned at its
// start) and calls exec for each command, in order. It returns the format
// version (1 or 2; 2 for an empty file), the number of commands run, and
// nil at a clean end, a *logDamage where the file stops being readable,
// or exec's error (wrapped in nothing: callers compare it). Memory: one
// record's payload at a time (version 2), or the RESP reader's buffer
// (version 1).
func decodeLog(r io.ReadSeeker, size int64, exec func([][]byte) error) (version, n int, err error) {
	head := make([]byte, min(size, fileHdrLen))
	if _, err := io.ReadFull(r, head); err != nil {
		return 2, 0, err
	}
	switch {
	case size == 0:
		return 2, 0, nil
	case head[0] == '*':
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return 1, 0, err
		}
		n, err := decodeV1(r, size, exec)
		return 1, n, err
	case bytes.HasPrefix([]byte(logMagic), head[:min(len(head), len(logMagic))]):
		if size < fileHdrLen {
			return 2, 0, &logDamage{Off: 0, Torn: true, Reason: "file header cut short"}
		}
		if crc32.Checksum(head[:12], castagnoli) != binary.LittleEndian.Uint32(head[12:]) {
			return 2, 0, &logDamage{Off: 0, Reason: "file header checksum mismatch"}
		}
		if v := binary.LittleEndian.Uint32(head[8:]); v != logVersion {
			return int(v), 0, &logDamage{Off: 0, Reason: fmt.Sprintf("unsupported log format version %d (this server reads 1 and 2)", v)}
		}
		n, err := decodeV2(r, size, exec)
		return 2, n, err
	case allZero(head):
		if z, err := zerosFrom(r, int64(len(head)), size); err != nil || !z {
			return 2, 0, &logDamage{Off: 0, Reason: "zero bytes followed by data where the file header belongs"}
		}
		return 2, 0, &logDamage{Off: 0, Torn: true, Reason: "zero bytes only (never written)"}
	}
	return 2, 0, &logDamage{Off: 0, Reason: "neither a version 2 header nor a RESP command at the start"}
}

func decodeV2(r io.ReadSeeker, size int64, exec func([][]byte) error) (int, error) {
	off := int64(fileHdrLen)
	var hdr [recHdrLen]byte
	var payload []byte
	var br bytes.Reader
	rd := resp.NewReader(&br, resp.Limits{})
	n := 0
	for off < size {
		left := size - off
		if left < recHdrLen {
			buf := hdr[:left]
			if _, err := io.ReadFull(r, buf); err != nil {
				return n, err
			}
			if allZero(buf) {
				return n, &logDamage{Off: off, Torn: true, Reason: "zero bytes at the end (never written)"}
			}
			return n, &logDamage{Off: off, Torn: true, Reason: fmt.Sprintf("record header cut short (%d of %d bytes)", left, recHdrLen)}
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return n, err
		}
		if crc32.Checksum(hdr[:8], castagnoli) != binary.LittleEndian.Uint32(hdr[8:]) {
			if allZero(hdr[:]) {
				if z, err := zerosFrom(r, off+recHdrLen, size); err == nil && z {
					return n, &logDamage{Off: off, Torn: true, Reason: "zero bytes at the end (never written)"}
				}
				return n, &logDamage{Off: off, Reason: "zero bytes in the middle of the log"}
			}
			return n, &logDamage{Off: off, Reason: "record header checksum mismatch"}
		}
		plen := int64(binary.LittleEndian.Uint32(hdr[0:]))
		if plen > left-recHdrLen {
			return n, &logDamage{Off: off, Torn: true, Reason: fmt.Sprintf("final record of %d bytes runs past the end of the file (%d bytes there)", plen, left-recHdrLen)}
		}
		if int64(cap(payload)) < plen {
			payload = make([]byte, plen)
		}
		payload = payload[:plen]
		if _, err := io.ReadFull(r, payload); err != nil {
			return n, err
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			if off+recHdrLen+plen == size && plen > 0 && payload[plen-1] == 0 {
				// Every record's payload ends with "\r\n": a final
				// record ending in a zero byte was not written whole.
				return n, &logDamage{Off: off, Torn: true, Reason: "final record's payload ends in zero bytes (never written)"}
			}
			return n, &logDamage{Off: off, Reason: "record checksum mismatch"}
		}
		br.Reset(payload)
		rd.Offset = 0
		for rd.Offset < plen {
			args, err := rd.ReadCommand()
			if err == nil && len(args) == 0 {
				err = errors.New("empty command")
			}
			if err != nil {
				return n, &logDamage{Off: off, Reason: fmt.Sprintf("record with a valid checksum holds a bad command at payload byte %d: %v", rd.Offset, err)}
			}
			if err := exec(args); err != nil {
				return n, err
			}
			n++
		}
		off += recHdrLen + plen
	}
	return n, nil
}

// decodeV1 replays a version 1 (plain RESP) log. Without checksums a
// damaged bulk length can make the rest of the file look like one
// unfinished command; the tail is taken for a torn final command only if
// no later command starts in it ("\r\n*" and a digit after its first
// line).
func decodeV1(r io.ReadSeeker, size int64, exec func([][]byte) error) (int, error) {
	rd := resp.NewReader(r, resp.Limits{})
	n := 0
	for {
		good := rd.Offset
		args, err := rd.ReadCommand()
		if err == io.EOF {
			return n, nil
		}
		if err == nil && len(args) == 0 {
			err = errors.New("empty command")
		}
		if err != nil {
			if _, serr := r.Seek(good, io.SeekStart); serr != nil {
				return n, serr
			}
			tail, rerr := io.ReadAll(io.LimitReader(r, size-good))
			if rerr != nil {
				return n, rerr
			}
			switch {
			case allZero(tail):
				return n, &logDamage{Off: good, Torn: true, Reason: "zero bytes at the end (never written)"}
			case errors.Is(err, io.ErrUnexpectedEOF) && !laterCommand(tail):
				return n, &logDamage{Off: good, Torn: true, Reason: "incomplete final command"}
			case errors.Is(err, io.ErrUnexpectedEOF):
				return n, &logDamage{Off: good, Reason: "a command runs to the end of the file over what look like later commands (a damaged length?)"}
			}
			return n, &logDamage{Off: good, Reason: err.Error()}
		}
		if err := exec(args); err != nil {
			return n, err
		}
		n++
	}
}

// laterCommand reports whether a RESP array header starts after the
// first line of tail.
func laterCommand(tail []byte) bool {
	i := bytes.Index(tail, []byte("\r\n"))
	if i < 0 {
		return false
	}
	for p := tail[i:]; ; {
		j := bytes.Index(p, []byte("\r\n*"))
		if j < 0 {
			return false
		}
		if j+3 < len(p) && p[j+3] >= '0' && p[j+3] <= '9' {
			return true
		}
		p = p[j+3:]
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// zerosFrom reports whether r holds only zero bytes from off to size.
func zerosFrom(r io.ReadSeeker, off, size int64) (bool, error) {
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return false, err
	}
	buf := make([]byte, 64<<10)
	for off < size {
		k, err := r.Read(buf[:min(int64(len(buf)), size-off)])
		if !allZero(buf[:k]) {
			return false, nil
		}
		off += int64(k)
		if err != nil {
			return off >= size, nil
		}
	}
	return true, nil
}

// DecodeLog replays a log file's bytes held in memory: it calls exec for
// each command in order and returns the format version, the commands
// run, and the offset where decoding stopped with the reason (nil at a
// clean end). It is the decoder Replay uses, offered for tests and tools.
func DecodeLog(data []byte, exec func(args [][]byte) error) (version, commands int, err error) {
	return decodeLog(bytes.NewReader(data), int64(len(data)), exec)
}
