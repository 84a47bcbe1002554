package persist

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/bloomery/bloomery"
	"github.com/bloomery/bloomery/internal/wire"
)

// SnapshotName is the snapshot's file name in the data directory.
const SnapshotName = "snapshot.bsnap"

// Snapshot file layout (little-endian):
//
//	8   magic "BLMYSNAP"
//	4   version (1)
//	8   generation of the first log not contained
//	8   unix time of the snapshot (seconds)
//	8   entry count
//	per entry: u32 key length, key, u64 value length, value
//	4   CRC-32C of everything before
//
// Values are keyspace.AppendValue encodings.
const (
	snapMagic   = "BLMYSNAP"
	snapVersion = 1
)

// Entry is one key and its encoded value.
type Entry struct {
	Key   string
	Value []byte
}

// EncodeSnapshot renders a snapshot in memory.
func EncodeSnapshot(gen uint64, unix int64, entries []Entry) []byte {
	size := 40
	for _, e := range entries {
		size += 12 + len(e.Key) + len(e.Value)
	}
	b := make([]byte, 0, size)
	b = append(b, snapMagic...)
	b = binary.LittleEndian.AppendUint32(b, snapVersion)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = binary.LittleEndian.AppendUint64(b, uint64(unix))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(entries)))
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Key)))
		b = append(b, e.Key...)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(e.Value)))
		b = append(b, e.Value...)
	}
	return binary.LittleEndian.AppendUint32(b, wire.CRC32C(b))
}

// SnapshotWriter streams a snapshot to a temp file in the data directory
// through a buffered writer with a running CRC, so writing one needs no
// copy of the whole encoding in memory. Commit makes it the directory's
// snapshot atomically (fsync, rename, directory fsync); Abort removes
// the temp file. A SnapshotWriter is used by one goroutine.
type SnapshotWriter struct {
	dir   string
	f     *os.File
	w     *bufio.Writer
	crc   uint32
	left  uint64 // entries still to add
	err   error
	bytes int64
	num   [12]byte
}

// NewSnapshotWriter starts a snapshot of count entries, for log
// generation gen, taken at unix time unix.
func NewSnapshotWriter(dir string, gen uint64, unix int64, count uint64) (*SnapshotWriter, error) {
	f, err := os.CreateTemp(dir, "snapshot-*.tmp") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("persist: snapshot: %w", err)
	}
	sw := &SnapshotWriter{dir: dir, f: f, w: bufio.NewWriterSize(f, 1<<20), left: count}
	h := make([]byte, 0, 36)
	h = append(h, snapMagic...)
	h = binary.LittleEndian.AppendUint32(h, snapVersion)
	h = binary.LittleEndian.AppendUint64(h, gen)
	h = binary.LittleEndian.AppendUint64(h, uint64(unix))
	h = binary.LittleEndian.AppendUint64(h, count)
	sw.write(h)
	return sw, sw.err
}

func (sw *SnapshotWriter) write(p []byte) {
	if sw.err != nil {
		return
	}
	sw.crc = crc32.Update(sw.crc, castagnoli, p)
	_, sw.err = sw.w.Write(p)
	sw.bytes += int64(len(p))
}

// Add appends one entry; value is not retained.
func (sw *SnapshotWriter) Add(key string, value []byte) error {
	if sw.left == 0 && sw.err == nil {
		sw.err = errors.New("persist: snapshot: more entries than announced")
	}
	sw.left--
	binary.LittleEndian.PutUint32(sw.num[:], uint32(len(key)))
	sw.write(sw.num[:4])
	if sw.err == nil {
		sw.crc = crc32.Update(sw.crc, castagnoli, []byte(key))
		_, sw.err = sw.w.WriteString(key)
		sw.bytes += int64(len(key))
	}
	binary.LittleEndian.PutUint64(sw.num[:], uint64(len(value)))
	sw.write(sw.num[:8])
	sw.write(value)
	if sw.err != nil {
		return fmt.Errorf("persist: snapshot: %w", sw.err)
	}
	return nil
}

// Size is the number of bytes written so far.
func (sw *SnapshotWriter) Size() int64 { return sw.bytes }

