#!/usr/bin/env python3
"""Side-by-side loopback comparison of dualperf with iperf3, nuttcp, qperf and sockperf.

Every case is run REPS times; the repetition is the outer loop and the tool order
rotates each repetition, so drift does not land on one tool. Servers are pinned to one
CPU and clients to the other (split placement) unless --pin same|none is given.
Prints a Markdown table (median (min-max) over the repetitions) and writes every raw
value to a CSV file.

    sudo apt-get install iperf3 sockperf nuttcp qperf
    cargo build --release -p dualperf
    python3 benches/compare.py --reps 5 --duration 3 --csv /tmp/compare.csv

Besides each tool's own figures, every stream case gets the CPU service demand of
each side as netperf defines it (µs of CPU per KB moved, KB = 1024 bytes): the client
(sender) from wait4's rusage of the client process, the server (receiver) from
/proc/PID/stat deltas of the tool's long-running server around the case (not for qperf,
whose server forks per test). DUALPERF=PATH picks the binary.

--baseline PATH adds an older dualperf binary as the tools `dualperf_baseline` and
`dualperf_baseline_perdgram` (its own server on another port), interleaved with the
rest, and a column new / baseline per datapath:
a same-run check that a change left the datapath no slower. --tools limits the tools.
"""
import argparse
import csv
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

DUALPERF = os.environ.get("DUALPERF", "target/release/dualperf")
BASELINE = None
PORT_DP, PORT_IPERF3, PORT_SP_UDP, PORT_SP_TCP = 5301, 5211, 11211, 11212
PORT_BASELINE = 5302
PORT_NUTTCP, PORT_NUTTCP6, PORT_QPERF = 5400, 5410, 19800


def pin(cpu, args):
    return ["taskset", "-c", str(cpu)] + args if cpu is not None else args


# CPU seconds (user + system, all threads) the last client process used, from wait4.
LAST_CLIENT_CPU_S = 0.0


def run(cmd, timeout):
    global LAST_CLIENT_CPU_S
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    # communicate() reaped the child; its rusage is in RUSAGE_CHILDREN, summed over all
    # children so far: take the difference.
    LAST_CLIENT_CPU_S = children_cpu_s() - run.children_before
    run.children_before = children_cpu_s()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()[:300]}")
    return out


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


