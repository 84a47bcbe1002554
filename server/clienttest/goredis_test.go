package clienttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bloomery/bloomery/server"
)

func start(t *testing.T, cfg server.Config) string {
	t.Helper()
	cfg.Dir = t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(context.Background(), ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// must returns v, panicking (failing the test with a stack) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// TestGoRedis uses go-redis v9's typed BF*/CF* helpers in its default
// RESP3 handshake and in RESP2, with and without a password.
func TestGoRedis(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol int
		password string
	}{{"resp3", 3, ""}, {"resp2", 2, ""}, {"resp3-auth", 3, "pw"}, {"resp2-auth", 2, "pw"}} {
		t.Run(tc.name, func(t *testing.T) {
			addr := start(t, server.Config{Password: tc.password})
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: tc.protocol, Password: tc.password})
			defer rdb.Close()
			ctx := context.Background()
			hello := must(rdb.Do(ctx, "CLIENT", "INFO").Text())
			if want := fmt.Sprintf("resp=%d", tc.protocol); !contains(hello, want) {
				t.Fatalf("negotiated protocol: %s (want %s)", hello, want)
			}
			eq(t, "BFReserve", must(rdb.BFReserve(ctx, "bf", 0.01, 1000).Result()), "OK")
			eq(t, "BFAdd", must(rdb.BFAdd(ctx, "bf", "a").Result()), true)
			eq(t, "BFAdd again", must(rdb.BFAdd(ctx, "bf", "a").Result()), false)
			eq(t, "BFMAdd", fmt.Sprint(must(rdb.BFMAdd(ctx, "bf", "b", "c", "a").Result())), "[true true false]")
			eq(t, "BFExists", must(rdb.BFExists(ctx, "bf", "b").Result()), true)
			eq(t, "BFMExists", fmt.Sprint(must(rdb.BFMExists(ctx, "bf", "a", "zz").Result())), "[true false]")
			eq(t, "BFCard", must(rdb.BFCard(ctx, "bf").Result()), int64(3))
			info := must(rdb.BFInfo(ctx, "bf").Result())
			eq(t, "BFInfo", info, redis.BFInfo{Capacity: 1000, Size: 1480, Filters: 1, ItemsInserted: 3, ExpansionRate: 2})
			eq(t, "BFInfoCapacity", must(rdb.BFInfoCapacity(ctx, "bf").Result()).Capacity, int64(1000))
			eq(t, "BFInfoSize", must(rdb.BFInfoSize(ctx, "bf").Result()).Size, int64(1480))
			eq(t, "BFInfoFilters", must(rdb.BFInfoFilters(ctx, "bf").Result()).Filters, int64(1))
			eq(t, "BFInfoItems", must(rdb.BFInfoItems(ctx, "bf").Result()).ItemsInserted, int64(3))
			eq(t, "BFInfoExpansion", must(rdb.BFInfoExpansion(ctx, "bf").Result()).ExpansionRate, int64(2))
			// The array holds the results so far, then the error; go-redis
			// returns the error and keeps the values read.
			ins, err := rdb.BFInsert(ctx, "bfi", &redis.BFInsertOptions{Capacity: 2, Error: 0.01, NonScaling: true}, "x", "y", "z").Result()
			if err == nil || err.Error() != "ERR non scaling filter is full" || fmt.Sprint(ins[:2]) != "[true true]" {
				t.Errorf("BFInsert past a NONSCALING capacity: %v %v", ins, err)
			}
			if _, err := rdb.BFInsert(ctx, "bfi", nil, "w").Result(); err == nil || err.Error() != "ERR non scaling filter is full" {
				t.Errorf("BFInsert into a full filter: %v", err)
			}
			if _, err := rdb.BFAdd(ctx, "nope-cf", "x").Result(); err != nil {
				t.Fatal(err)
			}

			// SCANDUMP/LOADCHUNK round trip with BFInfoSize compared, as
			// go-redis's own tests do.
			for i := 0; i < 3000; i++ {
				rdb.BFAdd(ctx, "big", i)
			}
			var chunks []redis.ScanDump
			it := int64(0)
			for {
				sd := must(rdb.BFScanDump(ctx, "big", it).Result())
				if sd.Iter == 0 {
					break
				}
				it = sd.Iter
				chunks = append(chunks, sd)
			}
			for _, c := range chunks {
				eq(t, "BFLoadChunk", must(rdb.BFLoadChunk(ctx, "big2", c.Iter, c.Data).Result()), "OK")
			}
			eq(t, "size after restore", must(rdb.BFInfoSize(ctx, "big2").Result()).Size, must(rdb.BFInfoSize(ctx, "big").Result()).Size)
			for i := 0; i < 3000; i++ {
				if !must(rdb.BFExists(ctx, "big2", i).Result()) {
					t.Fatalf("false negative %d after LOADCHUNK", i)
				}
			}

			eq(t, "CFReserve", must(rdb.CFReserve(ctx, "cf", 1000).Result()), "OK")
			eq(t, "CFAdd", must(rdb.CFAdd(ctx, "cf", "a").Result()), true)
			eq(t, "CFAddNX", must(rdb.CFAddNX(ctx, "cf", "a").Result()), false)
			eq(t, "CFInsert", fmt.Sprint(must(rdb.CFInsert(ctx, "cf", nil, "b", "c").Result())), "[true true]")
			eq(t, "CFInsertNX", fmt.Sprint(must(rdb.CFInsertNX(ctx, "cf", nil, "b", "d").Result())), "[0 1]")
			eq(t, "CFExists", must(rdb.CFExists(ctx, "cf", "d").Result()), true)
			eq(t, "CFMExists", fmt.Sprint(must(rdb.CFMExists(ctx, "cf", "a", "zz").Result())), "[true false]")
			eq(t, "CFCount", must(rdb.CFCount(ctx, "cf", "a").Result()), int64(1))
			eq(t, "CFDel", must(rdb.CFDel(ctx, "cf", "a").Result()), true)
			cfi := must(rdb.CFInfo(ctx, "cf").Result())
			eq(t, "CFInfo", cfi, redis.CFInfo{Size: 1080, NumBuckets: 512, NumFilters: 1, NumItemsInserted: 3, NumItemsDeleted: 1, BucketSize: 2, ExpansionRate: 1, MaxIteration: 20})
			eq(t, "CFReserveBucketSize", must(rdb.CFReserveBucketSize(ctx, "cf4", 1000, 4).Result()), "OK")
			for i := 0; i < 2000; i++ {
				rdb.CFAdd(ctx, "cf4", i)
			}
			var cfChunks []redis.ScanDump
			it = 0
			for {
				sd, err := rdb.CFScanDump(ctx, "cf4", it).Result()
				if sd.Iter == 0 {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				it = sd.Iter
				cfChunks = append(cfChunks, sd)
			}
			for _, c := range cfChunks {
				eq(t, "CFLoadChunk", must(rdb.CFLoadChunk(ctx, "cf5", c.Iter, c.Data).Result()), "OK")
			}
			eq(t, "CFInfo after restore", must(rdb.CFInfo(ctx, "cf5").Result()), must(rdb.CFInfo(ctx, "cf4").Result()))
			eq(t, "TYPE", must(rdb.Type(ctx, "cf").Result()), "MBbloomCF")
			if _, err := rdb.BFAdd(ctx, "cf", "x").Result(); err == nil || !contains(err.Error(), "WRONGTYPE") {
				t.Errorf("BFAdd on a cuckoo key: %v", err)
			}

			// Pipelined, as applications batch.
			pipe := rdb.Pipeline()
			cmds := make([]*redis.BoolCmd, 500)
			for i := range cmds {
				cmds[i] = pipe.BFAdd(ctx, "pipe", i)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			pipe = rdb.Pipeline()
			for i := range cmds {
				cmds[i] = pipe.BFExists(ctx, "pipe", i)
			}
			pipe.Exec(ctx)
			for i, c := range cmds {
				if !c.Val() {
					t.Fatalf("pipelined BFExists %d false", i)
				}
			}
			eq(t, "DBSize", must(rdb.DBSize(ctx).Result()) > 5, true)
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
