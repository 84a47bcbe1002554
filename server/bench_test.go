package server

import (
	"io"
	"log/slog"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/bloomery/bloomery/server/internal/command"
	"github.com/bloomery/bloomery/server/internal/resp"
)

// BenchmarkExec measures the server-side cost of one command (dispatch,
// lock, filter work, log append; no network), the figure RedisBloom's
// `INFO commandstats` usec_per_call gives (redisbloom.md §7.2:
// 0.3-0.5 µs for single items, 11-15 µs for BF.MADD of 100).
func BenchmarkExec(b *testing.B) {
	s, err := New(Config{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(b.Context())
	c := &command.Conn{Authed: true, W: resp.NewWriter(io.Discard)}
	s.env.Exec(c, [][]byte{[]byte("BF.RESERVE"), []byte("bf"), []byte("0.01"), []byte("1000000")})
	s.env.Exec(c, [][]byte{[]byte("CF.RESERVE"), []byte("cf"), []byte("4000000")})
	items := make([][]byte, 1<<20)
	for i := range items {
		items[i] = strconv.AppendInt([]byte("item:"), int64(i), 10)
	}
	item := func(i int) []byte { return items[i&(len(items)-1)] }
	single := func(name, key string) func(b *testing.B) {
		return func(b *testing.B) {
			defer reportCPU(b, 1)()
			args := [][]byte{[]byte(name), []byte(key), nil}
			i := 0
			for b.Loop() {
				args[2] = item(i)
				s.env.Exec(c, args)
				c.W.Reset()
				if i%4096 == 0 {
					s.aof.Flush(c.LogOff)
				}
				i++
			}
		}
	}
	multi := func(name, key string) func(b *testing.B) {
		return func(b *testing.B) {
			defer reportCPU(b, 100)()
			args := make([][]byte, 102)
			args[0], args[1] = []byte(name), []byte(key)
			i := 0
			for b.Loop() {
				for j := 2; j < 102; j++ {
					args[j] = item(i)
					i++
				}
				s.env.Exec(c, args)
				c.W.Reset()
				if i%40960 == 0 {
					s.aof.Flush(c.LogOff)
				}
			}
		}
	}
	b.Run("BF.ADD", single("BF.ADD", "bf"))
	b.Run("BF.EXISTS", single("BF.EXISTS", "bf"))
	b.Run("BF.MADD-100", multi("BF.MADD", "bf"))
	b.Run("BF.MEXISTS-100", multi("BF.MEXISTS", "bf"))
	b.Run("CF.ADD", single("CF.ADD", "cf"))
	b.Run("CF.EXISTS", single("CF.EXISTS", "cf"))
	s.aof.Flush(c.LogOff)
}

// reportCPU reports the process CPU time per operation (and per item):
// on a loaded machine wall time mostly measures waiting for a core, CPU
// time what the command costs.
func reportCPU(b *testing.B, items int) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		per := float64((cpu() - start).Nanoseconds()) / float64(b.N)
		b.ReportMetric(per, "cpu-ns/op")
		if items > 1 {
			b.ReportMetric(per/float64(items), "cpu-ns/item")
		}
	}
}

func TestExecAllocs(t *testing.T) {
	s, err := New(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	c := &command.Conn{Authed: true, W: resp.NewWriter(io.Discard)}
	s.env.Exec(c, [][]byte{[]byte("BF.ADD"), []byte("bf"), []byte("x")})
	s.env.Exec(c, [][]byte{[]byte("CF.ADD"), []byte("cf"), []byte("x")})
	for _, args := range [][][]byte{
		{[]byte("BF.EXISTS"), []byte("bf"), []byte("x")},
		{[]byte("bf.mexists"), []byte("bf"), []byte("x"), []byte("y")},
		{[]byte("CF.EXISTS"), []byte("cf"), []byte("x")},
		{[]byte("PING")},
	} {
		if a := testing.AllocsPerRun(100, func() { s.env.Exec(c, args); c.W.Reset() }); a != 0 {
			t.Errorf("%s: %.1f allocations per command", args[0], a)
		}
	}
}

// TestWriteAllocs: a logged BF.MADD of 100 items, its log write and its
// reply allocate nothing once the buffers have grown (the log's two
// buffers alternate; the file write takes the raw path without a
// closure per call).
func TestWriteAllocs(t *testing.T) {
	s, err := New(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	c := &command.Conn{Authed: true, W: resp.NewWriter(io.Discard)}
	s.env.Exec(c, [][]byte{[]byte("BF.RESERVE"), []byte("bf"), []byte("0.01"), []byte("1000000")})
	args := [][]byte{[]byte("BF.MADD"), []byte("bf")}
	for i := range 100 {
		args = append(args, strconv.AppendInt([]byte("item:"), int64(i), 10))
	}
	raw := resp.AppendCommand(nil, args)
	for _, logRaw := range []bool{false, true} {
		run := func() {
			if logRaw {
				c.Raw = raw
			} else {
				c.Raw = nil
			}
			s.env.Exec(c, args)
			if err := s.aof.Flush(c.LogOff); err != nil {
				t.Fatal(err)
			}
			s.env.FlushStats(c)
			c.W.Reset()
		}
		run()
		if a := testing.AllocsPerRun(200, run); a != 0 {
			t.Errorf("BF.MADD (raw request logged: %v): %.2f allocations per command", logRaw, a)
		}
	}
}
