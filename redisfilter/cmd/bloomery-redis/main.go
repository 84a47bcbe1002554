// Command bloomery-redis copies blocked Bloom filters between container
// files (as written by `bloomery build --kind blocked`) and Redis, Valkey or
// Redis Cluster, where package redisfilter serves them to a fleet. It lives
// in the redisfilter module so that the main bloomery binary does not
// depend on a Redis client.
//
//	bloomery-redis import [flags] REDIS_URL NAME FILE   file -> Redis
//	bloomery-redis export [flags] REDIS_URL NAME FILE   Redis -> file
//
// REDIS_URL is a go-redis URL: redis://[user:password@]host:port[/db],
// rediss:// for TLS; with -cluster, redis://host1:port?addr=host2:port&...
// lists cluster seed nodes. Export then import (or the reverse) reproduces
// the file byte for byte.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/bloomery/bloomery/bloom"
	"github.com/bloomery/bloomery/hashing"
	"github.com/bloomery/bloomery/redisfilter"
	"github.com/redis/go-redis/v9"
)

const usage = `usage:
  bloomery-redis import [flags] REDIS_URL NAME FILE
        store the blocked filter in FILE as NAME (refused if NAME exists, unless -replace)
  bloomery-redis export [flags] REDIS_URL NAME FILE
        write filter NAME to FILE in the container format

REDIS_URL: redis://[user:password@]host:port[/db] (rediss:// for TLS);
with -cluster: redis://host1:port?addr=host2:port&addr=host3:port

flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "import" && args[0] != "export") {
		fmt.Fprint(stderr, usage)
		fmt.Fprintln(stderr, "  (run bloomery-redis import -h for the flags)")
		return exitUsage
	}
	cmd := args[0]
	fs := flag.NewFlagSet("bloomery-redis "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	cluster := fs.Bool("cluster", false, "REDIS_URL names Redis Cluster seed nodes")
	prefix := fs.String("prefix", "", `key prefix (default "bf:")`)
	timeout := fs.Duration("timeout", 10*time.Minute, "deadline for the whole copy")
	var segBytes *int64
	var replace *bool
	if cmd == "import" {
		segBytes = fs.Int64("segment-bytes", 0, "bytes per segment key, a multiple of 64 (default: size/64, at most 8 MiB)")
		replace = fs.Bool("replace", false, "delete an existing filter NAME first")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 3 {
		fmt.Fprintf(stderr, "bloomery-redis %s: want REDIS_URL NAME FILE, got %d arguments\n", cmd, fs.NArg())
		return exitUsage
	}
	url, name, file := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	c, err := client(url, *cluster)
	if err != nil {
		fmt.Fprintf(stderr, "bloomery-redis %s: %v\n", cmd, err)
		return exitUsage
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if cmd == "import" {
		err = doImport(ctx, c, name, file, *prefix, *segBytes, *replace, stdout)
	} else {
		err = doExport(ctx, c, name, file, *prefix, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bloomery-redis %s: %v\n", cmd, err)
		return exitFailure
	}
	return exitOK
}

func client(url string, cluster bool) (redis.UniversalClient, error) {
	if cluster {
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, fmt.Errorf("cluster URL %q: %w", url, err)
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %w", url, err)
	}
	return redis.NewClient(o), nil
}

func doImport(ctx context.Context, c redis.UniversalClient, name, file, prefix string, segBytes int64, replace bool, stdout io.Writer) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	// Copying bits needs no SipHash key: the filter keeps the key's
	// fingerprint, and every client must supply the key to use it.
	src, err := bloom.DecodeBlocked(data, hashing.Expect{Keyless: true})
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if replace {
		old, err := redisfilter.Attach(ctx, c, name, prefix)
		switch {
		case err == nil:
			if err := old.Delete(ctx); err != nil {
				return err
			}
		case !errors.Is(err, redisfilter.ErrNotFound):
			return err
		}
	}
	f, err := redisfilter.Import(ctx, c, name, src, redisfilter.ImportOptions{KeyPrefix: prefix, SegmentBytes: segBytes})
	if err != nil {
		return err
	}
	m := f.Meta()
	fmt.Fprintf(stdout, "imported %s into %q: %d bytes (%d blocks, k=%d, %s), %d segments of %d bytes, %d keys\n",
		file, name, m.Bytes(), m.Blocks, m.K, f.Hasher(), m.Segments, m.SegmentBlocks*redisfilter.BlockBytes, m.Count)
	return nil
}

func doExport(ctx context.Context, c redis.UniversalClient, name, file, prefix string, stdout io.Writer) error {
	f, err := redisfilter.Attach(ctx, c, name, prefix)
	if err != nil {
		return err
	}
	b, err := f.Export(ctx)
	if err != nil {
		return err
	}
	// Write beside the target and rename, so a failed export never
	// leaves a truncated file under the final name.
	tmp, err := os.CreateTemp(filepath.Dir(file), ".bloomery-redis-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := b.WriteTo(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %q to %s: %d bytes, %d blocks, k=%d, %s, %d keys\n",
		name, file, n, b.Blocks(), b.K(), b.Hasher(), b.Len())
	return nil
}
