package server

import (
	"fmt"
	"strings"
	"testing"
)

// Replies documented for RedisBloom 8.x (docs/commands.md), RESP2.
func TestBFReplies(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	cases := []struct {
		want string
		args []string
	}{
		{"E:ERR wrong number of arguments for 'bf.reserve' command", []string{"BF.RESERVE", "k"}},
		{"E:ERR wrong number of arguments for 'bf.reserve' command", []string{"bf.reserve", "k", "0.01"}},
		{"E:ERR bad error rate", []string{"BF.RESERVE", "k", "x", "100"}},
		{"E:ERR error rate must be in the range (0.000000, 1.000000)", []string{"BF.RESERVE", "k", "1", "100"}},
		{"E:ERR error rate must be in the range (0.000000, 1.000000)", []string{"BF.RESERVE", "k", "0", "100"}},
		{"E:ERR bad capacity", []string{"BF.RESERVE", "k", "0.01", "abc"}},
		{"E:ERR bad capacity", []string{"BF.RESERVE", "k", "0.01", "1.5"}},
		{"E:ERR capacity must be in the range [1, 1073741824]", []string{"BF.RESERVE", "k", "0.01", "0"}},
		{"E:ERR no expansion", []string{"BF.RESERVE", "k", "0.01", "100", "EXPANSION"}},
		{"E:ERR bad expansion", []string{"BF.RESERVE", "k", "0.01", "100", "EXPANSION", "x"}},
		{"E:ERR expansion must be in the range [0, 32768]", []string{"BF.RESERVE", "k", "0.01", "100", "EXPANSION", "-1"}},
		{"E:Nonscaling filters cannot expand", []string{"BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION", "2"}},
		{"E:Nonscaling filters cannot expand", []string{"BF.RESERVE", "k", "0.01", "100", "expansion", "2", "nonscaling"}},
		{"E:ERR wrong number of arguments for 'bf.reserve' command", []string{"BF.RESERVE", "k", "0.01", "100", "a", "b", "c", "d"}},
		{"OK", []string{"BF.RESERVE", "k", "0.01", "100", "FOO"}},
		{"E:ERR item exists", []string{"BF.RESERVE", "k", "0.01", "100"}},
		{"OK", []string{"BF.RESERVE", "z", "0.01", "100", "EXPANSION", "0"}},
		{"[b:Capacity 100 b:Size 216 b:Number of filters 1 b:Number of items inserted 0 b:Expansion rate nil]", []string{"BF.INFO", "z"}},
		{"[nil]", []string{"BF.INFO", "z", "EXPANSION"}},
		{"1", []string{"BF.ADD", "k", "a"}},
		{"0", []string{"BF.ADD", "k", "a"}},
		{"1", []string{"BF.ADD", "k", ""}},
		{"E:ERR wrong number of arguments for 'bf.add' command", []string{"BF.ADD", "k"}},
		{"E:ERR wrong number of arguments for 'bf.add' command", []string{"BF.ADD", "k", "a", "b"}},
		{"[1 1 0]", []string{"BF.MADD", "m", "a", "b", "a"}},
		{"[1 1 E:ERR non scaling filter is full]", []string{"BF.INSERT", "n", "NONSCALING", "CAPACITY", "2", "ITEMS", "a", "b", "c", "d"}},
		{"[0]", []string{"BF.INSERT", "n", "ITEMS", "a"}},
		{"E:ERR non scaling filter is full", []string{"BF.ADD", "n", "zz"}},
		{"0", []string{"BF.ADD", "n", "a"}},
		{"1", []string{"BF.EXISTS", "k", "a"}},
		{"0", []string{"BF.EXISTS", "k", "nope"}},
		{"0", []string{"BF.EXISTS", "missing", "a"}},
		{"[1 0]", []string{"BF.MEXISTS", "k", "a", "nope"}},
		{"[0 0]", []string{"BF.MEXISTS", "missing", "a", "b"}},
		{"2", []string{"BF.CARD", "k"}},
		{"0", []string{"BF.CARD", "missing"}},
		{"E:ERR not found", []string{"BF.INFO", "missing"}},
		{"E:Invalid information value", []string{"BF.INFO", "k", "bogus"}},
		{"[100]", []string{"BF.INFO", "k", "CAPACITY"}},
		{"[240]", []string{"BF.INFO", "k", "size"}},
		{"[1]", []string{"BF.INFO", "k", "Filters"}},
		{"[2]", []string{"BF.INFO", "k", "ITEMS"}},
		{"[2]", []string{"BF.INFO", "k", "EXPANSION"}},
		{"E:ERR wrong number of arguments for 'bf.info' command", []string{"BF.INFO", "k", "a", "b"}},
		{"OK", []string{"BF.RESERVE", "r1000", "0.01", "1000"}},
		{"[1480]", []string{"BF.INFO", "r1000", "SIZE"}},
		{"[1]", []string{"BF.INSERT", "i1000", "CAPACITY", "1000", "ERROR", "0.001", "ITEMS", "x"}},
		{"[2080]", []string{"BF.INFO", "i1000", "SIZE"}},
		{"[1]", []string{"BF.INSERT", "k", "CAPACITY", "5000", "ITEMS", "q"}},
		{"[100]", []string{"BF.INFO", "k", "CAPACITY"}},
		{"E:ERR not found", []string{"BF.INSERT", "nc", "NOCREATE", "ITEMS", "a"}},
		{"E:Unknown argument received", []string{"BF.INSERT", "k", "FOO", "ITEMS", "a"}},
		{"E:Bad capacity", []string{"BF.INSERT", "k2", "CAPACITY", "abc", "ITEMS", "a"}},
		{"E:Bad error rate", []string{"BF.INSERT", "k2", "ERROR", "abc", "ITEMS", "a"}},
		{"E:Bad expansion", []string{"BF.INSERT", "k2", "EXPANSION", "abc", "ITEMS", "a"}},
		{"E:ERR wrong number of arguments for 'bf.insert' command", []string{"BF.INSERT", "k2", "ITEMS"}},
		{"E:ERR wrong number of arguments for 'bf.insert' command", []string{"BF.INSERT", "k2", "CAPACITY", "10", "NOCREATE"}},
		{"E:ERR wrong number of arguments for 'bf.insert' command", []string{"BF.INSERT", "k2", "CAPACITY"}},
		{"OK", []string{"CF.RESERVE", "cf", "1000"}},
		{"E:WRONGTYPE Operation against a key holding the wrong kind of value", []string{"BF.ADD", "cf", "a"}},
		{"E:WRONGTYPE Operation against a key holding the wrong kind of value", []string{"BF.CARD", "cf"}},
		{"E:WRONGTYPE Operation against a key holding the wrong kind of value", []string{"BF.INFO", "cf"}},
		{"0", []string{"BF.EXISTS", "cf", "a"}},
		{"[0]", []string{"BF.MEXISTS", "cf", "a"}},
		{"E:WRONGTYPE Operation against a key holding the wrong kind of value", []string{"BF.RESERVE", "cf", "0.01", "100"}},
		{"MBbloom--", []string{"TYPE", "k"}},
		{"MBbloomCF", []string{"TYPE", "cf"}},
		{"none", []string{"TYPE", "missing"}},
		{"E:Second argument must be numeric", []string{"BF.SCANDUMP", "k", "x"}},
		{"E:ERR not found", []string{"BF.SCANDUMP", "missing", "0"}},
		{"[0 b:]", []string{"BF.SCANDUMP", "k", "-1"}},
		{"E:ERR Second argument must be numeric", []string{"BF.LOADCHUNK", "k", "x", "d"}},
		{"E:ERR not found", []string{"BF.LOADCHUNK", "missing", "5", "d"}},
		{"E:ERR received bad data", []string{"BF.LOADCHUNK", "missing", "1", "garbage"}},
	}
	for _, tc := range cases {
		c.expect(tc.want, tc.args...)
	}
}

