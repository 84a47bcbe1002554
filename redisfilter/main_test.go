package redisfilter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/redisfilter"
	"github.com/bloomery/bloomery/redisfilter/internal/redisproc"
	"github.com/redis/go-redis/v9"
)

// The tests run against real redis-server processes that TestMain starts
// on free loopback ports in a temporary directory: one standalone server
// and a 3-master cluster, shared by the tests, plus servers that single
// tests start for themselves (restart, node down). Without redis-server
// the tests fail, unless BLOOMERY_SKIP_REDIS=1.

var (
	standalone *redisproc.Server
	cluster    *redisproc.Cluster
	skipRedis  string
	tmpRoot    string
)

// writerEnv makes the test binary a writer subprocess (see runWriter).
const writerEnv = "BLOOMERY_REDISFILTER_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		os.Exit(runWriter(spec))
	}
	redis.SetLogger(quietLogger{}) // the down-node tests would flood the log with dial failures
	if _, err := redisproc.Binary(); err != nil {
		if os.Getenv("BLOOMERY_SKIP_REDIS") == "1" {
			skipRedis = "BLOOMERY_SKIP_REDIS=1 and " + err.Error()
			os.Exit(m.Run())
		}
		fmt.Fprintf(os.Stderr, "redisfilter: the tests need a real redis-server: %v\n(set BLOOMERY_SKIP_REDIS=1 to skip them)\n", err)
		os.Exit(1)
	}
	code := func() int {
		var err error
		tmpRoot, err = os.MkdirTemp("", "redisfilter-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmpRoot)
		standalone, err = redisproc.Start(filepath.Join(tmpRoot, "standalone"), false, false)
		if err != nil {
			fmt.Fprintln(os.Stderr, "redisfilter: start redis-server:", err)
			return 1
		}
		defer standalone.Stop()
		cluster, err = redisproc.StartCluster(filepath.Join(tmpRoot, "cluster"), 3, false)
		if err != nil {
			fmt.Fprintln(os.Stderr, "redisfilter: start cluster:", err)
			return 1
		}
		defer cluster.Stop()
		return m.Run()
	}()
	os.Exit(code)
}

func needRedis(t *testing.T) {
	t.Helper()
	if skipRedis != "" {
		t.Skip(skipRedis)
	}
}

func newStandaloneClient(t testing.TB, addr string) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 2 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

func newClusterClient(t testing.TB, addrs []string) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: 2 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		MaxRetries: -1, DialerRetries: 1, MaxRedirects: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// target is a store to run a test against.
type target struct {
	name   string
	client redis.UniversalClient
}

func targets(t *testing.T) []target {
	needRedis(t)
	return []target{
		{"standalone", newStandaloneClient(t, standalone.Addr())},
		{"cluster", newClusterClient(t, cluster.Addrs())},
	}
}

func key(i int) []byte { return strconv.AppendInt([]byte("key-"), int64(i), 10) }

func hashesOf(h hashing.Hasher, from, n int) []uint64 {
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = h.Sum64(key(from + i))
	}
	return hs
}

// runWriter is a writer subprocess: spec is
// "addr1,addr2,...|name|capacity|from|count|batch"; it opens the filter on
// the cluster and adds keys [from, from+count) in batches, printing the
// number reported new.
func runWriter(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 6 {
		fmt.Fprintln(os.Stderr, "writer: bad spec", spec)
		return 2
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	capacity, from, count, batch := num(parts[2]), num(parts[3]), num(parts[4]), num(parts[5])
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(parts[0], ",")})
	defer c.Close()
	ctx := context.Background()
	f, err := redisfilter.Open(ctx, c, parts[1], redisfilter.Params{Capacity: capacity, FPR: 0.01})
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 1
	}
	hs := hashesOf(f.Hasher(), from, count)
	added := 0
	for i := 0; i < len(hs); i += batch {
		n, err := f.AddBatch(ctx, hs[i:min(len(hs), i+batch)], nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 1
		}
		added += n
	}
	fmt.Println(added)
	return 0
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