run.children_before = 0.0

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    """CPU seconds of a running server: utime + stime of all its threads, plus cutime +
    cstime of children it has reaped (qperf forks per test), in clock ticks (10 ms)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) * TICK_S


def dp_metrics(out):
    return {m["name"]: m["value"] for m in json.loads(out)["metrics"]}


def addr(fam):
    return "127.0.0.1" if fam == 4 else "::1"


UDP_RATE = "800kpps"


def case_dualperf(case, fam, dur, cpu, rate=None, exe=None, port=None, extra=()):
    a = addr(fam)
    exe, port = exe or DUALPERF, port or PORT_DP
    base = [exe, "run", a, "-p", str(port), "-f", str(fam), "-d", str(dur), "--json", *extra]
    kind, size = case
    if kind == "udp":
        extra = ["-b", rate] if rate else []
        m = dp_metrics(run(pin(cpu, base + ["-t", "udp-stream", "-s", str(size)] + extra), dur + 20))
        return {"rx_kpps": m["recv_pps"] / 1e3, "loss_pct": m["loss_pct"]}
    if kind in TCP_BULK:
        m = dp_metrics(run(pin(cpu, base + ["-t", "tcp-stream"] + size_opt("-s", size)
                                + TCP_BULK[kind]["dualperf"]), dur + 20))
        return {"gbps": m["throughput_bps"] / 1e9}
    m = dp_metrics(run(pin(cpu, base + ["-t", kind, "-s", str(size)]), dur + 20))
    return {"rtt_us": m["rtt_mean_ns"] / 1e3}


def case_iperf3(case, fam, dur, cpu):
    kind, size = case
    cmd = ["iperf3", "-c", addr(fam), "-p", str(PORT_IPERF3), "-t", str(dur), "-J"]
    if kind == "udp":
        j = json.loads(run(pin(cpu, cmd + ["-u", "-b", "0", "-l", str(size)]), dur + 20))
        s = j["end"]["sum"]
        rx = (s["packets"] - s["lost_packets"]) / s["seconds"]
        return {"rx_kpps": rx / 1e3, "loss_pct": s["lost_percent"]}
    if kind in TCP_BULK:
        if TCP_BULK[kind]["iperf3"] is None:
            return None
        extra = [] if size >= 131072 else size_opt("-l", size)
        j = json.loads(run(pin(cpu, cmd + extra + TCP_BULK[kind]["iperf3"]), dur + 20))
        return {"gbps": j["end"]["sum_received"]["bits_per_second"] / 1e9}
    return None


def case_sockperf(case, fam, dur, cpu):
    kind, size = case
    if kind not in ("udp-rr", "tcp-rr") or fam != 4:  # Debian's sockperf 3.7 is IPv4-only
        return None
    cmd = ["sockperf", "pp", "-i", addr(fam), "-m", str(size), "-t", str(dur)]
    cmd += ["--tcp", "-p", str(PORT_SP_TCP)] if kind == "tcp-rr" else ["-p", str(PORT_SP_UDP)]
    out = run(pin(cpu, cmd), dur + 20)
    mo = re.search(r"avg-lat(?:ency)?=\s*([0-9.]+)", out)
    if not mo:
        raise RuntimeError("cannot find avg-latency in sockperf output")
    return {"rtt_us": 2 * float(mo.group(1))}  # sockperf prints half the round trip


PACED_ARGS = []


def case_dualperf_paced(case, fam, dur, cpu):
    if case[0] != "udp":
        return None
    return case_dualperf(case, fam, dur, cpu, rate=UDP_RATE, extra=PACED_ARGS)


def case_dualperf_perdgram(case, fam, dur, cpu, exe=None, port=None):
    """dualperf with --udp-datapath per-datagram: one datagram per system call, the same
    work per packet as the peers (UDP only; TCP has no such choice)."""
    if case[0] != "udp":
        return None
    a = addr(fam)
    exe, port = exe or DUALPERF, port or PORT_DP
    base = [exe, "run", a, "-p", str(port), "-f", str(fam), "-d", str(dur), "--json",
            "--udp-datapath", "per-datagram", "-t", "udp-stream", "-s", str(case[1])]
    m = dp_metrics(run(pin(cpu, base), dur + 20))
    return {"rx_kpps": m["recv_pps"] / 1e3, "loss_pct": m["loss_pct"]}


def nuttcp_fields(out):
    return {k: v for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}


def case_nuttcp(case, fam, dur, cpu):
    kind, size = case
    port = ["-6", "-P", str(PORT_NUTTCP6)] if fam == 6 else ["-P", str(PORT_NUTTCP)]
    cmd = ["nuttcp", "-fparse", f"-T{dur}"] + port
    if kind == "udp":
        f = nuttcp_fields(run(pin(cpu, cmd + ["-u", "-R", "50g", f"-l{size}", addr(fam)]), dur + 20))
        pkt, drop, secs = float(f["pkt"]), float(f["drop"]), float(f["real_seconds"])
        return {"rx_kpps": (pkt - drop) / secs / 1e3, "loss_pct": 100 * drop / pkt if pkt else 0.0}
    if kind in TCP_BULK:
        if TCP_BULK[kind]["nuttcp"] is None:
            return None
        size_arg = [f"-l{size}"] if size else []
        f = nuttcp_fields(run(pin(cpu, cmd + size_arg + TCP_BULK[kind]["nuttcp"] + [addr(fam)]), dur + 20))
        return {"gbps": float(f["rate_Mbps"]) / 1e3}
    return None


def qperf_value(out, key):
    mo = re.search(rf"{key}\s*=\s*([0-9.,]+)\s*(\S*)", out)
    if not mo:
        raise RuntimeError(f"cannot find {key} in qperf output")
    v = float(mo.group(1).replace(",", ""))
    unit = mo.group(2)
    scale = {"K/sec": 1e3, "M/sec": 1e6, "KB/sec": 1e3, "MB/sec": 1e6, "GB/sec": 1e9,
             "us": 1.0, "ms": 1e3, "ns": 1e-3}.get(unit, 1.0)
    return v * scale


def case_qperf(case, fam, dur, cpu):
    kind, size = case
    cmd = ["qperf", "-lp", str(PORT_QPERF), "-t", str(int(max(1, dur))), "-vv"] + size_opt("-m", size) + [addr(fam)]
    if kind == "udp":
        out = run(pin(cpu, cmd + ["udp_bw"]), dur + 20)
        sent = qperf_value(out, "send_msgs")
        recv = qperf_value(out, "recv_msgs")
        secs = qperf_value(out, "recv_real_time")
        return {"rx_kpps": recv / secs / 1e3, "loss_pct": 100 * (sent - recv) / sent if sent else 0.0}
    if kind in TCP_BULK:
        if TCP_BULK[kind]["qperf"] is None:
            return None
        return {"gbps": qperf_value(run(pin(cpu, cmd + ["tcp_bw"]), dur + 20), "bw") * 8 / 1e9}
    lat = qperf_value(run(pin(cpu, cmd + [kind.replace("-rr", "_lat")]), dur + 20), "latency")
    return {"rtt_us": 2 * lat}  # qperf prints half the round trip


def case_dualperf_baseline(case, fam, dur, cpu):
    return case_dualperf(case, fam, dur, cpu, exe=BASELINE, port=PORT_BASELINE)


def case_dualperf_baseline_perdgram(case, fam, dur, cpu):
    return case_dualperf_perdgram(case, fam, dur, cpu, exe=BASELINE, port=PORT_BASELINE)


# Bulk TCP cases: each tool's options for the variant (None: the tool has no such mode).
# tcp = one stream client -> server; tcp-r = server -> client (-R / nuttcp -r); tcp-p2 =
# two streams (-P 2 / nuttcp -N 2); tcp-zc = zero-copy sending with MSG_ZEROCOPY
# (--zerocopy), tcp-zcs = with sendfile (--zerocopy=sendfile); iperf3's -Z is sendfile.
# A case size of 0 means each tool's default write size.
TCP_BULK = {
    "tcp": {"dualperf": [], "iperf3": [], "nuttcp": [], "qperf": []},
    "tcp-r": {"dualperf": ["-R"], "iperf3": ["-R"], "nuttcp": ["-r"], "qperf": None},
    "tcp-p2": {"dualperf": ["-P", "2"], "iperf3": ["-P", "2"], "nuttcp": ["-N", "2"], "qperf": None},
    "tcp-zc": {"dualperf": ["--zerocopy"], "iperf3": ["-Z"], "nuttcp": None, "qperf": None},
    "tcp-zcs": {"dualperf": ["--zerocopy=sendfile"], "iperf3": ["-Z"], "nuttcp": None, "qperf": None},
}


def size_opt(flag, size):
    """A tool's write-size option, or none for size 0 (the tool's default)."""
    return [flag, str(size)] if size else []


TOOLS = {
    "dualperf": case_dualperf,
    "dualperf_paced": case_dualperf_paced,
    "dualperf_perdgram": case_dualperf_perdgram,
    "iperf3": case_iperf3,
    "nuttcp": case_nuttcp,
    "qperf": case_qperf,
    "sockperf": case_sockperf,
}
CASES = [("udp", 128), ("udp", 1408), ("tcp", 131072), ("tcp", 1408), ("tcp", 128), ("tcp-rr", 128), ("udp-rr", 128)]


def service_demand(case, dur, res, client_cpu_s, server_cpu_s):
    """CPU µs per KB (1024 bytes) moved, per side, as netperf's service demand: the
    client sends, the server receives. Bytes from the tool's own figure (received
    datagrams × payload for UDP, goodput × duration for TCP); the run's duration is the
    asked one, so start-up CPU counts too (the same for every tool)."""
    kind, size = case
    if kind == "udp":
        kb = res["rx_kpps"] * 1e3 * dur * size / 1024
    elif kind in TCP_BULK:
        kb = res["gbps"] * 1e9 / 8 * dur / 1024
    else:
        return {}
    out = {}
    # tx = the sending side, rx = the receiving one: with tcp-r the server sends.
    tx_s, rx_s = (server_cpu_s, client_cpu_s) if kind == "tcp-r" else (client_cpu_s, server_cpu_s)
    if kb > 0:
        if tx_s is not None:
            out["sd_tx_us_per_kb"] = tx_s * 1e6 / kb
        if rx_s is not None:
            out["sd_rx_us_per_kb"] = rx_s * 1e6 / kb
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=float, default=3)
    ap.add_argument("--pin", choices=["split", "same", "none"], default="split")
    ap.add_argument("--csv", default="/tmp/dualperf-compare.csv")
    ap.add_argument("--families", default="4,6")
    ap.add_argument("--udp-rate", default=UDP_RATE, help="rate of the dualperf_paced UDP runs")
    ap.add_argument("--paced-args", default="",
                    help="more dualperf run options for dualperf_paced, e.g. '--rcvbuf 16M'")
    ap.add_argument("--baseline", help="an older dualperf binary to compare with, same run")
    ap.add_argument("--tools", help="comma-separated subset of the tools (default: all)")
    ap.add_argument("--cases", help="comma-separated cases, e.g. 'udp 128,tcp 1408,tcp-r 65536,"
                    "tcp-p2 131072,tcp-zc 131072,tcp 0' (size 0 = each tool's default)")
    a = ap.parse_args()
    globals()["UDP_RATE"] = a.udp_rate
    globals()["PACED_ARGS"] = a.paced_args.split()
    if a.baseline:
        globals()["BASELINE"] = a.baseline
        TOOLS["dualperf_baseline"] = case_dualperf_baseline
        TOOLS["dualperf_baseline_perdgram"] = case_dualperf_baseline_perdgram
    if a.cases:
        # Any "kind size" pair: the default cases, or bulk TCP variants (TCP_BULK) at any
        # write size, 0 = each tool's default.
        CASES[:] = [(k, int(n)) for k, n in (c.split() for c in a.cases.split(","))]
    if a.tools:
        keep = a.tools.split(",")
        for t in list(TOOLS):
            if t not in keep:
                del TOOLS[t]
    srv_cpu, cli_cpu = {"split": (1, 0), "same": (0, 0), "none": (None, None)}[a.pin]
    def start(cmd, **kw):
        return subprocess.Popen(pin(srv_cpu, cmd), stdout=subprocess.DEVNULL, **kw)

    # Each tool's server, per family (taskset execs the server: the pid is the server's).
    srv = {
        "dualperf": start([DUALPERF, "server", "-p", str(PORT_DP)]),
        "iperf3": start(["iperf3", "-s", "-p", str(PORT_IPERF3)]),
        "nuttcp4": start(["nuttcp", "-S", "--nofork", "-P", str(PORT_NUTTCP)]),
        "nuttcp6": start(["nuttcp", "-S", "--nofork", "-6", "-P", str(PORT_NUTTCP6)]),
        "qperf": start(["qperf", "-lp", str(PORT_QPERF)], stderr=subprocess.DEVNULL),
        "sockperf_udp": start(["sockperf", "server", "-i", "127.0.0.1", "-p", str(PORT_SP_UDP)]),
        "sockperf_tcp": start(["sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p", str(PORT_SP_TCP)]),
    }
    if BASELINE:
        srv["dualperf_baseline"] = start([BASELINE, "server", "-p", str(PORT_BASELINE)])
    servers = list(srv.values())

    def server_of(tool, case, fam):
        if tool.startswith("dualperf_baseline"):
            return srv["dualperf_baseline"]
        if tool.startswith("dualperf"):
            return srv["dualperf"]
        if tool == "nuttcp":
            return srv[f"nuttcp{fam}"]
        if tool == "sockperf":
            return srv["sockperf_tcp" if case[0] == "tcp-rr" else "sockperf_udp"]
        if tool == "qperf":
            # qperf's server forks a child per test and reaps it later: its CPU reaches
            # the parent's counters after the case ends, so it cannot be attributed.
            return None
        return srv.get(tool)
    time.sleep(1)
    # A server that could not start (its port still held by an earlier one, say) would
    # leave the clients measuring whatever answers there, and its CPU as 0: stop instead.
    dead = [name for name, p in srv.items() if p.poll() is not None]
    if dead:
        for p in servers:
            p.kill()
        sys.exit(f"compare.py: server(s) {', '.join(dead)} exited at start (port in use?)")
    rows = []
    try:
        fams = [int(f) for f in a.families.split(",")]
        tools = list(TOOLS)
        for rep in range(a.reps):
            order = tools[rep % len(tools):] + tools[: rep % len(tools)]
            for case in CASES:
                for fam in fams:
                    for tool in order:
                        server = server_of(tool, case, fam)
                        try:
                            srv_before = proc_cpu_s(server.pid) if server else None
                            res = TOOLS[tool](case, fam, a.duration, cli_cpu)
                            srv_cpu_s = proc_cpu_s(server.pid) - srv_before if server else None
                        except Exception as e:  # a failed run is recorded, not fatal
                            print(f"rep {rep} {tool} {case} v{fam}: {e}", file=sys.stderr)
                            continue
                        if res is None:
                            continue
                        res.update(service_demand(case, a.duration, res, LAST_CLIENT_CPU_S, srv_cpu_s))
                        for k, v in res.items():
                            rows.append((rep, f"{case[0]} {case[1]}", fam, tool, k, v))
                        print(f"rep {rep} {case} v{fam} {tool}: {res}", file=sys.stderr)
    finally:
        for s in servers:
            s.terminate()
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rep", "case", "family", "tool", "metric", "value"])
        w.writerows(rows)
    groups = {}
    for rep, case, fam, tool, k, v in rows:
        groups.setdefault((case, fam, k), {}).setdefault(tool, []).append(v)
    extra = " new / baseline (batched / per-datagram) |" if BASELINE else ""
    print(f"| case | fam | metric | " + " | ".join(TOOLS) + " | dualperf / best peer |" + extra)
    print("|---|---|---|" + "---|" * len(TOOLS) + "---|" + ("---|" if BASELINE else ""))
    for (case, fam, k), per_tool in groups.items():
        cells, med = [], {}
        for t in TOOLS:
            vs = per_tool.get(t)
            if vs:
                med[t] = statistics.median(vs)
                cells.append(f"{med[t]:.2f} ({min(vs):.2f}–{max(vs):.2f}) n={len(vs)}")
            else:
                cells.append("–")
        peers = [v for t, v in med.items() if not t.startswith("dualperf")]
        ratio = "–"
        lower_is_better = k in ("rtt_us", "loss_pct") or k.startswith("sd_")
        best = (min(peers) if lower_is_better else max(peers)) if peers else None
        if "dualperf" in med and best:
            ratio = f"{med['dualperf'] / best:.2f}"
        for tool, name in (("dualperf_paced", "paced"), ("dualperf_perdgram", "per-datagram")):
            if tool in med and best:
                part = f"{name} {med[tool] / best:.2f}"
                ratio = f"{ratio} ({part})" if ratio != "–" else part
        tail = ""
        if BASELINE:
            # Each dualperf datapath over the same datapath of the baseline binary.
            parts = []
            for new, old in (("dualperf", "dualperf_baseline"),
                             ("dualperf_perdgram", "dualperf_baseline_perdgram")):
                if med.get(old) and new in med:
                    parts.append(f"{med[new] / med[old]:.2f}")
            tail = f" {' / '.join(parts) or '–'} |"
        print(f"| {case} | v{fam} | {k} | " + " | ".join(cells) + f" | {ratio} |" + tail)


if __name__ == "__main__":
    main()