func TestBFScaling(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.expect("OK", "BF.RESERVE", "k", "0.01", "100")
	args := []string{"BF.MADD", "k"}
	for i := 0; i < 1000; i++ {
		args = append(args, fmt.Sprintf("item-%d", i))
	}
	c.do(args...)
	info := show(c.do("BF.INFO", "k"))
	if !strings.HasPrefix(info, "[b:Capacity 1500 b:Size ") || !strings.Contains(info, "b:Number of filters 4 ") {
		t.Fatalf("after 1000 adds: %s (RedisBloom: 4 filters, capacity 1500)", info)
	}
	items := c.do("BF.CARD", "k").(int64)
	if items < 985 || items > 1000 {
		t.Fatalf("items %d: want about 994 (adds that were not false positives)", items)
	}
	// EXPANSION 4, capacity 1000, 30000 items: 1000/4000/16000/64000.
	c.expect("OK", "BF.RESERVE", "e", "0.01", "1000", "EXPANSION", "4")
	for j := 0; j < 30; j++ {
		args := []string{"BF.MADD", "e"}
		for i := 0; i < 1000; i++ {
			args = append(args, fmt.Sprintf("x-%d-%d", j, i))
		}
		c.do(args...)
	}
	c.expect("[85000]", "BF.INFO", "e", "CAPACITY")
	c.expect("[4]", "BF.INFO", "e", "FILTERS")
	for i := 0; i < 1000; i++ {
		if got := c.do("BF.EXISTS", "k", fmt.Sprintf("item-%d", i)); got != int64(1) {
			t.Fatalf("false negative for item-%d", i)
		}
	}
}

