package persist

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/appendonly-v2.aof (only for a deliberate format change)")

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// goldenCommands are the commands of both golden logs, as replay must
// decode them forever.
var goldenCommands = []string{
	"BF.RESERVE bf 0.01 1000",
	"BF.ADD bf hello",
	"BF.MADD bf a b\r\nc \x00\x01\x02\xff",
	"CF.ADD cf item",
	"DEL gone",
}

func decodeAll(t *testing.T, data []byte) (int, []string, error) {
	t.Helper()
	var got []string
	v, _, err := DecodeLog(data, func(args [][]byte) error {
		got = append(got, string(bytes.Join(args, []byte(" "))))
		return nil
	})
	return v, got, err
}

// writeGoldenV2 writes the golden commands with today's Log: two records
// (a write after the second command), the second with three commands.
func writeGoldenV2(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	l, err := OpenLog(dir, 0, No, discard())
	if err != nil {
		t.Fatal(err)
	}
	l.Append([][]byte{[]byte("BF.RESERVE"), []byte("bf"), []byte("0.01"), []byte("1000")})
	off := l.AppendRaw([]byte("*3\r\n$6\r\nBF.ADD\r\n$2\r\nbf\r\n$5\r\nhello\r\n"))
	if err := l.Flush(off); err != nil {
		t.Fatal(err)
	}
	l.AppendGroup([][][]byte{
		{[]byte("BF.MADD"), []byte("bf"), []byte("a"), []byte("b\r\nc"), {0, 1, 2, 255}},
		{[]byte("CF.ADD"), []byte("cf"), []byte("item")},
		{[]byte("DEL"), []byte("gone")},
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, LogName(0)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden logs of both format versions decode to the same commands;
// version 1 was written by the server before checksums (plain RESP),
// version 2 by today's Log, byte for byte.
func TestGoldenLogs(t *testing.T) {
	v2 := writeGoldenV2(t)
	if *updateGolden {
		if err := os.WriteFile("testdata/appendonly-v2.aof", v2, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		file    string
		version int
	}{{"testdata/appendonly-v1.aof", 1}, {"testdata/appendonly-v2.aof", 2}} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		v, got, err := decodeAll(t, data)
		if err != nil || v != tc.version || strings.Join(got, "|") != strings.Join(goldenCommands, "|") {
			t.Fatalf("%s: version %d, %q, %v", tc.file, v, got, err)
		}
		if tc.version == 2 && !bytes.Equal(data, v2) {
			t.Fatalf("%s: today's Log writes different bytes (a format change needs a new version)", tc.file)
		}
	}
}

// damage is what DecodeLog reports for a damaged log: the offset, and
// whether it is a torn tail.
func damage(t *testing.T, data []byte) (int64, bool, int) {
	t.Helper()
	_, n, err := DecodeLog(data, func([][]byte) error { return nil })
	var d *logDamage
	if !errors.As(err, &d) {
		t.Fatalf("no damage reported: %v", err)
	}
	return d.Off, d.Torn, n
}

// Each kind of damage of a version 2 log is classified: only a provably
// incomplete final record is torn; everything else is corruption, and no
// command of a damaged record is run.
func TestRecordDamage(t *testing.T) {
	good, err := os.ReadFile("testdata/appendonly-v2.aof")
	if err != nil {
		t.Fatal(err)
	}
	rec2 := bytes.Index(good, []byte("*5\r\n")) - recHdrLen // the second record
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		data []byte
		off  int64
		torn bool
		cmds int
	}{
		{"flipped payload byte of the first record", mod(func(b []byte) []byte { b[fileHdrLen+recHdrLen+20] ^= 1; return b }), fileHdrLen, false, 0},
		{"flipped item byte of the last record", mod(func(b []byte) []byte { b[len(b)-5] ^= 1; return b }), int64(rec2), false, 2},
		{"flipped length of the last record", mod(func(b []byte) []byte { b[rec2] ^= 1; return b }), int64(rec2), false, 2},
		{"flipped header checksum", mod(func(b []byte) []byte { b[rec2+9] ^= 1; return b }), int64(rec2), false, 2},
		{"zeros in the middle", mod(func(b []byte) []byte { copy(b[fileHdrLen:], make([]byte, 20)); return b }), fileHdrLen, false, 0},
		{"zeros over the last record", mod(func(b []byte) []byte { copy(b[rec2:], make([]byte, len(b)-rec2)); return b }), int64(rec2), true, 2},
		{"zeros after the end", mod(func(b []byte) []byte { return append(b, make([]byte, 4096)...) }), int64(len(good)), true, 5},
		{"zeros ending the last payload", mod(func(b []byte) []byte { copy(b[len(b)-10:], make([]byte, 10)); return b }), int64(rec2), true, 2},
		{"zeros inside the last payload", mod(func(b []byte) []byte { copy(b[len(b)-20:len(b)-10], make([]byte, 10)); return b }), int64(rec2), false, 2},
		{"garbage after the end", mod(func(b []byte) []byte { return append(b, "*1\r\n$4\r\nPING\r\n"...) }), int64(len(good)), false, 5},
		{"cut file header", good[:10], 0, true, 0},
		{"zero file header", make([]byte, 16), 0, true, 0},
		{"bad magic", mod(func(b []byte) []byte { b[3] = 'X'; return b }), 0, false, 0},
		{"bad version", mod(func(b []byte) []byte { b[8] = 3; return b }), 0, false, 0},
	}
	for cut := rec2 + 1; cut < len(good); cut += 7 {
		cases = append(cases, struct {
			name string
			data []byte
			off  int64
			torn bool
			cmds int
		}{fmt.Sprintf("cut at %d", cut), good[:cut], int64(rec2), true, 2})
	}
	for _, tc := range cases {
		off, torn, n := damage(t, tc.data)
		if off != tc.off || torn != tc.torn || n != tc.cmds {
			t.Errorf("%s: offset %d torn %v after %d commands; want %d %v %d", tc.name, off, torn, n, tc.off, tc.torn, tc.cmds)
		}
	}
}

// A version 1 log's unfinished last command is a torn tail, but a damaged
// bulk length that swallows later commands is not.
func TestV1Damage(t *testing.T) {
	good, err := os.ReadFile("testdata/appendonly-v1.aof")
	if err != nil {
		t.Fatal(err)
	}
	off, torn, n := damage(t, good[:len(good)-5])
	last := int64(bytes.LastIndex(good, []byte("*2\r\n$3\r\nDEL")))
	if off != last || !torn || n != 4 {
		t.Fatalf("cut v1 log: offset %d torn %v after %d", off, torn, n)
	}
	bad := bytes.Replace(good, []byte("$5\r\nhello"), []byte("$9\r\nhello"), 1)
	bad = bytes.Replace(bad, []byte("$4\r\nitem"), []byte("$400\r\nm"), 1)
	off, torn, _ = damage(t, bad)
	if torn {
		t.Fatalf("damaged v1 length taken for a torn tail at %d", off)
	}
}

// Replay cuts a torn tail only after moving its bytes aside, refuses
// other damage without changing the file, and with AcceptLoss moves the
// damaged part aside and goes on.
func TestReplayMovesAside(t *testing.T) {
	good, _ := os.ReadFile("testdata/appendonly-v2.aof")
	rec2 := bytes.Index(good, []byte("*5\r\n")) - recHdrLen
	run := func(data []byte, o ReplayOptions) (string, ReplayStats, error) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, LogName(0)), data, 0o600)
		st, err := ReplayWith(dir, o, func([][]byte) error { return nil }, discard())
		return dir, st, err
	}
	dir, st, err := run(good[:len(good)-3], ReplayOptions{})
	if err != nil || len(st.Aside) != 1 || st.Commands != 2 {
		t.Fatalf("torn: %+v %v", st, err)
	}
	moved, _ := os.ReadFile(st.Aside[0])
	kept, _ := os.ReadFile(filepath.Join(dir, LogName(0)))
	if !bytes.Equal(moved, good[rec2:len(good)-3]) || !bytes.Equal(kept, good[:rec2]) {
		t.Fatalf("moved %d bytes, kept %d", len(moved), len(kept))
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)-5] ^= 1
	dir, _, err = run(bad, ReplayOptions{})
	if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), "accept-log-loss") {
		t.Fatalf("damaged record: %v", err)
	}
	if kept, _ := os.ReadFile(filepath.Join(dir, LogName(0))); !bytes.Equal(kept, bad) {
		t.Fatal("refusing changed the file")
	}
	_, st, err = run(bad, ReplayOptions{AcceptLoss: true})
	if err != nil || len(st.Aside) != 1 || !strings.Contains(st.Aside[0], ".corrupt-") || st.Commands != 2 {
		t.Fatalf("accept loss: %+v %v", st, err)
	}
	// A torn tail in an older generation is corruption.
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, LogName(0)), good[:len(good)-3], 0o600)
	os.WriteFile(filepath.Join(dir, LogName(1)), good, 0o600)
	if _, err := Replay(dir, 0, func([][]byte) error { return nil }, discard()); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("torn older generation accepted: %v", err)
	}
}

