#!/usr/bin/env python3
"""Build a results database holding one campaign of N runs (default 1 000 000), to
measure `dualperf show`, `report` and `export` at scale (docs/benchmarks/store.md, "The store
at scale").

    cargo build --release -p dualperf
    python3 benches/large_db.py /tmp/large.db --runs 1000000
    /usr/bin/time -v target/release/dualperf show --db /tmp/large.db 1

The schema is dualperf's own: a fake study (DUALPERF_STUDY_FAKE=1, no network) of 4 tests
x 6 sizes x 2 families (48 cells, one run each) creates the file, the campaign, its hosts
and cells. The runs are then added with bulk SQL inserts, each with the metrics a real run
of its test stores (18 to 28 of them: counters, rates, CPU, RTT percentiles or UDP
delivery) and 4 to 6 applied settings; the values vary around plausible ones. The added
runs have no interval samples (a report reads samples only of the few runs it draws over
time). About 2 minutes and 2.5 GB of disk for a million runs.

With --postgres URL the finished file is then copied into that (empty) PostgreSQL
database with `dualperf import` (slow: a transaction of inserts per run).
"""
import argparse
import os
import random
import sqlite3
import subprocess
import sys

TESTS = ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"]
SIZES = [128, 384, 640, 896, 1152, 1408]

COMMON = [
    "sent_bytes", "recv_bytes", "sent_packets", "recv_packets", "duration_s",
    "ip_packet_bytes", "eth_frame_bytes", "cpu_local_pct", "cpu_remote_pct",
    "cpu_local_busiest_core_pct", "cpu_remote_busiest_core_pct", "proc_local_pct",
    "proc_remote_pct", "service_demand_local_us", "service_demand_remote_us",
]
BY_TEST = {
    "tcp-stream": ["throughput_bps", "send_rate_bps", "sent_pps"],
    "udp-stream": [
        "throughput_bps", "send_rate_bps", "sent_pps", "recv_pps", "lost_packets",
        "loss_pct", "dup_packets", "reordered_packets", "jitter_rfc3550_ns",
        "ipdv_p50_ns", "ipdv_p99_ns", "receiver_limited", "rate_search_trials",
    ],
    "tcp-rr": [
        "transactions_per_s", "transactions", "rr_timeouts", "rtt_mean_ns",
        "rtt_stddev_ns", "rtt_min_ns", "rtt_p50_ns", "rtt_p90_ns", "rtt_p99_ns",
        "rtt_p999_ns", "rtt_max_ns",
    ],
}
BY_TEST["udp-rr"] = BY_TEST["tcp-rr"]
APPLIED = ["client.sndbuf_bytes", "client.rcvbuf_bytes", "server.sndbuf_bytes",
           "server.rcvbuf_bytes"]
UDP_APPLIED = ["client.udp_datapath_calls", "server.udp_datapath_calls"]

# Units as wire::metrics::unit_of gives them (the run_metrics.unit column).
def unit_of(name):
    for suffix, unit in (("_bps", "bit/s"), ("_pps", "packets/s"), ("_ns", "ns"),
                         ("_pct", "%"), ("_bytes", "bytes"), ("_packets", "count")):
        if name.endswith(suffix):
            return unit
    if name in ("transactions", "rr_timeouts", "rate_search_trials"):
        return "count"
    for suffix, unit in (("_per_s", "1/s"), ("_s", "s"), ("_us", "\u00b5s")):
        if name.endswith(suffix):
            return unit
    return "flag" if name == "receiver_limited" else ""


def value(name, size, rng):
    """A plausible value of `name` for a run of payload `size`."""
    n = rng.random()
    if name == "loss_pct":
        return 0.2 + n
    if name.endswith("_pct"):
        return 20 + 40 * n
    if name.endswith("_bps"):
        return (900 + 40 * n) * 1e6 * size / (size + 66)
    if name.endswith("_ns"):
        return 30_000 + 10_000 * n
    if name in ("receiver_limited", "rr_timeouts", "dup_packets", "reordered_packets"):
        return 0.0
    return float(int(1000 + 1e6 * n))


def seed_study(dualperf, db):
    env = dict(os.environ, DUALPERF_STUDY_FAKE="1")
    cmd = [dualperf, "study", "--tests", ",".join(TESTS),
           "--sizes", ",".join(map(str, SIZES)), "--runs", "1", "--duration", "0.01",
           "--label", "large", "--db", db, "-q"]
    subprocess.run(cmd, env=env, check=True)


def fill(db, runs, seed):
    rng = random.Random(seed)
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode=OFF")
    c.execute("PRAGMA synchronous=OFF")
    (campaign,) = c.execute("SELECT max(id) FROM campaigns").fetchone()
    cells = c.execute(
        "SELECT id, kind, payload_bytes FROM cells WHERE campaign_id = ? ORDER BY cell_index",
        (campaign,)).fetchall()
    (next_id,) = c.execute("SELECT coalesce(max(id), 0) + 1 FROM runs").fetchone()
    (t0,) = c.execute("SELECT max(started_unix_ns) FROM runs").fetchone()
    existing = c.execute("SELECT count(*) FROM runs WHERE campaign_id = ?",
                         (campaign,)).fetchone()[0]
    todo = runs - existing
    batch = 20_000
    done = 0
    while done < todo:
        n = min(batch, todo - done)
        run_rows, metric_rows, applied_rows = [], [], []
        for i in range(done, done + n):
            cell_id, kind, size = cells[i % len(cells)]
            rep = 1 + i // len(cells)
            rid = next_id + i
            start = t0 + (i + 1) * 500_000_000
            run_rows.append((rid, campaign, cell_id, rep, 0, 0, 1, None, start, 500_000_000))
            for name in sorted(COMMON + BY_TEST[kind]):
                metric_rows.append((rid, name, value(name, size, rng), unit_of(name)))
            for key in APPLIED + (UDP_APPLIED if kind.startswith("udp") else []):
                v = "linux:sendmmsg/recvmmsg" if key.endswith("calls") else "212992"
                applied_rows.append((rid, key, v))
        c.executemany("INSERT INTO runs (id, campaign_id, cell_id, repetition, warmup, "
                      "attempt, ok, failure_reason, started_unix_ns, duration_ns) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", run_rows)
        c.executemany("INSERT INTO run_metrics (run_id, name, value, unit) VALUES (?, ?, ?, ?)",
                      metric_rows)
        c.executemany("INSERT INTO run_applied (run_id, key, value) VALUES (?, ?, ?)",
                      applied_rows)
        c.commit()
        done += n
        print(f"\r{existing + done} runs", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    c.execute("UPDATE campaigns SET finished = 1 WHERE id = ?", (campaign,))
    c.commit()
    c.execute("ANALYZE")
    c.execute("PRAGMA journal_mode=WAL")
    c.close()
    return campaign


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "target", "release", "dualperf")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("db", help="the SQLite file to create (replaced if present)")
    p.add_argument("--runs", type=int, default=1_000_000)
    p.add_argument("--dualperf", default=default_bin, help="the binary (default: release build)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--postgres", metavar="URL", help="then import the file into this database")
    a = p.parse_args()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(a.db + suffix):
            os.remove(a.db + suffix)
    seed_study(a.dualperf, a.db)
    campaign = fill(a.db, a.runs, a.seed)
    print(f"{a.db}: campaign {campaign}, {a.runs} runs")
    if a.postgres:
        subprocess.run([a.dualperf, "import", a.db, "--db", a.postgres], check=True)


if __name__ == "__main__":
    main()
