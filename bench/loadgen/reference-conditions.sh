#!/usr/bin/env bash
# Runs bloomery serve and redis-server under the conditions in which
# RedisBloom's figures in ../shared/reference/redisbloom.md §7 were recorded:
# two unrelated CPU-bound processes beside the servers and the client, and
# the client used there (redis-benchmark --csv -c 50 -r 1000000).
#
#   reference-conditions.sh cells [ROUNDS]   every §7.1 cell (same -n) on
#       bloomery, and redis-server's SET/EXISTS at P=1 and P=32, per round
#   reference-conditions.sh pairs [ROUNDS]   redis-server SET then bloomery
#       BF.ADD, redis-server EXISTS then bloomery BF.EXISTS, at P=1
#       (-n 100000), alternated ROUNDS times
#
# BLOOMERY (default: go build of ./cmd/bloomery into a temp dir) is the
# server binary. redis-server runs with appendonly yes, appendfsync
# everysec, like bloomery's default log. Ports 6393 and 6394.
set -euo pipefail
mode=${1:-cells}
rounds=${2:-2}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
if [ -z "${BLOOMERY:-}" ]; then
  (cd "$here" && go build -o "$tmp/bloomery" ./cmd/bloomery)
  BLOOMERY=$tmp/bloomery
fi
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in 1 2; do (while :; do :; done) & pids+=($!); done
mkdir -p "$tmp/b" "$tmp/r"
"$BLOOMERY" serve --addr 127.0.0.1:6393 --dir "$tmp/b" --log-level warn & pids+=($!)
redis-server --port 6394 --dir "$tmp/r" --save '' --appendonly yes --appendfsync everysec >/dev/null & pids+=($!)
sleep 1
items100=$(for _ in $(seq 100); do printf '__rand_int__ '; done)
rb() { # port n P label command...
  local port=$1 n=$2 p=$3 label=$4 r
  shift 4
  r=$(redis-benchmark -p "$port" --csv -c 50 -r 1000000 -n "$n" -P "$p" "$@" | tail -1 | cut -d, -f2,3 | tr -d '"')
  echo "$label P=$p: ${r%%,*} req/s (p50 ${r##*,} ms), load $(cut -d' ' -f1 /proc/loadavg)"
}
bf() { redis-cli -p 6393 DEL bench:bf >/dev/null; redis-cli -p 6393 BF.RESERVE bench:bf 0.01 1000000 >/dev/null; }
cf() { redis-cli -p 6393 DEL bench:cf >/dev/null; redis-cli -p 6393 CF.RESERVE bench:cf 4000000 >/dev/null; }
for round in $(seq "$rounds"); do
  echo "-- round $round"
  case $mode in
  cells)
    rb 6394 200000 1 "redis-server SET" SET __rand_int__ 1
    rb 6394 200000 1 "redis-server EXISTS" EXISTS __rand_int__
    rb 6394 2000000 32 "redis-server SET" SET __rand_int__ 1
    rb 6394 2000000 32 "redis-server EXISTS" EXISTS __rand_int__
    bf; rb 6393 200000 1 "bloomery BF.ADD" BF.ADD bench:bf __rand_int__
    rb 6393 200000 1 "bloomery BF.EXISTS" BF.EXISTS bench:bf __rand_int__
    rb 6393 2000000 32 "bloomery BF.ADD" BF.ADD bench:bf __rand_int__
    rb 6393 2000000 32 "bloomery BF.EXISTS" BF.EXISTS bench:bf __rand_int__
    # shellcheck disable=SC2086
    bf; rb 6393 20000 1 "bloomery BF.MADD x100" BF.MADD bench:bf $items100
    # shellcheck disable=SC2086
    rb 6393 100000 32 "bloomery BF.MADD x100" BF.MADD bench:bf $items100
    cf; rb 6393 200000 1 "bloomery CF.ADD" CF.ADD bench:cf __rand_int__
    rb 6393 200000 1 "bloomery CF.EXISTS" CF.EXISTS bench:cf __rand_int__
    cf; rb 6393 1000000 32 "bloomery CF.ADD" CF.ADD bench:cf __rand_int__
    rb 6393 2000000 32 "bloomery CF.EXISTS" CF.EXISTS bench:cf __rand_int__
    ;;
  pairs)
    [ "$round" = 1 ] && bf
    rb 6394 100000 1 "redis-server SET" SET __rand_int__ 1
    rb 6393 100000 1 "bloomery BF.ADD" BF.ADD bench:bf __rand_int__
    rb 6394 100000 1 "redis-server EXISTS" EXISTS __rand_int__
    rb 6393 100000 1 "bloomery BF.EXISTS" BF.EXISTS bench:bf __rand_int__
    ;;
  *) echo "usage: $0 cells|pairs [ROUNDS]" >&2; exit 2 ;;
  esac
done
