#!/usr/bin/env python3
"""Accuracy against a known rate: dualperf and iperf3 on the same tbf-shaped p2p lab.

Builds one p2p lab shaped with tbf at RATE, runs a dualperf server and an iperf3 server
in its server namespace, and for each (family, transport, payload) runs both clients in
the client namespace, interleaved, REPS times. Each figure is compared with the header
overhead model as tbf counts bytes (payload + transport + IP + 14-byte Ethernet header;
TCP in full-MSS segments with 12 bytes of timestamp options). Prints a Markdown table.

    cargo build --release -p dualperf
    python3 benches/lab_accuracy.py --rate-mbit 100 --duration 5 --reps 3
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

DP = "target/release/dualperf"
LAB = "bench-acc"
ADDR = {4: "10.231.0.2", 6: "fd00:231::2"}
IP = {4: 20, 6: 40}
MSS = {4: 1448, 6: 1428}


def model_mbit(rate_mbit, fam, proto, size):
    if proto == "udp":
        return rate_mbit * size / (size + 8 + IP[fam] + 14)
    return rate_mbit * MSS[fam] / (MSS[fam] + 12 + 20 + IP[fam] + 14)


def in_ns(role, cmd, timeout=60):
    p = subprocess.run([DP, "lab", "exec", LAB, role, "--"] + cmd,
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {p.stderr.strip()[:300]}")
    return p.stdout


def dualperf(fam, proto, size, dur):
    out = in_ns("client", [DP, "run", ADDR[fam], "-f", str(fam), "-t", f"{proto}-stream",
                           "-s", str(size), "-d", str(dur), "--json"])
    m = {x["name"]: x["value"] for x in json.loads(out)["metrics"]}
    return m["throughput_bps"] / 1e6


def iperf3(fam, proto, size, dur):
    cmd = ["iperf3", "-c", ADDR[fam], "-p", "5211", "-t", str(int(dur)), "-l", str(size), "-J"]
    if proto == "udp":
        cmd += ["-u", "-b", "0"]
    j = json.loads(in_ns("client", cmd))
    end = j["end"]
    if proto == "udp":
        s = end["sum"]
        return (s["bytes"] * (1 - s["lost_percent"] / 100)) * 8 / s["seconds"] / 1e6
    return end["sum_received"]["bits_per_second"] / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate-mbit", type=float, default=100)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    subprocess.run([DP, "lab", "down", LAB], capture_output=True)
    subprocess.run([DP, "lab", "up", "--topology", "p2p", "--rate", f"{a.rate_mbit:g}mbit",
                    "--name", LAB], check=True)
    servers = []
    try:
        servers.append(subprocess.Popen([DP, "lab", "exec", LAB, "server", "--", DP, "server",
                                         "--bind", ADDR[4], "--bind", ADDR[6]], stdout=subprocess.DEVNULL))
        servers.append(subprocess.Popen([DP, "lab", "exec", LAB, "server", "--", "iperf3", "-s", "-p", "5211"],
                                        stdout=subprocess.DEVNULL))
        time.sleep(1.5)
        res = {}
        cases = [(f, p, s) for p in ("udp", "tcp") for s in (128, 1408) for f in (4, 6)]
        for rep in range(a.reps):
            for case in cases:
                tools = [("dualperf", dualperf), ("iperf3", iperf3)]
                if rep % 2:
                    tools.reverse()
                for name, fn in tools:
                    try:
                        v = fn(*case, a.duration)
                    except Exception as e:
                        print(f"{name} {case}: {e}", file=sys.stderr)
                        continue
                    res.setdefault((case, name), []).append(v)
                    print(f"rep {rep} {case} {name}: {v:.3f} Mbit/s", file=sys.stderr)
        print(f"| transport | fam | payload B | model Mbit/s | dualperf Mbit/s (err) | iperf3 Mbit/s (err) |")
        print("|---|---|---|---|---|---|")
        for case in cases:
            fam, proto, size = case
            mod = model_mbit(a.rate_mbit, fam, proto, size)
            cells = []
            for name in ("dualperf", "iperf3"):
                vs = res.get((case, name), [])
                if vs:
                    med = statistics.median(vs)
                    cells.append(f"{med:.2f} ({min(vs):.2f}–{max(vs):.2f}) {100 * (med / mod - 1):+.2f}%")
                else:
                    cells.append("–")
            print(f"| {proto.upper()} | v{fam} | {size} | {mod:.2f} | {cells[0]} | {cells[1]} |")
        for proto in ("udp", "tcp"):
            for size in (128, 1408):
                for name in ("dualperf", "iperf3"):
                    v4 = res.get(((4, proto, size), name))
                    v6 = res.get(((6, proto, size), name))
                    if v4 and v6:
                        r = statistics.median(v6) / statistics.median(v4)
                        rm = model_mbit(1, 6, proto, size) / model_mbit(1, 4, proto, size)
                        print(f"- {proto.upper()} {size} B {name}: IPv6/IPv4 measured {r:.4f}, model {rm:.4f} "
                              f"({100 * (r - rm):+.2f} points)")
    finally:
        for s in servers:
            s.terminate()
        subprocess.run([DP, "lab", "down", LAB], capture_output=True)


if __name__ == "__main__":
    main()
