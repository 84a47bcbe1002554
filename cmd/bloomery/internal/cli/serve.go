package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bloomery/bloomery/server"
)

var serveCmd = &command{
	name:    "serve",
	summary: "run the Redis-protocol filter server (RedisBloom-compatible BF.* and CF.*)",
	usage: `bloomery serve [--addr HOST:PORT] [--dir DIR] [--appendfsync always|everysec|no]
       [--requirepass PASS | --requirepass-file FILE] [--maxmemory BYTES] [--maxclients N]
       [--timeout SECONDS] [--auth-timeout SECONDS] [--key-file FILE]
       [--max-query-buffer BYTES] [--client-output-buffer-limit "HARD SOFT SECONDS"]
       [--metrics-addr HOST:PORT] [--metrics-token TOKEN | --metrics-token-file FILE]
       [--metrics-key-labels hashed|on|off] [--log-level debug|info|warn|error]
       [--accept-log-loss]

Every flag has an environment variable (BLOOMERY_ADDR, BLOOMERY_DIR,
BLOOMERY_APPENDFSYNC, BLOOMERY_REQUIREPASS, BLOOMERY_REQUIREPASS_FILE,
BLOOMERY_MAXMEMORY, BLOOMERY_MAXCLIENTS, BLOOMERY_TIMEOUT,
BLOOMERY_AUTH_TIMEOUT, BLOOMERY_KEY_FILE, BLOOMERY_MAX_QUERY_BUFFER,
BLOOMERY_CLIENT_OUTPUT_BUFFER_LIMIT, BLOOMERY_METRICS_ADDR,
BLOOMERY_METRICS_TOKEN, BLOOMERY_METRICS_TOKEN_FILE,
BLOOMERY_METRICS_KEY_LABELS, BLOOMERY_LOG_LEVEL, BLOOMERY_ACCEPT_LOG_LOSS); a
flag on the command line wins. SIGINT or SIGTERM shuts down cleanly (the log is written and fsynced). See docs/server.md.`,
	flags: serveFlags,
	run:   runServe,
}