func TestCFReplies(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	cases := []struct {
		want string
		args []string
	}{
		{"E:ERR wrong number of arguments for 'cf.reserve' command", []string{"CF.RESERVE", "k"}},
		{"E:ERR wrong number of arguments for 'cf.reserve' command", []string{"CF.RESERVE", "k", "100", "BUCKETSIZE"}},
		{"E:Bad capacity", []string{"CF.RESERVE", "k", "abc"}},
		{"E:Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", []string{"CF.RESERVE", "k", "3"}},
		{"E:Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", []string{"CF.RESERVE", "k", "-1"}},
		{"E:Couldn't parse BUCKETSIZE", []string{"CF.RESERVE", "k", "100", "BUCKETSIZE", "x"}},
		{"E:BUCKETSIZE: value must be in the range [1, 255]", []string{"CF.RESERVE", "k", "100", "BUCKETSIZE", "256"}},
		{"E:MAXITERATIONS: value must be in the range [1, 65535]", []string{"CF.RESERVE", "k", "100", "MAXITERATIONS", "0"}},
		{"E:EXPANSION: value must be in the range [0, 32768]", []string{"CF.RESERVE", "k", "100", "EXPANSION", "40000"}},
		{"OK", []string{"CF.RESERVE", "k", "1000"}},
		{"E:ERR item exists", []string{"CF.RESERVE", "k", "1000"}},
		{"[b:Size 1080 b:Number of buckets 512 b:Number of filters 1 b:Number of items inserted 0 b:Number of items deleted 0 b:Bucket size 2 b:Expansion rate 1 b:Max iterations 20]", []string{"CF.INFO", "k"}},
		{"OK", []string{"CF.RESERVE", "b4", "1000", "BUCKETSIZE", "4"}},
		{"OK", []string{"CF.RESERVE", "c100", "100"}},
		{"OK", []string{"CF.RESERVE", "b6", "12", "BUCKETSIZE", "6", "EXPANSION", "3", "FOO", "bar"}},
		{"[0 nil]", []string{"CF.SCANDUMP", "k", "0"}},
		{"1", []string{"CF.ADD", "k", "a"}},
		{"1", []string{"CF.ADD", "k", "a"}},
		{"2", []string{"CF.COUNT", "k", "a"}},
		{"0", []string{"CF.ADDNX", "k", "a"}},
		{"1", []string{"CF.ADDNX", "k", "b"}},
		{"1", []string{"CF.EXISTS", "k", "b"}},
		{"0", []string{"CF.EXISTS", "k", "zzz"}},
		{"0", []string{"CF.EXISTS", "missing", "a"}},
		{"[1 0]", []string{"CF.MEXISTS", "k", "a", "zzz"}},
		{"1", []string{"CF.DEL", "k", "a"}},
		{"1", []string{"CF.COUNT", "k", "a"}},
		{"E:Not found", []string{"CF.DEL", "missing", "a"}},
		{"[1 1]", []string{"CF.INSERT", "k", "ITEMS", "c", "d"}},
		{"[0 1]", []string{"CF.INSERTNX", "k", "ITEMS", "c", "e"}},
		{"E:ERR not found", []string{"CF.INSERT", "nc", "NOCREATE", "ITEMS", "a"}},
		{"E:Unknown argument received", []string{"CF.INSERT", "k", "BAD", "ITEMS", "a"}},
		{"E:Bad capacity", []string{"CF.INSERT", "new", "CAPACITY", "x", "ITEMS", "a"}},
		{"E:Capacity must be in the range [cf-bucket-size * 2, 1073741824]", []string{"CF.INSERT", "new", "CAPACITY", "3", "ITEMS", "a"}},
		{"E:ERR wrong number of arguments for 'cf.insert' command", []string{"CF.INSERT", "new", "ITEMS"}},
		{"E:ERR not found", []string{"CF.INFO", "missing"}},
		{"E:Invalid position", []string{"CF.SCANDUMP", "k", "-1"}},
		{"E:Invalid position", []string{"CF.LOADCHUNK", "k2", "0", "x"}},
		{"E:ERR item exists", []string{"CF.LOADCHUNK", "k", "1", "x"}},
		{"E:Invalid header", []string{"CF.LOADCHUNK", "k2", "1", "x"}},
		{"E:ERR not found", []string{"CF.LOADCHUNK", "k2", "9", "x"}},
	}
	for _, tc := range cases {
		c.expect(tc.want, tc.args...)
	}
	for key, buckets := range map[string]string{"b4": "256", "c100": "64", "b6": "2"} {
		info := c.do("CF.INFO", key).([]any)
		if got := show(info[3]); got != buckets {
			t.Errorf("%s: %s buckets, want %s", key, got, buckets)
		}
	}
	c.expect("1", "BF.ADD", "bf", "x")
	c.expect("E:WRONGTYPE Operation against a key holding the wrong kind of value", "CF.ADD", "bf", "a")
	c.expect("E:WRONGTYPE Operation against a key holding the wrong kind of value", "CF.INFO", "bf")
	c.expect("0", "CF.EXISTS", "bf", "x")
	c.expect("0", "CF.COUNT", "bf", "x")
	c.expect("E:Not found", "CF.DEL", "bf", "x")
}

func TestCFMaxExpansions(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dial(t, addr)
	c.expect("OK", "CF.RESERVE", "m", "4", "BUCKETSIZE", "1")
	n := 0
	for ; n < 200; n++ {
		r := c.do("CF.ADD", "m", fmt.Sprint("item", n))
		if e, ok := r.(respErr); ok {
			if string(e) != "Maximum expansions reached" {
				t.Fatalf("add %d: %v", n, e)
			}
			break
		}
	}
	// RedisBloom: 122 adds before the 32nd sub-filter blocks inserts.
	if n < 100 || n > 128 {
		t.Fatalf("max expansions after %d adds, want about 122", n)
	}
	info := c.do("CF.INFO", "m").([]any)
	if show(info[5]) != "32" {
		t.Fatalf("filters %s, want 32", show(info[5]))
	}
	c.expect("E:Maximum expansions reached", "CF.INSERT", "m", "ITEMS", "zz")
	c.expect("OK", "CF.RESERVE", "full", "4", "BUCKETSIZE", "1", "EXPANSION", "0")
	got := show(c.do("CF.INSERT", "full", "ITEMS", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"))
	if !strings.Contains(got, "-1") {
		t.Fatalf("non-growing filter never refused: %s", got)
	}
}
