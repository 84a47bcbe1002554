#!/bin/bash
# cpu-per-item.sh BLOOMERY_BIN LOADGEN_BIN SHAPE P [DURATION]
#
# Starts `bloomery serve` on a fresh data directory, prepares the keyspace
# with one `loadgen run` (FLUSHALL, BF.RESERVE/CF.RESERVE, prefill for
# query shapes), then measures one run of SHAPE at pipeline depth P with
# 50 connections and prints the throughput, the server's CPU time per item
# (user + system from /proc/PID/stat) and its read/write system calls per
# unit (/proc/PID/io). Used to compare two server binaries alternately in
# the same machine state (docs/server-benchmarks.md):
#
#   for s in bf.add bf.mexists; do for b in /tmp/old /tmp/new; do
#     server/scripts/cpu-per-item.sh $b /tmp/loadgen $s 32 2s; done; done
set -euo pipefail
BIN=$1 LG=$2 SHAPE=$3 P=$4 D=${5:-2s}
PORT=$((20000 + RANDOM % 20000))
DIR=$(mktemp -d)
"$BIN" serve --addr 127.0.0.1:$PORT --dir "$DIR" --log-level warn &
SPID=$!
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 50); do
	(echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break
	sleep 0.1
done
cpu() { awk '{print $14 + $15}' /proc/$SPID/stat; }
io() { awk -v k="$1:" '$1 == k {print $2}' /proc/$SPID/io; }
"$LG" run -addr 127.0.0.1:$PORT -shape "$SHAPE" -c 50 -P "$P" -d 0 -n 1 -procs 2 > /dev/null
C0=$(cpu) W0=$(io syscw) R0=$(io syscr)
OUT=$("$LG" run -addr 127.0.0.1:$PORT -shape "$SHAPE" -c 50 -P "$P" -d "$D" -procs 2 -reset=false -prefill 0 2>&1)
C1=$(cpu) W1=$(io syscw) R1=$(io syscr)
ITEMS=$(echo "$OUT" | grep -o '[0-9]* items/s' | awk '{print $1}')
UNITS=$(echo "$OUT" | grep -o '([0-9]* units' | tr -d '(' | awk '{print $1}')
BATCH=1
case $SHAPE in *madd | *mexists) BATCH=100 ;; esac
awk -v b="$(basename "$BIN")" -v s="$SHAPE" -v p="$P" -v it="$ITEMS" -v c=$((C1 - C0)) -v t="$(getconf CLK_TCK)" \
	-v u="$UNITS" -v n=$BATCH -v w=$((W1 - W0)) -v r=$((R1 - R0)) 'BEGIN {
	printf "%s %s P=%s items/s=%s server_cpu_us/item=%.3f writes/unit=%.2f reads/unit=%.2f\n",
		b, s, p, it, c * 1e6 / t / (u * n), w / u, r / u }'
