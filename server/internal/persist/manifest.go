package persist

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ManifestName is the manifest's file name in the data directory.
const ManifestName = "MANIFEST"

// Manifest records which files the data directory must hold, so a start
// notices a deleted snapshot or log generation instead of starting
// without its data. It is rewritten atomically (temp file, fsync,
// rename, directory fsync) on every log switch and snapshot.
//
// File format (text, one field a line):
//
//	bloomery-manifest 1
//	snapshot <generation>|none
//	logs <first> <last>
//	crc32c <hex CRC-32C of the lines above, newlines included>
//
// Expected at start: the snapshot, if one is recorded, with a generation
// of at least the recorded one; every log from max(first, the
// snapshot's generation) to last. A log above last may exist (a crash
// between creating a generation and recording it leaves it empty).
type Manifest struct {
	HasSnapshot bool
	SnapshotGen uint64
	FirstLog    uint64
	LastLog     uint64
}

func (m Manifest) body() []byte {
	snap := "none"
	if m.HasSnapshot {
		snap = strconv.FormatUint(m.SnapshotGen, 10)
	}
	return fmt.Appendf(nil, "bloomery-manifest 1\nsnapshot %s\nlogs %d %d\n", snap, m.FirstLog, m.LastLog)
}

// WriteManifest writes m as dir's manifest atomically.
func WriteManifest(dir string, m Manifest) error {
	b := m.body()
	b = fmt.Appendf(b, "crc32c %08x\n", crc32.Checksum(b, castagnoli))
	tmp := filepath.Join(dir, ManifestName+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("persist: manifest: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, ManifestName))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("persist: manifest: %w", err)
	}
	return syncDir(dir)
}

// ReadManifest reads dir's manifest. A missing one returns an error
// wrapping os.ErrNotExist (a new directory, or one written by a version
// without manifests).
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	bad := func(why string) error {
		return fmt.Errorf("persist: manifest %s: %s; refusing to start (if the files it lists are known to be complete, delete it: the next start writes a new one)", path, why)
	}
	i := bytes.LastIndex(b, []byte("crc32c "))
	if i < 0 {
		return Manifest{}, bad("no checksum line")
	}
	var sum uint32
	if _, err := fmt.Sscanf(string(b[i:]), "crc32c %08x\n", &sum); err != nil || sum != crc32.Checksum(b[:i], castagnoli) {
		return Manifest{}, bad("checksum mismatch")
	}
	var m Manifest
	var snap string
	if _, err := fmt.Sscanf(string(b[:i]), "bloomery-manifest 1\nsnapshot %s\nlogs %d %d\n", &snap, &m.FirstLog, &m.LastLog); err != nil {
		return Manifest{}, bad("unreadable: " + err.Error())
	}
	if snap != "none" {
		g, err := strconv.ParseUint(snap, 10, 64)
		if err != nil {
			return Manifest{}, bad("bad snapshot generation")
		}
		m.HasSnapshot, m.SnapshotGen = true, g
	}
	if m.FirstLog > m.LastLog {
		return Manifest{}, bad("first log after last")
	}
	return m, nil
}

// ErrMissingFile reports a file the manifest expects and the directory
// lacks.
var ErrMissingFile = errors.New("persist: data file missing")

// Check verifies that dir holds every file m expects, given whether a
// snapshot was found and its generation, and the log generations
// present. It returns the first generation to replay.
func (m Manifest) Check(dir string, haveSnap bool, snapGen uint64, gens []uint64) (uint64, error) {
	if m.HasSnapshot && !haveSnap {
		return 0, fmt.Errorf("%w: %s (the manifest records a snapshot of generation %d); refusing to start: restore the file, or delete %s to start from the logs alone (losing what only the snapshot held)",
			ErrMissingFile, filepath.Join(dir, SnapshotName), m.SnapshotGen, filepath.Join(dir, ManifestName))
	}
	if haveSnap && snapGen < m.SnapshotGen {
		return 0, fmt.Errorf("%w: %s is of generation %d, older than the generation %d the manifest records; refusing to start: the logs between them were deleted after the newer snapshot was written",
			ErrMissingFile, filepath.Join(dir, SnapshotName), snapGen, m.SnapshotGen)
	}
	from := m.FirstLog
	if haveSnap && snapGen > from {
		from = snapGen
	}
	have := make(map[uint64]bool, len(gens))
	for _, g := range gens {
		have[g] = true
	}
	var missing []string
	for g := from; g <= m.LastLog && len(missing) < 10; g++ {
		if !have[g] {
			missing = append(missing, LogName(g))
		}
	}
	if len(missing) > 0 {
		return 0, fmt.Errorf("%w: %s in %s (the manifest records logs %d to %d); refusing to start: restore them, or delete %s to start without them",
			ErrMissingFile, strings.Join(missing, ", "), dir, m.FirstLog, m.LastLog, filepath.Join(dir, ManifestName))
	}
	return from, nil
}

// Clean removes what a crash or an older version left behind: temp files
// of killed snapshots and manifest writes, and logs of generations below
// below (the snapshot's generation: superseded, never replayed). Each
// removal is logged. Files moved aside by a replay (.torn-, .corrupt-)
// are kept.
func Clean(dir string, below uint64, logger *slog.Logger) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		var why string
		switch {
		case strings.HasPrefix(n, "snapshot-") && strings.HasSuffix(n, ".tmp"):
			why = "temp file of an unfinished snapshot"
		case n == ManifestName+".tmp":
			why = "temp file of an unfinished manifest write"
		default:
			g, ok := logGen(n)
			if !ok || g >= below {
				continue
			}
			why = "log superseded by the snapshot"
		}
		var size int64
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("persist: clean %s: %w", dir, err)
		}
		logger.Info("removed a left-over file from the data directory", "file", n, "bytes", size, "why", why)
	}
	return nil
}
