package persist

import (
	"encoding/binary"
	"errors"
	"fmt"

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
