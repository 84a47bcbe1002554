package server

import (
	"net/http"
	"runtime"
	"time"

	"github.com/bloomery/bloomery/server/internal/command"
	"github.com/bloomery/bloomery/server/internal/metrics"
)

// MetricsHandler serves the Prometheus text format on any path (mount it
// at /metrics on its own listener). Everything is computed at scrape
// time; per-filter series cover at most Config.MaxFilterLabels filters
// (the first ones in key order), the rest are counted in
// bloomery_filters_unlabeled. With a metrics token (Config.MetricsToken,
// else Config.Password) a request without "Authorization: Bearer
// <token>" gets 401. Per-filter series are labelled as
// Config.MetricsKeyLabels says.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !s.metricsAuthorized(r) {
			unauthorized(rw)
			return
		}
		rw.Header().Set("Content-Type", metrics.ContentType)
		rw.Write([]byte(s.scrape()))
	})
}

func (s *Server) scrape() string {
	var w metrics.Writer
	specs := s.env.Stats()
	w.Family("bloomery_commands_total", "counter", "Commands executed, by command.")
	for _, sp := range specs {
		if n := sp.Calls(); n > 0 {
			w.Sample("bloomery_commands_total", float64(n), metrics.Label{Name: "command", Value: sp.Spec.Name})
		}
	}
	w.Family("bloomery_command_errors_total", "counter", "Commands that replied with an error, by command.")
	for _, sp := range specs {
		if n := sp.Errors(); n > 0 {
			w.Sample("bloomery_command_errors_total", float64(n), metrics.Label{Name: "command", Value: sp.Spec.Name})
		}
	}
	w.Family("bloomery_command_duration_seconds", "histogram", "Time to execute a command (excluding network I/O), by command; sampled: one command in 16 per connection is timed.")
	for _, sp := range specs {
		if sp.Calls() == 0 {
			continue
		}
		counts, sum := sp.Hist().Snapshot()
		w.Histogram("bloomery_command_duration_seconds", command.HistBounds[:], counts, sum, metrics.Label{Name: "command", Value: sp.Spec.Name})
	}
	s.mu.Lock()
	nconns := len(s.conns)
	s.mu.Unlock()
	w.Family("bloomery_connected_clients", "gauge", "Open client connections.")
	w.Sample("bloomery_connected_clients", float64(nconns))
	w.Family("bloomery_connections_total", "counter", "Connections accepted.")
	w.Sample("bloomery_connections_total", float64(s.totalConns.Load()))
	w.Family("bloomery_rejected_connections_total", "counter", "Connections refused by --maxclients.")
	w.Sample("bloomery_rejected_connections_total", float64(s.rejectedConns.Load()))
	w.Family("bloomery_timed_out_connections_total", "counter", "Connections closed by --timeout or --auth-timeout.")
	w.Sample("bloomery_timed_out_connections_total", float64(s.timedOut.Load()))
	w.Family("bloomery_auth_failures_total", "counter", "Wrong passwords (AUTH, HELLO AUTH).")
	w.Sample("bloomery_auth_failures_total", float64(s.auth.total.Load()))

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Family("bloomery_process_heap_bytes", "gauge", "Go heap bytes in use.")
	w.Sample("bloomery_process_heap_bytes", float64(ms.HeapAlloc))
	w.Family("bloomery_maxmemory_bytes", "gauge", "Configured memory limit for filters (0 = none).")
	w.Sample("bloomery_maxmemory_bytes", float64(s.cfg.MaxMemory))

	s.store.RLock()
	used := s.store.Used()
	nkeys := s.store.Len()
	dirty := s.store.Dirty
	keys := s.store.Keys()
	if s.cfg.MetricsKeyLabels == MetricsKeysOff {
		keys = nil
	}
	if len(keys) > s.cfg.MaxFilterLabels {
		keys = keys[:s.cfg.MaxFilterLabels]
	}
	type row struct {
		key                               metrics.Label
		typ                               string
		items, capacity, size             float64
		fill, design, est, over, reported float64
		negatives, measured               float64
	}
	rows := make([]row, 0, len(keys))
	for _, k := range keys {
		v := s.store.Get([]byte(k))
		st := v.Stats()
		over := 0.0
		if st.Overfilled {
			over = 1
		}
		label := metrics.Label{Name: "key", Value: k}
		if s.cfg.MetricsKeyLabels == MetricsKeysHashed {
			label = metrics.Label{Name: "key_hash", Value: s.keyHash(k)}
		}
		rows = append(rows, row{label, v.Type(), float64(st.Len), float64(st.Cap), float64(st.SizeBytes),
			st.FillRatio, st.DesignFPR, st.EstimatedFPR, over, float64(v.Counters().Reported),
			float64(v.Counters().Negatives.Load()), v.Counters().MeasuredFPR()})
	}
	s.store.RUnlock()
	query, output, aofBuf := max(0, s.mem.query.Used()), max(0, s.mem.output.Load()), s.aof.BufferBytes()
	w.Family("bloomery_memory_used_bytes", "gauge", "Memory counted against maxmemory: filters, key names, client buffers and the log buffer (INFO used_memory).")
	w.Sample("bloomery_memory_used_bytes", float64(used+uint64(query+output+aofBuf)))
	w.Family("bloomery_memory_dataset_bytes", "gauge", "Memory held by filters and key names.")
	w.Sample("bloomery_memory_dataset_bytes", float64(used))
	w.Family("bloomery_memory_client_query_buffers_bytes", "gauge", "Memory held by the clients' query buffers.")
	w.Sample("bloomery_memory_client_query_buffers_bytes", float64(query))
	w.Family("bloomery_memory_client_output_buffers_bytes", "gauge", "Memory held by the clients' reply buffers.")
	w.Sample("bloomery_memory_client_output_buffers_bytes", float64(output))
	w.Family("bloomery_memory_aof_buffer_bytes", "gauge", "Memory held by the append-only log's buffer.")
	w.Sample("bloomery_memory_aof_buffer_bytes", float64(aofBuf))
	w.Family("bloomery_keys", "gauge", "Filters stored.")
	w.Sample("bloomery_keys", float64(nkeys))
	w.Family("bloomery_filters_unlabeled", "gauge", "Filters beyond the per-filter series cap.")
	w.Sample("bloomery_filters_unlabeled", float64(nkeys-len(rows)))
	perFilter := []struct {
		name, typ, help string
		get             func(r row) float64
	}{
		{"bloomery_filter_items", "gauge", "Items added to the filter.", func(r row) float64 { return r.items }},
		{"bloomery_filter_capacity", "gauge", "Design capacity (Bloom: sum of sub-filter capacities; cuckoo: slots).", func(r row) float64 { return r.capacity }},
		{"bloomery_filter_size_bytes", "gauge", "Filter memory in bytes.", func(r row) float64 { return r.size }},
		{"bloomery_filter_fill_ratio", "gauge", "Fraction of bits (Bloom) or slots (cuckoo) in use.", func(r row) float64 { return r.fill }},
		{"bloomery_filter_design_fpr", "gauge", "False-positive rate the filter was sized for.", func(r row) float64 { return r.design }},
		{"bloomery_filter_estimated_fpr", "gauge", "False-positive rate estimated from the actual fill.", func(r row) float64 { return r.est }},
		{"bloomery_filter_overfilled", "gauge", "1 when the estimated FPR exceeds twice the design FPR.", func(r row) float64 { return r.over }},
		{"bloomery_filter_reported_false_positives_total", "counter", "False positives reported by clients with BLOOMERY.FP.", func(r row) float64 { return r.reported }},
		{"bloomery_filter_negative_answers_total", "counter", "Queries the filter answered 'absent'.", func(r row) float64 { return r.negatives }},
		{"bloomery_filter_measured_fpr", "gauge", "Reported false positives / (reported + negative answers); absent before any negative answer or report.", func(r row) float64 { return r.measured }},
	}
	for _, m := range perFilter {
		w.Family(m.name, m.typ, m.help)
		for _, r := range rows {
			if m.name == "bloomery_filter_measured_fpr" && r.measured < 0 {
				continue
			}
			w.Sample(m.name, m.get(r), r.key, metrics.Label{Name: "type", Value: r.typ})
		}
	}

	w.Family("bloomery_aof_size_bytes", "gauge", "Size of the current append-only log file.")
	w.Sample("bloomery_aof_size_bytes", float64(s.aof.Size()))
	w.Family("bloomery_aof_write_ok", "gauge", "1 while the append-only log is writable, 0 after a write or fsync failure (writes are refused).")
	w.Sample("bloomery_aof_write_ok", float64(b2i(s.aof.Err() == nil)))
	w.Family("bloomery_changes_since_last_save", "gauge", "Logged changes not yet in a snapshot.")
	w.Sample("bloomery_changes_since_last_save", float64(dirty))
	w.Family("bloomery_last_save_timestamp_seconds", "gauge", "Unix time of the last successful snapshot.")
	w.Sample("bloomery_last_save_timestamp_seconds", float64(s.lastSave.Load()))
	w.Family("bloomery_last_save_ok", "gauge", "1 if the last snapshot succeeded.")
	w.Sample("bloomery_last_save_ok", float64(b2i(s.lastSaveOK.Load())))
	w.Family("bloomery_save_in_progress", "gauge", "1 while a snapshot is being written.")
	w.Sample("bloomery_save_in_progress", float64(b2i(s.saving.Load())))
	w.Family("bloomery_uptime_seconds", "gauge", "Seconds since the server started.")
	w.Sample("bloomery_uptime_seconds", time.Since(s.started).Seconds())
	return w.String()
}
