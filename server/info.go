package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bloomery/bloomery/server/internal/command"
)

// Info renders one INFO section; field names follow Redis's.
func (h hooks) Info(section string) string {
	s := h.s
	var b strings.Builder
	f := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	switch section {
	case "server":
		up := time.Since(s.started)
		_, port, _ := strings.Cut(s.cfg.Addr, ":")
		if i := strings.LastIndexByte(s.cfg.Addr, ':'); i >= 0 {
			port = s.cfg.Addr[i+1:]
		}
		f("redis_version", command.Version)
		f("bloomery_version", Version)
		f("redis_mode", "standalone")
		f("os", runtime.GOOS+" "+runtime.GOARCH)
		f("arch_bits", strconv.Itoa(strconv.IntSize))
		f("go_version", runtime.Version())
		f("process_id", os.Getpid())
		f("tcp_port", port)
		f("uptime_in_seconds", int64(up.Seconds()))
		f("uptime_in_days", int64(up.Hours()/24))
		f("executable", executable())
	case "clients":
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		f("connected_clients", n)
		f("maxclients", s.cfg.MaxClients)
		f("blocked_clients", 0)
	case "memory":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.store.RLock()
		dataset := s.store.Used()
		s.store.RUnlock()
		query, output := uint64(max(0, s.mem.query.Used())), uint64(max(0, s.mem.output.Load()))
		txq := uint64(max(0, s.env.TxBytes.Load()))
		aofBuf := uint64(s.aof.BufferBytes())
		used := dataset + query + output + txq + aofBuf
		f("used_memory", used)
		f("used_memory_human", human(used))
		f("used_memory_dataset", dataset)
		f("mem_clients_normal", query+output+txq)
		f("mem_client_query_buffers", query)
		f("mem_client_output_buffers", output)
		f("mem_client_transactions", txq)
		f("mem_aof_buffer", aofBuf)
		f("client_query_buffer_budget", s.mem.query.Limit)
		f("used_memory_heap", ms.HeapAlloc)
		f("used_memory_sys", ms.Sys)
		f("maxmemory", s.cfg.MaxMemory)
		f("maxmemory_human", human(s.cfg.MaxMemory))
		f("maxmemory_policy", "noeviction")
	case "persistence":
		f("loading", 0)
		f("rdb_changes_since_last_save", s.store.Dirty)
		f("rdb_bgsave_in_progress", b2i(s.saving.Load()))
		f("rdb_last_save_time", s.lastSave.Load())
		f("rdb_last_bgsave_status", okErr(s.lastSaveOK.Load()))
		f("rdb_last_bgsave_time_sec", int64(time.Duration(s.lastSaveDur.Load()).Seconds()))
		f("aof_enabled", 1)
		f("aof_rewrite_in_progress", b2i(s.saving.Load()))
		f("aof_last_write_status", okErr(s.aof.Err() == nil))
		f("aof_current_size", s.aof.Size())
		f("aof_fsync_policy", s.policy.String())
		f("aof_generation", s.aof.Gen())
	case "stats":
		f("total_connections_received", s.totalConns.Load())
		f("total_commands_processed", s.env.TotalCommands.Load())
		f("rejected_connections", s.rejectedConns.Load())
		f("client_query_buffer_limit_disconnections", s.mem.queryRefused.Load())
		f("client_output_buffer_limit_disconnections", s.mem.outputClosed.Load())
		f("loaded_keys", s.loadedKeys)
		f("replayed_commands", s.loadedCommands)
	case "keyspace":
		if n := s.store.Len(); n > 0 {
			f("db0", fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", n))
		}
	}
	return b.String()
}

// Version is Bloomery's version, set with -ldflags -X.
var Version = "dev"

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

func human(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
