#!/bin/sh
# tcp-crr (netperf's TCP_CRR) on loopback, per family: REPS repetitions, the repetition
# the outer loop and the family order alternating, split pinning (server on CPU 1,
# client on CPU 0; PIN=none runs both ends wherever the scheduler puts them). With
# NETPERF=DIR (holding netperf and netserver built from
# HewlettPackard/netperf), netperf's TCP_CRR runs beside it in the same rotation.
# Prints one line per run: tool, family, connections/s.
#   sh benches/crr.sh [BIN] [REPS] [SECS] [SIZE]
set -eu
BIN=${1:-target/release/dualperf}
REPS=${2:-5}
SECS=${3:-3}
SIZE=${4:-64}
PORT=5391
# Split pinning, or (PIN=none) every CPU for both ends; taskset either way, so $! is the
# server itself and the trap ends it.
if [ "${PIN:-split}" = none ]; then
    CLIENT_CPUS=0-$(($(nproc) - 1))
    SERVER_CPUS=$CLIENT_CPUS
else
    CLIENT_CPUS=0
    SERVER_CPUS=1
fi
taskset -c "$SERVER_CPUS" "$BIN" server --bind 127.0.0.1 --bind ::1 --port $PORT \
    --max-duration 60 >/dev/null &
SERVER=$!
NETSERVER=
if [ -n "${NETPERF:-}" ]; then
    taskset -c "$SERVER_CPUS" "$NETPERF/netserver" -D -p 12865 >/dev/null 2>&1 &
    NETSERVER=$!
fi
trap 'kill $SERVER ${NETSERVER:-} 2>/dev/null' EXIT
sleep 1
rate() { # family host
    taskset -c "$CLIENT_CPUS" "$BIN" run -t tcp-crr "$2" --port $PORT -s "$SIZE" -d "$SECS" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print([m["value"] for m in d["metrics"] if m["name"]=="connections_per_s"][0])'
}
netperf_rate() { # family host
    taskset -c "$CLIENT_CPUS" "$NETPERF/netperf" -"$1" -H "$2" -p 12865 -t TCP_CRR -l "$SECS" -P 0 -- -r "$SIZE,$SIZE" |
        awk 'NF >= 6 { r = $6 } END { print r }'
}
i=0
while [ $i -lt "$REPS" ]; do
    if [ $((i % 2)) -eq 0 ]; then order="4 6"; else order="6 4"; fi
    for f in $order; do
        if [ "$f" = 4 ]; then host=127.0.0.1; else host=::1; fi
        echo "dualperf IPv$f $(rate $f $host)"
        if [ -n "$NETSERVER" ]; then
            echo "netperf IPv$f $(netperf_rate $f $host)"
        fi
    done
    i=$((i + 1))
done
