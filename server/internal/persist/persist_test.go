package persist

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomery/bloomery"
)

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	entries := []Entry{{"a", []byte("value-a")}, {"", nil}, {"k", bytes.Repeat([]byte{7}, 1000)}}
	data := EncodeSnapshot(7, 1234, entries)
	if err := WriteSnapshot(dir, data); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Gen != 7 || s.Unix != 1234 || len(s.Entries) != 3 || s.Entries[2].Key != "k" || !bytes.Equal(s.Entries[2].Value, entries[2].Value) {
		t.Fatalf("round trip: %+v", s)
	}
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x40
		if _, err := DecodeSnapshot(bad); !errors.Is(err, bloomery.ErrCorrupt) && !errors.Is(err, bloomery.ErrUnsupportedVersion) {
			t.Fatalf("flipped byte %d accepted: %v", i, err)
		}
	}
	if _, err := ReadSnapshot(t.TempDir()); !IsNotExist(err) {
		t.Fatalf("missing snapshot: %v", err)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(tmps) != 0 {
		t.Fatalf("temp files left: %v", tmps)
	}
}

func TestLogGenerations(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := OpenLog(dir, 0, Always, logger)
	if err != nil {
		t.Fatal(err)
	}
	off := l.Append([][]byte{[]byte("A"), []byte("1")})
	if err := l.Flush(off); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Switch(); err != nil {
		t.Fatal(err)
	}
	off = l.Append([][]byte{[]byte("B")})
	l.Close()
	var got []string
	st, err := Replay(dir, 0, func(args [][]byte) error { got = append(got, string(args[0])); return nil }, logger)
	if err != nil || st.Files != 2 || len(got) != 2 || got[0] != "A" || got[1] != "B" || st.LastGen != 1 {
		t.Fatalf("replay: %+v %v %v", st, got, err)
	}
	RemoveBefore(dir, 1)
	if gens, _ := ListLogs(dir); len(gens) != 1 || gens[0] != 1 {
		t.Fatalf("after RemoveBefore: %v", gens)
	}
	// A torn tail in an older generation is corruption, not a crash tail.
	os.WriteFile(filepath.Join(dir, LogName(0)), []byte("*1\r\n$1\r\n"), 0o644)
	if _, err := Replay(dir, 0, func([][]byte) error { return nil }, logger); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("torn older log accepted: %v", err)
	}
	_ = off
}

func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(EncodeSnapshot(1, 2, []Entry{{"a", []byte("b")}}))
	f.Add([]byte("BLMYSNAP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodeSnapshot(s.Gen, s.Unix, s.Entries), data) {
			t.Fatal("decoded snapshot does not re-encode identically")
		}
	})
}

// Commands appended as raw RESP bytes and as arguments replay in order to
// the same arguments, and the offsets count both.
func TestAppendRawReplays(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, 0, Always, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$03\r\nabc\r\n") // a leading zero, as a client may send
	o1 := l.AppendRaw(raw)
	o2 := l.Append([][]byte{[]byte("CF.ADD"), []byte("c"), []byte("x")})
	if o1 != int64(len(raw)) || o2 <= o1 {
		t.Fatalf("offsets %d, %d", o1, o2)
	}
	if err := l.Flush(o2); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := Replay(dir, 0, func(args [][]byte) error {
		got = append(got, string(bytes.Join(args, []byte(" "))))
		return nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || st.Commands != 2 || len(got) != 2 || got[0] != "BF.ADD k abc" || got[1] != "CF.ADD c x" {
		t.Fatalf("replayed %q, %+v, %v", got, st, err)
	}
}
