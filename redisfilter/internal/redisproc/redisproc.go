// Package redisproc starts real redis-server processes on free loopback
// ports, standalone or as a Redis Cluster, for the tests and the benchmark
// of redisfilter. Every server runs in its own directory and binds to
// 127.0.0.1 only.
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoServer reports that no redis-server binary was found.
var ErrNoServer = errors.New("redis-server not found (install Debian's redis-server package, or set BLOOMERY_REDIS_SERVER to its path)")

// Binary returns the redis-server to run: $BLOOMERY_REDIS_SERVER, else
// redis-server on PATH, else /usr/bin/redis-server.
func Binary() (string, error) {
	if p := os.Getenv("BLOOMERY_REDIS_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: BLOOMERY_REDIS_SERVER=%s: %v", ErrNoServer, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server", nil
	}
	return "", ErrNoServer
}

// Server is one redis-server process.
type Server struct {
	Port    int
	Dir     string
	cluster bool
	aof     bool
	bin     string
	cmd     *exec.Cmd
	done    chan error
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// freePort returns a loopback port that is free, and (for cluster nodes)
// whose cluster bus port, port+10000, is free too.
func freePort(cluster bool) (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !cluster {
			l.Close()
			return port, nil
		}
		if port+10000 > 65535 {
			l.Close()
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		l.Close()
		if err != nil {
			continue
		}
		b.Close()
		return port, nil
	}
	return 0, errors.New("redisproc: no free loopback port found")
}

// Start runs a redis-server in dir (created if needed) on a free port.
// appendonly enables AOF persistence (fsync every write), cluster makes it
// a cluster node with no slots yet.
func Start(dir string, appendonly, cluster bool) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort(cluster)
	if err != nil {
		return nil, err
	}
	s := &Server{Port: port, Dir: dir, cluster: cluster, aof: appendonly, bin: bin}
	return s, s.start()
}

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--save", "", "--daemonize", "no", "--protected-mode", "yes",
		"--logfile", filepath.Join(s.Dir, "redis.log"), "--maxmemory", "0",
	}
	if s.aof {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.cluster {
		// Redis's default node timeout (15 s): with 1 s a node of a test
		// cluster on a loaded 2-core machine (race detector, parallel
		// builds) was marked failed and the cluster answered CLUSTERDOWN
		// in the middle of a test. Tests that stop a node do not wait for
		// failure detection.
		a = append(a, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.Dir, "nodes.conf"),
			"--cluster-node-timeout", "15000", "--cluster-require-full-coverage", "yes")
	}
	return a
}

func (s *Server) start() error {
	s.cmd = exec.Command(s.bin, s.args()...)
	s.cmd.Dir = s.Dir
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("redisproc: start %s: %w", s.bin, err)
	}
	s.done = make(chan error, 1)
	go func(c *exec.Cmd, done chan error) { done <- c.Wait() }(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.cmd = nil
			return fmt.Errorf("redisproc: redis-server on port %d exited at start-up (%v); log: %s", s.Port, err, s.logTail())
		default:
		}
		if ping(s.Addr()) == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("redisproc: redis-server on port %d not answering after 10 s; log: %s", s.Port, s.logTail())
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:n]), "+PONG") {
		return fmt.Errorf("unexpected reply %q", buf[:n])
	}
	return nil
}

// Stop shuts the server down with SIGTERM (which makes redis-server flush
// its append-only file) and waits for it, killing it after 10 s.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.kill()
	}
	s.cmd = nil
	return nil
}

func (s *Server) kill() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
	}
}

// Restart starts the server again on the same port and directory (after
// Stop), so it reloads its persisted data.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("redisproc: restart of a running server")
	}
	return s.start()
}

// Cluster is a Redis Cluster of masters without replicas.
type Cluster struct {
	Nodes []*Server
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr()
	}
	return a
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// StartCluster starts n cluster-enabled servers in subdirectories of dir,
// splits the 16384 slots evenly between them (CLUSTER ADDSLOTSRANGE), joins
// them (CLUSTER MEET) and waits until every node reports cluster_state:ok
// and knows all n masters.
func StartCluster(dir string, n int, appendonly bool) (*Cluster, error) {
	c := &Cluster{}
	for i := range n {
		s, err := Start(filepath.Join(dir, fmt.Sprintf("node%d", i)), appendonly, true)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fail := func(err error) (*Cluster, error) {
		c.Stop()
		return nil, fmt.Errorf("redisproc: create cluster: %w", err)
	}
	clients := make([]*redis.Client, n)
	for i, s := range c.Nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2})
		defer clients[i].Close()
	}
	for i, cl := range clients {
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fail(err)
		}
		if i > 0 {
			if err := clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", c.Nodes[i].Port).Err(); err != nil {
				return fail(err)
			}
		}
	}
	for {
		ready := true
		for _, cl := range clients {
			info, err := cl.Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil {
				return fail(err)
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				ready = false
			}
		}
		if ready {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("cluster not ok after 30 s: %w", ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}
