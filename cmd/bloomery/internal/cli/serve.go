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
       [--metrics-addr HOST:PORT] [--log-level debug|info|warn|error]
       [--accept-log-loss]

Every flag has an environment variable (BLOOMERY_ADDR, BLOOMERY_DIR,
BLOOMERY_APPENDFSYNC, BLOOMERY_REQUIREPASS, BLOOMERY_REQUIREPASS_FILE,
BLOOMERY_MAXMEMORY, BLOOMERY_MAXCLIENTS, BLOOMERY_METRICS_ADDR,
BLOOMERY_LOG_LEVEL, BLOOMERY_ACCEPT_LOG_LOSS); a flag on the command
line wins. SIGINT or SIGTERM
shuts down cleanly (the log is written and fsynced). See docs/server.md.`,
	flags: serveFlags,
	run:   runServe,
}

type serveOpts struct {
	addr, dir, fsync, pass, passFile, maxmem, metrics, level string
	maxclients                                               int
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
	mc, _ := strconv.Atoi(envOr("BLOOMERY_MAXCLIENTS", "10000"))
	fs.IntVar(&o.maxclients, "maxclients", mc, "maximum simultaneous clients")
	fs.StringVar(&o.metrics, "metrics-addr", envOr("BLOOMERY_METRICS_ADDR", ""), "address of the Prometheus /metrics listener (empty = off)")
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
	pass := o.pass
	if o.passFile != "" {
		if pass != "" {
			return usagef("--requirepass and --requirepass-file are exclusive")
		}
		b, err := os.ReadFile(o.passFile)
		if err != nil {
			return fmt.Errorf("--requirepass-file: %w", err)
		}
		pass, _, _ = strings.Cut(string(b), "\n")
		pass = strings.TrimRight(pass, "\r")
		if pass == "" {
			return fmt.Errorf("--requirepass-file %s: empty password", o.passFile)
		}
	}
	srv, err := server.New(server.Config{
		Dir: o.dir, AppendFsync: o.fsync, Password: pass, MaxMemory: maxmem,
		MaxClients: o.maxclients, Addr: o.addr, Logger: logger, AcceptLogLoss: o.acceptLogLoss,
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