// Commit writes the checksum, fsyncs the file, renames it over the
// directory's snapshot and fsyncs the directory. On error the temp file
// is removed.
func (sw *SnapshotWriter) Commit() error {
	if sw.left != 0 && sw.err == nil {
		sw.err = errors.New("persist: snapshot: fewer entries than announced")
	}
	binary.LittleEndian.PutUint32(sw.num[:], sw.crc)
	if sw.err == nil {
		_, sw.err = sw.w.Write(sw.num[:4])
		sw.bytes += 4
	}
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	if sw.err == nil {
		sw.err = sw.f.Sync()
	}
	if cerr := sw.f.Close(); sw.err == nil {
		sw.err = cerr
	}
	if sw.err == nil {
		sw.err = os.Rename(sw.f.Name(), filepath.Join(sw.dir, SnapshotName))
	}
	if sw.err != nil {
		os.Remove(sw.f.Name())
		return fmt.Errorf("persist: snapshot: %w", sw.err)
	}
	return syncDir(sw.dir)
}

// Abort removes the temp file.
func (sw *SnapshotWriter) Abort() {
	sw.f.Close()
	os.Remove(sw.f.Name())
}

// WriteSnapshot writes data as the directory's snapshot atomically: a
// temp file, fsync, rename over the old one, directory fsync.
func WriteSnapshot(dir string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "snapshot-*.tmp")
	if err != nil {
		return fmt.Errorf("persist: snapshot: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(name, filepath.Join(dir, SnapshotName))
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("persist: snapshot: %w", werr)
	}
	return syncDir(dir)
}

// Snapshot is a decoded snapshot; values alias the file's bytes.
type Snapshot struct {
	Gen     uint64
	Unix    int64
	Entries []Entry
}

// ReadSnapshot reads the directory's snapshot. A missing file returns an
// error wrapping os.ErrNotExist; a damaged one wraps bloomery.ErrCorrupt.
func ReadSnapshot(dir string) (Snapshot, error) {
	data, err := os.ReadFile(filepath.Join(dir, SnapshotName))
	if err != nil {
		return Snapshot{}, err
	}
	return DecodeSnapshot(data)
}

// DecodeSnapshot parses a snapshot, validating every length before use.
func DecodeSnapshot(data []byte) (Snapshot, error) {
	bad := func(what string) error {
		return fmt.Errorf("persist: snapshot: %s: %w", what, bloomery.ErrCorrupt)
	}
	if len(data) < 40 || string(data[:8]) != snapMagic {
		return Snapshot{}, bad("bad magic or truncated")
	}
	body := data[:len(data)-4]
	if wire.CRC32C(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return Snapshot{}, bad("checksum mismatch")
	}
	if v := binary.LittleEndian.Uint32(body[8:]); v != snapVersion {
		return Snapshot{}, fmt.Errorf("persist: snapshot version %d: %w", v, bloomery.ErrUnsupportedVersion)
	}
	s := Snapshot{Gen: binary.LittleEndian.Uint64(body[12:]), Unix: int64(binary.LittleEndian.Uint64(body[20:]))}
	n := binary.LittleEndian.Uint64(body[28:])
	p := body[36:]
	if n > uint64(len(p))/12 {
		return Snapshot{}, bad("entry count")
	}
	s.Entries = make([]Entry, 0, n)
	for i := uint64(0); i < n; i++ {
		if len(p) < 4 {
			return Snapshot{}, bad("truncated entry")
		}
		kl := uint64(binary.LittleEndian.Uint32(p))
		p = p[4:]
		if uint64(len(p)) < kl+8 {
			return Snapshot{}, bad("truncated key")
		}
		key := string(p[:kl])
		vl := binary.LittleEndian.Uint64(p[kl:])
		p = p[kl+8:]
		if uint64(len(p)) < vl {
			return Snapshot{}, bad("truncated value")
		}
		s.Entries = append(s.Entries, Entry{Key: key, Value: p[:vl:vl]})
		p = p[vl:]
	}
	if len(p) != 0 {
		return Snapshot{}, bad("trailing bytes")
	}
	return s, nil
}

// IsNotExist reports a missing snapshot.
func IsNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
