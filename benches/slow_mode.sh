#!/usr/bin/env bash
# The loopback "slow mode" of docs/benchmarks/main-job.md: N back-to-back unpaced udp-stream runs
# (client on CPU 0, server on CPU 1), one line per run with the received and sent rates,
# loss, the CPU ticks of each CPU (busy, idle, irq+softirq, steal from /proc/stat) and of
# ksoftirqd/0 and /1, and a CPU canary timed on each CPU just before the run (a fixed
# xorshift loop and a pointer chase, built with cc): a run in the slow mode shows a
# rate near 0.4x of the others while the canary does not move.
#
#   cargo build --release -p dualperf
#   benches/slow_mode.sh [N=60] [SIZE=1408]
set -euo pipefail
N=${1:-60}; SIZE=${2:-1408}
D=${DUALPERF:-target/release/dualperf}
T=$(mktemp -d); trap 'kill "${SRV:-}" 2>/dev/null || true; rm -rf "$T"' EXIT
cat > "$T/canary.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
static double ms(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(void){
  double t0=ms(); uint64_t x=88172645463325252ULL;
  for(long i=0;i<20000000;i++){x^=x<<13;x^=x>>7;x^=x<<17;}
  double t1=ms(); size_t n=16<<20; uint32_t *a=malloc(n*4);
  for(size_t i=0;i<n;i++)a[i]=(uint32_t)((i*2654435761u)%n);
  double t2=ms(); uint32_t j=0; for(long i=0;i<2000000;i++)j=a[j];
  /* x and j feed the output so the loops are not optimised away. */
  double t3=ms(); printf("alu=%.1fms mem=%.1fms%s\n",t1-t0,t3-t2,(x+j)==1?" ":"");
  return 0;
}
C
cc -O2 -o "$T/canary" "$T/canary.c"
taskset -c 1 "$D" server -p 5409 >/dev/null 2>&1 & SRV=$!
sleep 0.5
kt() { awk '{print $14+$15}' "/proc/$(pgrep -x "ksoftirqd/$1")/stat"; }
cpu() { awk -v c="cpu$1" '$1==c{print $2+$3+$4, $5, $7+$8, $9}' /proc/stat; }
for i in $(seq 1 "$N"); do
  c0=$(taskset -c 0 "$T/canary"); c1=$(taskset -c 1 "$T/canary" | cut -d' ' -f1)
  k0=$(kt 0); k1=$(kt 1); p0=$(cpu 0); p1=$(cpu 1)
  r=$(taskset -c 0 "$D" run 127.0.0.1 -p 5409 -t udp-stream -s "$SIZE" -d 1 --json |
      python3 -c 'import json,sys; m={x["name"]:x["value"] for x in json.load(sys.stdin)["metrics"]}; print("rx_kpps=%.0f tx_kpps=%.0f loss=%.2f%%" % (m["recv_pps"]/1e3, m["sent_pps"]/1e3, m["loss_pct"]))')
  echo "$i $r cpu0[$p0 -> $(cpu 0)] cpu1[$p1 -> $(cpu 1)] ksoftirqd0=$(( $(kt 0) - k0 )) ksoftirqd1=$(( $(kt 1) - k1 )) canary0: $c0 canary1: $c1"
done