type serveOpts struct {
	addr, dir, fsync, pass, passFile, maxmem, metrics, level string
	maxclients                                               int
	timeout, authTimeout                                     int
	metricsToken, metricsTokenFile, metricsKeyLabels         string
	keyFile                                                  string
	maxQueryBuf, outputLimit                                 string
	acceptLogLoss                                            bool
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func serveFlags(fs *flag.FlagSet) any {
	o := &serveOpts{}
	fs.StringVar(&o.addr, "addr", envOr("BLOOMERY_ADDR", "127.0.0.1:6380"), "listen address")
	fs.StringVar(&o.dir, "dir", envOr("BLOOMERY_DIR", "./data"), "data directory (snapshot and append-only log)")
	fs.StringVar(&o.fsync, "appendfsync", envOr("BLOOMERY_APPENDFSYNC", "everysec"), "log fsync policy: always, everysec or no")
	fs.StringVar(&o.pass, "requirepass", envOr("BLOOMERY_REQUIREPASS", ""), "password clients must AUTH with (prefer the env var or --requirepass-file: flags show in ps)")
	fs.StringVar(&o.passFile, "requirepass-file", envOr("BLOOMERY_REQUIREPASS_FILE", ""), "file holding the password (first line)")
	fs.StringVar(&o.maxmem, "maxmemory", envOr("BLOOMERY_MAXMEMORY", "0"), "memory limit for filters, e.g. 512mb, 2gb (0 = none)")
	fs.StringVar(&o.maxQueryBuf, "max-query-buffer", envOr("BLOOMERY_MAX_QUERY_BUFFER", "0"), "total bytes all clients' query buffers may hold (0 = maxmemory, none without it)")
	fs.StringVar(&o.outputLimit, "client-output-buffer-limit", envOr("BLOOMERY_CLIENT_OUTPUT_BUFFER_LIMIT", "0 8mb 10"), "per-client reply limits \"HARD SOFT SECONDS\": close at HARD pending bytes, or past SOFT for SECONDS (0 = no limit)")
	mc, _ := strconv.Atoi(envOr("BLOOMERY_MAXCLIENTS", "10000"))
	fs.IntVar(&o.maxclients, "maxclients", mc, "maximum simultaneous clients")
	to, _ := strconv.Atoi(envOr("BLOOMERY_TIMEOUT", "0"))
	fs.IntVar(&o.timeout, "timeout", to, "close a client idle this many seconds (0 = never), as Redis's timeout")
	ato, _ := strconv.Atoi(envOr("BLOOMERY_AUTH_TIMEOUT", "10"))
	fs.IntVar(&o.authTimeout, "auth-timeout", ato, "with a password, close a client not authenticated this many seconds after connecting (0 = never)")
	fs.StringVar(&o.metrics, "metrics-addr", envOr("BLOOMERY_METRICS_ADDR", ""), "address of the Prometheus /metrics listener (empty = off)")
	fs.StringVar(&o.keyFile, "key-file", envOr("BLOOMERY_KEY_FILE", ""), "file of SipHash keys (lines \"id hex32\") that keyed filters name with KEYID id; only ids reach the data files")
	fs.StringVar(&o.metricsToken, "metrics-token", envOr("BLOOMERY_METRICS_TOKEN", ""), "bearer token /metrics requires (default: the password; prefer the env var or --metrics-token-file)")
	fs.StringVar(&o.metricsTokenFile, "metrics-token-file", envOr("BLOOMERY_METRICS_TOKEN_FILE", ""), "file holding the metrics token (first line)")
	fs.StringVar(&o.metricsKeyLabels, "metrics-key-labels", envOr("BLOOMERY_METRICS_KEY_LABELS", "hashed"), "per-filter metrics labels: hashed (key_hash), on (key names) or off")
	fs.StringVar(&o.level, "log-level", envOr("BLOOMERY_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	accept, _ := strconv.ParseBool(envOr("BLOOMERY_ACCEPT_LOG_LOSS", "false"))
	fs.BoolVar(&o.acceptLogLoss, "accept-log-loss", accept, "start on a damaged append-only log, without the commands from the damage on (moved aside to a file, not deleted); for one start after the refusal that names the file")
	return o
}

// parseBytes reads a byte count with an optional k/kb/m/mb/g/gb suffix
// (powers of 1024, as Redis's maxmemory).
func parseBytes(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suf string
		m   uint64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseUint(strings.TrimSpace(t), 10, 64)
	if err != nil || (n > 0 && n*mult/mult != n) {
		return 0, fmt.Errorf("bad byte size %q (want e.g. 1048576, 512mb, 2gb)", s)
	}
	return n * mult, nil
}

// parseOutputLimit reads "HARD SOFT SECONDS" (Redis's
// client-output-buffer-limit for normal clients, byte sizes as
// parseBytes). 0 turns a limit off; the soft limit off is returned as
// -1 (server.Config's "none").
func parseOutputLimit(s string) (hard, soft int64, d time.Duration, err error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, 0, 0, fmt.Errorf("want \"HARD SOFT SECONDS\", e.g. \"0 8mb 10\", got %q", s)
	}
	h, err := parseBytes(f[0])
	if err != nil {
		return 0, 0, 0, err
	}
	so, err := parseBytes(f[1])
	if err != nil {
		return 0, 0, 0, err
	}
	secs, err := strconv.ParseUint(f[2], 10, 32)
	if err != nil || (so > 0 && secs == 0) {
		return 0, 0, 0, fmt.Errorf("bad SECONDS %q (a positive integer with a soft limit)", f[2])
	}
	hard, soft = int64(min(h, 1<<62)), int64(min(so, 1<<62))
	if soft == 0 {
		soft = -1
	}
	return hard, soft, time.Duration(secs) * time.Second, nil
}

func runServe(e *env, opts any, args []string) error {
	o := opts.(*serveOpts)
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return usagef("--log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	maxmem, err := parseBytes(o.maxmem)
	if err != nil {
		return usagef("--maxmemory: %v", err)
	}
	maxQueryBuf, err := parseBytes(o.maxQueryBuf)
	if err != nil {
		return usagef("--max-query-buffer: %v", err)
	}
	outHard, outSoft, outTime, err := parseOutputLimit(o.outputLimit)
	if err != nil {
		return usagef("--client-output-buffer-limit: %v", err)
	}
	pass, err := secretFrom(o.pass, o.passFile, "--requirepass")
	if err != nil {
		return err
	}
	metricsToken, err := secretFrom(o.metricsToken, o.metricsTokenFile, "--metrics-token")
	if err != nil {
		return err
	}
	if o.timeout < 0 || o.authTimeout < 0 {
		return usagef("--timeout and --auth-timeout take seconds >= 0")
	}
	var keys map[string][16]byte
	if o.keyFile != "" {
		if keys, err = server.ReadKeyFile(o.keyFile); err != nil {
			return err
		}
	}
	authTimeout := time.Duration(o.authTimeout) * time.Second
	if authTimeout == 0 {
		authTimeout = -1 // server.Config: negative = never
	}
	srv, err := server.New(server.Config{
		Dir: o.dir, AppendFsync: o.fsync, Password: pass, MaxMemory: maxmem,
		MaxClients: o.maxclients, Addr: o.addr, Logger: logger, AcceptLogLoss: o.acceptLogLoss,
		IdleTimeout: time.Duration(o.timeout) * time.Second, AuthTimeout: authTimeout,
		MetricsToken: metricsToken, MetricsKeyLabels: o.metricsKeyLabels, Keys: keys,
		MaxQueryBuffer: int64(min(maxQueryBuf, 1<<62)), OutputHard: outHard, OutputSoft: outSoft, OutputSoftTime: outTime,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); pass == "" && !net.ParseIP(host).IsLoopback() {
		logger.Warn("listening beyond loopback without a password; set --requirepass or BLOOMERY_REQUIREPASS")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var metrics *http.Server
	if o.metrics != "" {
		mln, err := net.Listen("tcp", o.metrics)
		if err != nil {
			ln.Close()
			srv.Shutdown(context.Background())
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		if err := checkMetricsBind(mln.Addr(), metricsToken != "" || pass != "", logger); err != nil {
			mln.Close()
			ln.Close()
			srv.Shutdown(context.Background())
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", srv.MetricsHandler())
		metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go metrics.Serve(mln)
		logger.Info("metrics listening", "addr", mln.Addr().String(), "path", "/metrics")
	}
	logger.Info("listening", "addr", ln.Addr().String(), "auth", pass != "", "maxmemory", maxmem, "maxclients", o.maxclients)
	go func() {
		select {
		case <-ctx.Done():
		case <-srv.Done():
		}
		ln.Close()
	}()
	serveErr := srv.Serve(ctx, ln)
	select {
	case <-srv.Done(): // SHUTDOWN already stopped it and logged so
	default:
		logger.Info("shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if metrics != nil {
		metrics.Shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if serveErr != nil && !errors.Is(serveErr, server.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// secretFrom returns a secret given directly or as the first line of a
// file (flag names the pair in errors); both at once is a usage error.
func secretFrom(direct, file, flag string) (string, error) {
	if file == "" {
		return direct, nil
	}
	if direct != "" {
		return "", usagef("%s and %s-file are exclusive", flag, flag)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s-file: %w", flag, err)
	}
	v, _, _ := strings.Cut(string(b), "\n")
	v = strings.TrimRight(v, "\r")
	if v == "" {
		return "", fmt.Errorf("%s-file %s: empty first line", flag, file)
	}
	return v, nil
}

// checkMetricsBind refuses a /metrics listener beyond loopback when no
// token protects it (the metrics show command counts, memory and, unless
// --metrics-key-labels off, per-filter series), and warns about one that
// has a token: plain HTTP carries it in the clear.
func checkMetricsBind(addr net.Addr, hasToken bool, logger *slog.Logger) error {
	host, _, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if !hasToken {
		return fmt.Errorf("--metrics-addr %s is beyond loopback and /metrics would need no token: set --metrics-token (or --requirepass), or bind it to 127.0.0.1", addr)
	}
	logger.Warn("metrics listening beyond loopback over plain HTTP: the bearer token crosses the network in the clear; prefer a loopback bind or a TLS proxy", "addr", addr.String())
	return nil
}
