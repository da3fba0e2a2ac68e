#!/usr/bin/env python3
"""Exact two-sided Mann-Whitney U test of one tool against each peer, per case and
family, from the CSV that compare.py writes (--csv): is a difference in medians more than
the repetitions' spread?

    python3 benches/significance.py /tmp/compare.csv dualperf_perdgram rx_kpps

With 5 repetitions a side the smallest two-sided p is 2/252 = 0.008, so a family of k
comparisons survives Holm's correction at 0.05 only with p <= 0.05 / k for the first.
"""
import csv
import itertools
import statistics
import sys
from collections import defaultdict

PEERS = ("iperf3", "nuttcp", "qperf", "sockperf")


def u_stat(x, y):
    return sum((a > b) + 0.5 * (a == b) for a in x for b in y)


def mann_whitney_p(x, y):
    """Exact two-sided p: the share of all splits of the pooled values whose U is at least
    as far from its mean as the observed one."""
    pooled = x + y
    mean = len(x) * len(y) / 2
    observed = abs(u_stat(x, y) - mean)
    hits = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(x)):
        chosen = set(idx)
        a = [pooled[i] for i in idx]
        b = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        hits += abs(u_stat(a, b) - mean) >= observed - 1e-9
    return hits / total


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, tool, metric = sys.argv[1:]
    values = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            values[(r["case"], r["family"], r["tool"], r["metric"])].append(float(r["value"]))
    print("| case | fam | peer | median | peer median | ratio | p |")
    print("|---|---|---|---|---|---|---|")
    for (case, fam, t, m), x in sorted(values.items()):
        if t != tool or m != metric:
            continue
        for peer in PEERS:
            y = values.get((case, fam, peer, metric))
            if not y or statistics.median(y) == 0:
                continue
            mx, my = statistics.median(x), statistics.median(y)
            print(f"| {case} | v{fam} | {peer} | {mx:.3f} | {my:.3f} | {mx / my:.3f} | "
                  f"{mann_whitney_p(x, y):.3f} |")


if __name__ == "__main__":
    main()
