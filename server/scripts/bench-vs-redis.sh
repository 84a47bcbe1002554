#!/usr/bin/env bash
# Side-by-side throughput of `bloomery serve` and Debian's redis-server on
# this machine, with redis-benchmark (50 clients, random items from a 1e6
# keyspace), run back to back, twice each, as in
# ../shared/reference/redisbloom.md §7.1. RedisBloom is not packaged here, so
# redis-server with plain commands of the same shape is the same-run
# baseline: SET/EXISTS for single items, MSET of 100 keys for BF.MADD of 100
# items. Prints CSV: run,server,command,pipeline,requests_per_sec,p50_ms.
# Usage: server/scripts/bench-vs-redis.sh [bloomery-binary]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-}
if [ -z "$BIN" ]; then
  BIN=$(mktemp -d)/bloomery
  go build -o "$BIN" ./cmd/bloomery
fi
BP=${BLOOMERY_BENCH_PORT:-16480}
RP=${REDIS_BENCH_PORT:-16481}
DIR=$(mktemp -d)
"$BIN" serve --addr 127.0.0.1:$BP --dir "$DIR" --appendfsync everysec --log-level warn &
BPID=$!
redis-server --port $RP --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
RPID=$!
trap 'kill $BPID $RPID 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 1
rb() { # port n pipeline args...
  local port=$1 n=$2 p=$3; shift 3
  redis-benchmark -p "$port" -c 50 -n "$n" -r 1000000 -P "$p" --csv "$@" | tail -1 | awk -F'","' '{gsub(/"/,"",$2); gsub(/"/,"",$3); print $2","$3}'
}
madd=(); mset=()
for i in $(seq 100); do madd+=(__rand_int__); mset+=(k:__rand_int__ v); done
echo "run,server,command,pipeline,requests_per_sec,p50_ms"
for run in 1 2; do
  redis-cli -p $BP DEL bench:bf >/dev/null
  redis-cli -p $BP BF.RESERVE bench:bf 0.01 1000000 >/dev/null
  for p in 1 32; do
    n=200000; [ $p = 32 ] && n=2000000
    echo "$run,redis,SET,$p,$(rb $RP $n $p SET __rand_int__ 1)"
    echo "$run,bloomery,BF.ADD,$p,$(rb $BP $n $p BF.ADD bench:bf __rand_int__)"
    echo "$run,redis,EXISTS,$p,$(rb $RP $n $p EXISTS __rand_int__)"
    echo "$run,bloomery,BF.EXISTS,$p,$(rb $BP $n $p BF.EXISTS bench:bf __rand_int__)"
  done
  for p in 1 32; do
    n=20000; [ $p = 32 ] && n=100000
    echo "$run,redis,MSET x100,$p,$(rb $RP $n $p MSET "${mset[@]}")"
    echo "$run,bloomery,BF.MADD x100,$p,$(rb $BP $n $p BF.MADD bench:bf "${madd[@]}")"
    echo "$run,bloomery,BF.MEXISTS x100,$p,$(rb $BP $n $p BF.MEXISTS bench:bf "${madd[@]}")"
  done
  redis-cli -p $BP DEL bench:cf >/dev/null
  redis-cli -p $BP CF.RESERVE bench:cf 4000000 >/dev/null
  for p in 1 32; do
    n=200000; [ $p = 32 ] && n=1000000
    echo "$run,bloomery,CF.ADD,$p,$(rb $BP $n $p CF.ADD bench:cf __rand_int__)"
    echo "$run,bloomery,CF.EXISTS,$p,$(rb $BP $n $p CF.EXISTS bench:cf __rand_int__)"
  done
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
