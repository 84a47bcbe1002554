#!/usr/bin/env bash
# Runs bloomery serve and redis-server under the conditions in which
# RedisBloom's figures in ../shared/reference/redisbloom.md §7 were recorded:
# two unrelated CPU-bound processes beside the servers and the client, and
# the client used there (redis-benchmark --csv -c 50 -r 1000000).
#
#   reference-conditions.sh cells [ROUNDS]   every §7.1 cell (same -n) on
#       bloomery, BF.MEXISTS of 100 items, redis-server's SET/EXISTS at P=1
#       and P=32 and SET 100 to a round trip, and a no-work ceiling for
#       the 100-item shapes (redis-server SMISMEMBER of 100 items on an
#       absent key), per round
#   reference-conditions.sh pairs [ROUNDS]   redis-server SET then bloomery
#       BF.ADD, redis-server EXISTS then bloomery BF.EXISTS, at P=1
#       (-n 100000), alternated ROUNDS times
#   reference-conditions.sh batches [ROUNDS]   the issue's same-run batch
#       baseline, redis-server SETs of random items 100 to a round trip
#       (-P 100; its requests/s are items/s), then bloomery BF.MADD of 100
#       at P=1, then the no-work ceiling (SMISMEMBER of 100, P=1),
#       alternated ROUNDS times
#
# BLOOMERY (default: go build of ./cmd/bloomery into a temp dir) is the
# server binary. redis-server runs with appendonly yes, appendfsync
# everysec, like bloomery's default log. Ports 6393 and 6394. Each line
# also gives the CPU the server used during the run and, where GNU time
# (/usr/bin/time) is installed, the client's, in cores.
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
bpid=$!
redis-server --port 6394 --dir "$tmp/r" --save '' --appendonly yes --appendfsync everysec >/dev/null & pids+=($!)
rpid=$!
sleep 1
items100=$(for _ in $(seq 100); do printf '__rand_int__ '; done)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; } # user+system CPU of a process, in clock ticks
hz=$(getconf CLK_TCK)
rb() { # port n P label command...
  local port=$1 n=$2 p=$3 label=$4 r spid s0 s1 t0 t1 cpu=""
  shift 4
  spid=$bpid
  [ "$port" = 6394 ] && spid=$rpid
  s0=$(ticks "$spid")
  t0=$(date +%s%N)
  if [ -x /usr/bin/time ]; then
    r=$(/usr/bin/time -o "$tmp/time" -f '%U %S' redis-benchmark -p "$port" --csv -c 50 -r 1000000 -n "$n" -P "$p" "$@" | tail -1 | cut -d, -f2,3 | tr -d '"')
  else
    r=$(redis-benchmark -p "$port" --csv -c 50 -r 1000000 -n "$n" -P "$p" "$@" | tail -1 | cut -d, -f2,3 | tr -d '"')
  fi
  t1=$(date +%s%N)
  s1=$(ticks "$spid")
  # CPU used while the run lasted, in cores: the server's, and the
  # client's (redis-benchmark's, when GNU time is installed).
  cpu=$(awk -v s="$((s1 - s0))" -v hz="$hz" -v ns="$((t1 - t0))" 'BEGIN { printf "server %.2f", s / hz / (ns / 1e9) }')
  if [ -s "$tmp/time" ]; then
    cpu="$cpu, client $(awk -v ns="$((t1 - t0))" '{ printf "%.2f", ($1 + $2) / (ns / 1e9) }' "$tmp/time") cores"
    rm -f "$tmp/time"
  else
    cpu="$cpu cores"
  fi
  echo "$label P=$p: ${r%%,*} req/s (p50 ${r##*,} ms), CPU $cpu, load $(cut -d' ' -f1 /proc/loadavg)"
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
    # The issue's same-run baseline for batches: SETs of random items,
    # 100 to a round trip (requests/s are items/s).
    rb 6394 2000000 100 "redis-server SET, 100 pipelined (req/s = items/s)" SET __rand_int__ 1
    # shellcheck disable=SC2086
    bf; rb 6393 20000 1 "bloomery BF.MADD x100" BF.MADD bench:bf $items100
    # shellcheck disable=SC2086
    rb 6393 100000 32 "bloomery BF.MADD x100" BF.MADD bench:bf $items100
    # shellcheck disable=SC2086
    rb 6393 20000 1 "bloomery BF.MEXISTS x100" BF.MEXISTS bench:bf $items100
    # shellcheck disable=SC2086
    rb 6393 100000 32 "bloomery BF.MEXISTS x100" BF.MEXISTS bench:bf $items100
    # A no-work ceiling for these shapes: the same request (100 random
    # items) and reply (100 integers) from a server that does no per-item
    # work, redis-server's SMISMEMBER on a key that does not exist: how far
    # a server gets with this client under these conditions when its own
    # work costs next to nothing.
    # shellcheck disable=SC2086
    rb 6394 20000 1 "redis-server SMISMEMBER x100, absent key" SMISMEMBER bench:none $items100
    # shellcheck disable=SC2086
    rb 6394 100000 32 "redis-server SMISMEMBER x100, absent key" SMISMEMBER bench:none $items100
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
  batches)
    bf
    rb 6394 2000000 100 "redis-server SET, 100 pipelined (req/s = items/s)" SET __rand_int__ 1
    # shellcheck disable=SC2086
    rb 6393 20000 1 "bloomery BF.MADD x100 (x100 = items/s)" BF.MADD bench:bf $items100
    # shellcheck disable=SC2086
    rb 6394 20000 1 "redis-server SMISMEMBER x100, absent key" SMISMEMBER bench:none $items100
    ;;
  *) echo "usage: $0 cells|pairs|batches [ROUNDS]" >&2; exit 2 ;;
  esac
done