// A group lands in one record: a cut inside it drops all of it.
func TestAppendGroupAtomic(t *testing.T) {
	good, _ := os.ReadFile("testdata/appendonly-v2.aof")
	cut := bytes.Index(good, []byte("CF.ADD")) // inside the group's record
	_, n, _ := DecodeLog(good[:cut], func([][]byte) error { return nil })
	if n != 2 {
		t.Fatalf("%d commands replayed from a cut group record, want the 2 before it", n)
	}
}

// A command of directMin bytes or more is written from the caller's
// bytes, in order with the buffered commands around it, without being
// copied.
func TestAppendRawLargeNoCopy(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, 0, Always, discard())
	if err != nil {
		t.Fatal(err)
	}
	item := bytes.Repeat([]byte("v"), 8<<20)
	big := append(fmt.Appendf(nil, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$%d\r\n", len(item)), item...)
	big = append(big, "\r\n"...)
	l.Append([][]byte{[]byte("A")})
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	off := l.AppendRaw(big)
	runtime.ReadMemStats(&ms1)
	l.Append([][]byte{[]byte("B")})
	if err := l.Flush(off); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 1<<20 {
		t.Errorf("AppendRaw of %d bytes allocated %d bytes", len(big), d)
	}
	var got []string
	if _, err := Replay(dir, 0, func(args [][]byte) error {
		got = append(got, fmt.Sprintf("%s:%d", args[0], len(args[len(args)-1])))
		return nil
	}, discard()); err != nil || strings.Join(got, " ") != fmt.Sprintf("A:1 BF.ADD:%d B:1", len(item)) {
		t.Fatalf("replayed %q, %v", got, err)
	}
}

// A log whose fsync failed stays failed (retrying fsync is not safe);
// Switch abandons the generation and SnapshotWritten clears the error.
func TestSnapshotResetsFailedLog(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, 0, Always, discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetManifest(Manifest{FirstLog: 0, LastLog: 0}); err != nil {
		t.Fatal(err)
	}
	l.Flush(l.Append([][]byte{[]byte("A")}))
	l.ioMu.Lock()
	l.broken = true
	l.fail(errors.New("injected fsync failure"))
	l.ioMu.Unlock()
	off := l.Append([][]byte{[]byte("LOST")})
	if err := l.Flush(off); err == nil {
		t.Fatal("flush succeeded on a failed log")
	}
	if err := l.Sync(); err == nil {
		t.Fatal("a retry cleared an fsync failure")
	}
	gen, err := l.Switch()
	if err != nil || gen != 1 || l.Err() == nil {
		t.Fatalf("switch: %d %v, err %v", gen, err, l.Err())
	}
	if err := l.SnapshotWritten(gen); err != nil || l.Err() != nil {
		t.Fatalf("snapshot did not reset the log: %v %v", err, l.Err())
	}
	if err := l.Flush(l.Append([][]byte{[]byte("C")})); err != nil {
		t.Fatal(err)
	}
	l.Close()
	m, err := ReadManifest(dir)
	if err != nil || m != (Manifest{HasSnapshot: true, SnapshotGen: 1, FirstLog: 1, LastLog: 1}) {
		t.Fatalf("manifest %+v %v", m, err)
	}
	var got []string
	Replay(dir, 0, func(args [][]byte) error { got = append(got, string(args[0])); return nil }, discard())
	if strings.Join(got, " ") != "A C" {
		t.Fatalf("replayed %q (the snapshot holds LOST)", got)
	}
}

// The manifest round-trips, and Check names each missing file.
func TestManifestCheck(t *testing.T) {
	dir := t.TempDir()
	m := Manifest{HasSnapshot: true, SnapshotGen: 3, FirstLog: 3, LastLog: 5}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadManifest(dir); err != nil || got != m {
		t.Fatalf("read %+v %v", got, err)
	}
	if from, err := m.Check(dir, true, 3, []uint64{3, 4, 5, 6}); err != nil || from != 3 {
		t.Fatalf("complete: %d %v", from, err)
	}
	if from, err := m.Check(dir, true, 5, []uint64{5}); err != nil || from != 5 {
		t.Fatalf("newer snapshot: %d %v", from, err)
	}
	for _, tc := range []struct {
		snap bool
		gen  uint64
		gens []uint64
		want string
	}{
		{false, 0, []uint64{3, 4, 5}, SnapshotName},
		{true, 2, []uint64{2, 3, 4, 5}, "older"},
		{true, 3, []uint64{3, 5}, LogName(4)},
		{true, 3, []uint64{3, 4}, LogName(5)},
	} {
		if _, err := m.Check(dir, tc.snap, tc.gen, tc.gens); !errors.Is(err, ErrMissingFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	b[len(b)-12] ^= 1
	os.WriteFile(filepath.Join(dir, ManifestName), b, 0o600)
	if _, err := ReadManifest(dir); err == nil {
		t.Fatal("damaged manifest accepted")
	}
}

// FuzzDecodeLog feeds arbitrary bytes to the log decoder: it must not
// panic, must report damage inside the data, and a cut of a valid log
// must be a torn tail (never corruption) with only whole records before.
func FuzzDecodeLog(f *testing.F) {
	for _, name := range []string{"testdata/appendonly-v1.aof", "testdata/appendonly-v2.aof"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0))
		f.Add(b, uint16(len(b)/2))
	}
	f.Add([]byte(logMagic), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		_, n, err := DecodeLog(data, func(args [][]byte) error {
			if len(args) == 0 {
				t.Fatal("empty command replayed")
			}
			return nil
		})
		var d *logDamage
		if err != nil && !errors.As(err, &d) {
			t.Fatalf("error that is not damage: %v", err)
		}
		if d != nil && (d.Off < 0 || d.Off > int64(len(data))) {
			t.Fatalf("damage offset %d outside %d bytes", d.Off, len(data))
		}
		if err != nil || int(cut) >= len(data) || len(data) < fileHdrLen || string(data[:8]) != logMagic {
			return
		}
		_, m, err := DecodeLog(data[:cut], func([][]byte) error { return nil })
		if err != nil && (!errors.As(err, &d) || !d.Torn) {
			t.Fatalf("cut of a valid log at %d: %v", cut, err)
		}
		if m > n {
			t.Fatalf("cut log replayed %d commands, whole %d", m, n)
		}
	})
}
