#!/usr/bin/env python3
"""Recompute a dualperf report's IPv4-vs-IPv6 and system-vs-system tables from the
results database with SciPy, independently of dualperf's own statistics, and exit
non-zero on any mismatch.

    benches/recompute_report.py RESULTS.db REPORT_DIR

REPORT_DIR is what `dualperf report --out REPORT_DIR` wrote (it reads the CSV tables:
their numeric cells are full precision). For every row of every forward
`<view>-ipv4-vs-ipv6.csv` and `<view>-systems.csv` of the throughput, RTT, jitter, loss
and host-CPU views it takes the runs of that cell from the database (`run_results`:
successful, not warm-up; loss without receiver-limited runs) and checks the difference
of means, its percentage over the stated base, Welch's p (scipy.stats.ttest_ind,
equal_var=False), Mann-Whitney's p (scipy.stats.mannwhitneyu: exact without ties; with
ties and 2·m²·N² <= 2·10⁷ (m the smaller sample, N both) exact given the ties, by
scipy.stats.permutation_test of the rank sum where C(N, m) is small enough to enumerate, else by counting
doubled midrank sums here; beyond, the normal approximation with tie and continuity
correction, as dualperf does), the
Holm-adjusted p across the sizes of each comparison, Hedges' g, and the Hodges-Lehmann
shift with its distribution-free interval (exact null distribution of U without ties,
else the normal approximation, as R's wilcox.test(conf.int = TRUE)). A row marked "not
compared" (its sides are not like with like) must show no test. Then the Summary tables
(summary.csv, summary-systems.csv): every magnitude they quote — the primary test's
effect (difference of means with its Welch CI, or the Hodges-Lehmann shift with its
interval) as % of the stated base, the range over the significant sizes and the lowest
and highest CI bound — recomputed from the runs. Prints how many numbers it checked;
exit 1 on a mismatch, 2 on a usage error.
"""

import csv
import math
import re
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import special, stats

# view id -> (test kinds, first with data wins; metric)
VIEWS = {
    "tcp-throughput": (["tcp-stream"], "throughput_bps"),
    "udp-throughput": (["udp-stream"], "throughput_bps"),
    "tcp-rtt": (["tcp-rr", "tcp-stream"], "rtt_mean_ns"),
    "udp-rtt": (["udp-rr", "udp-stream"], "rtt_mean_ns"),
    "udp-jitter": (["udp-stream", "udp-rr"], "jitter_rfc3550_ns"),
    "udp-loss": (["udp-stream", "udp-rr"], "loss_pct"),
    "tcp-host-cpu-busy": (["tcp-stream", "tcp-rr"], "cpu_local_pct"),
    "udp-host-cpu-busy": (["udp-stream", "udp-rr"], "cpu_local_pct"),
}
SCALE = {"Mbit/s": 1e-6, "µs": 1e-3, "ms": 1e-6, "%": 1.0}
FAMILY = {"IPv4": "4", "IPv6": "6"}


def runs_by_cell(db):
    """(label, family, test, size, metric) -> values of the counted runs."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT run_id, campaign_label, family, test, payload_bytes, metric, value "
        "FROM run_results WHERE warmup = 0 AND direction = 'forward'"
    ).fetchall()
    limited = {
        r[0]
        for r in con.execute(
            "SELECT run_id FROM run_results WHERE metric = 'receiver_limited' AND value > 0"
        )
    }
    cells = defaultdict(list)
    for run_id, label, family, test, size, metric, value in rows:
        if metric == "loss_pct" and run_id in limited:
            continue
        cells[(label, family, test, size, metric)].append(value)
    return cells


def hedges_g(a, b):
    na, nb = len(a), len(b)
    sp = math.sqrt(((na - 1) * np.var(a, ddof=1) + (nb - 1) * np.var(b, ddof=1)) / (na + nb - 2))
    if sp == 0:
        return float("nan")
    nu = na + nb - 2
    j = math.exp(special.gammaln(nu / 2) - special.gammaln((nu - 1) / 2)) / math.sqrt(nu / 2)
    return (np.mean(a) - np.mean(b)) / sp * j


def tied_exact_p(a, b):
    """2·min(P(S <= s), P(S >= s)) over every choice of the smaller sample's places,
    S its doubled midrank sum (integers), counted subset by subset size."""
    ranks = (stats.rankdata(list(a) + list(b)) * 2).astype(int)
    m = min(len(a), len(b))
    observed = int(ranks[: len(a)].sum() if len(a) <= len(b) else ranks[len(a) :].sum())
    width = int(sum(sorted(ranks)[-m:])) + 1
    ways = np.zeros((m + 1, width))
    ways[0, 0] = 1.0
    for r in ranks:
        for k in range(m, 0, -1):
            ways[k, r:] += ways[k - 1, : width - r]
    row = ways[m]
    lower, upper = row[: observed + 1].sum(), row[observed:].sum()
    return min(1.0, 2 * min(lower, upper) / row.sum())


def mann_whitney_p(a, b):
    ties = len(set(a) | set(b)) < len(a) + len(b)
    m, n = min(len(a), len(b)), len(a) + len(b)
    if ties and 2 * m * m * n * n <= 20_000_000:
        if math.comb(n, m) <= 100_000:
            # SciPy >= 1.7 (mannwhitneyu's PermutationMethod came later).
            def rank_sum(x, y, axis=-1):
                pooled = np.concatenate([x, y], axis=axis)
                return stats.rankdata(pooled, axis=axis)[..., : x.shape[axis]].sum(axis=axis)

            return stats.permutation_test(
                (np.asarray(a), np.asarray(b)),
                rank_sum,
                permutation_type="independent",
                vectorized=True,
                n_resamples=np.inf,
                alternative="two-sided",
            ).pvalue
        return tied_exact_p(a, b)
    method = "asymptotic" if ties else "exact"
    return stats.mannwhitneyu(a, b, alternative="two-sided", method=method).pvalue


def holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


def u_null_counts(m, n):
    """Counts of each U = 0..m·n under H0 without ties: the coefficients of the Gaussian
    binomial [m + n choose m](q) = prod_{i=1..m} (1 − q^(n+i)) / (1 − q^i)."""
    poly = [1]
    for i in range(1, m + 1):
        up = poly + [0] * (n + i)
        for k in range(len(up) - 1, n + i - 1, -1):
            up[k] -= up[k - n - i]
        # Exact division by (1 − q^i).
        out = [0] * len(up)
        for k in range(len(up)):
            out[k] = up[k] + (out[k - i] if k >= i else 0)
        poly = out[: m * n + 1] if len(out) > m * n + 1 else out
    return poly[: m * n + 1]


def hodges_lehmann(a, b, level):
    """The shift (median of the pairwise differences) and its distribution-free CI."""
    m, n = len(a), len(b)
    mn = m * n
    d = sorted(x - y for x in a for y in b)
    shift = float(np.median(d))
    alpha = 1 - level
    ties = len(set(a) | set(b)) < m + n
    if not ties and min(m, n) * m * n <= 20_000_000:
        counts = u_null_counts(m, n)
        total = math.comb(m + n, m)
        cum, k = 0, mn // 2
        for u, c in enumerate(counts):
            cum += c
            if cum / total >= alpha / 2:
                k = u
                break
    else:
        z = stats.norm.ppf(1 - alpha / 2)
        k = max(0, math.floor(mn / 2 - z * math.sqrt(mn * (m + n + 1) / 12)))
    k = min(max(k, 1), (mn + 1) // 2)
    return shift, (d[k - 1], d[mn - k])


def welch_ci(a, b, level):
    """The Welch confidence interval of mean(a) − mean(b) (Student t quantile)."""
    diff = np.mean(a) - np.mean(b)
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    h = stats.t.ppf(1 - (1 - level) / 2, df) * se
    return diff - h, diff + h


def number(text):
    """A numeric cell (full precision), or None for text and empty cells."""
    try:
        return float(text)
    except ValueError:
        return None


def printed(text):
    """A rounded number in text ("'-0.07913 [...]" → -0.07913, 5 decimals)."""
    m = re.match(r"'?(-?\d+(?:\.(\d+))?)", text.strip())
    if not m:
        return None, None
    return float(m.group(1)), len(m.group(2) or "")


class Checker:
    def __init__(self):
        self.checked = 0
        self.mismatches = []
        self.hl_intervals = 0

    def close(self, what, got, want, rel=1e-6, abs_=1e-12):
        self.checked += 1
        # No number where SciPy has none (a zero base, no spread): an empty cell.
        if got is None and want is not None and math.isnan(want):
            return
        if got is None or want is None:
            self.mismatches.append(f"{what}: missing ({got} vs {want})")
        elif math.isnan(want) and (got is None or math.isnan(got)):
            pass
        elif not math.isclose(got, want, rel_tol=rel, abs_tol=abs_):
            self.mismatches.append(f"{what}: report {got!r}, SciPy {want!r}")


def bracket(text):
    """The "[lo, hi]" of a printed cell, each with its decimals."""
    m = re.search(r"\[(-?\d+(?:\.(\d+))?), (-?\d+(?:\.(\d+))?)\]", text)
    if not m:
        return None
    return (float(m.group(1)), len(m.group(2) or "")), (float(m.group(3)), len(m.group(4) or ""))


def check_table(path, cells, chk, base, effects):
    view = path.name.rsplit("-ipv4-vs-ipv6.csv", 1)[0].rsplit("-systems.csv", 1)[0]
    if view not in VIEWS:
        return
    kinds, metric = VIEWS[view]
    with open(path, newline="", encoding="utf-8") as f:
        rd = csv.reader(f)
        header = next(rd)
        rows = [dict(zip(header, r)) for r in rd]
    unit = next(re.fullmatch(r"A − B \((.*)\)", h).group(1) for h in header if re.fullmatch(r"A − B \((.*)\)", h))
    level = next(float(m.group(1)) / 100 for h in header if (m := re.fullmatch(r"(\d+)% CI of A − B", h)))
    scale = SCALE[unit]
    systems_table = path.name.endswith("-systems.csv")
    groups = defaultdict(list)
    for r in rows:
        if systems_table:
            a = (r["A"], FAMILY[r["IP version"]])
            b = (r["B"], FAMILY[r["IP version"]])
        else:
            a = (r["System"], FAMILY[r["A"]])
            b = (r["System"], FAMILY[r["B"]])
        size = int(r["Packet size (bytes)"])

        def values(who):
            for k in kinds:
                v = cells.get((who[0], who[1], k, size, metric))
                if v:
                    return [x * scale for x in v]
            return []

        va, vb = values(a), values(b)
        groups[(a, b)].append((r, va, vb))
    for (a, b), pts in groups.items():
        ps = []
        for r, va, vb in pts:
            where = f"{path.name} {a}–{b} {r['Packet size (bytes)']}"
            diff = np.mean(va) - np.mean(vb)
            chk.close(f"{where} A − B", number(r[f"A − B ({unit})"]), diff, rel=1e-9)
            over = np.mean(va) if base == "first" else np.mean(vb)
            pct_col = [h for h in r if h.startswith("A − B, as % of")][0]
            chk.close(f"{where} {pct_col}", number(r[pct_col]), diff / abs(over) * 100, rel=1e-9)
            if r["Significant"].startswith("not compared"):
                # Not like with like: no test may be shown.
                chk.checked += 1
                if any(number(r[h]) is not None for h in ("Welch p", "Holm p", "Hedges' g")):
                    chk.mismatches.append(f"{where}: a test shown on a row not compared")
                continue
            rank = "Mann-Whitney p" in r
            if rank:
                effect, ci = hodges_lehmann(va, vb, level)
            else:
                effect, ci = diff, welch_ci(va, vb, level)
            effects[(view, a, b)].append(
                {
                    "size": int(r["Packet size (bytes)"]),
                    "pct": effect / abs(over) * 100,
                    "ci": (ci[0] / abs(over) * 100, ci[1] / abs(over) * 100),
                    "significant": r["Significant"] == "yes",
                    "effect": effect,
                }
            )
            welch = stats.ttest_ind(va, vb, equal_var=False).pvalue
            if np.std(va) == 0 and np.std(vb) == 0:
                welch = 1.0 if diff == 0 else 0.0  # dualperf's stated convention
            chk.close(f"{where} Welch p", number(r["Welch p"]), welch, rel=1e-6, abs_=1e-15)
            primary = welch
            if "Mann-Whitney p" in r:
                mw = mann_whitney_p(va, vb)
                chk.close(f"{where} Mann-Whitney p", number(r["Mann-Whitney p"]), mw, rel=1e-6)
                primary = mw
                shift = float(np.median([x - y for x in va for y in vb]))
                cell = r[f"Hodges-Lehmann shift ({unit}) [CI]"]
                got, decimals = printed(cell)
                chk.close(f"{where} Hodges-Lehmann shift", got, shift, rel=0, abs_=0.51 * 10**-decimals)
                _, (lo, hi) = hodges_lehmann(va, vb, level)
                bounds = bracket(cell)
                if bounds is None:
                    chk.close(f"{where} Hodges-Lehmann interval", None, lo)
                else:
                    for (g, dec), want, side in zip(bounds, (lo, hi), ("low", "high")):
                        chk.hl_intervals += 1
                        chk.close(f"{where} Hodges-Lehmann interval {side}", g, want, rel=0, abs_=0.51 * 10**-dec)
            chk.close(f"{where} Hedges' g", number(r["Hedges' g"]), hedges_g(va, vb), rel=1e-6)
            ps.append((r, primary))
        for (r, _), adj in zip(ps, holm([p for _, p in ps])):
            where = f"{path.name} {a}–{b} {r['Packet size (bytes)']}"
            chk.close(f"{where} Holm p", number(r["Holm p"]), adj, rel=1e-6, abs_=1e-15)


def pct_numbers(text):
    """Every printed percentage number in a magnitude ("1.24 to 1.27 % [1.01, 1.50]"),
    each with its decimals: (range values, CI bounds or None)."""
    num = r"(-?\d+(?:\.(\d+))?)"
    m = re.search(num + r"(?: to " + num + r")? %(?: \[" + num + r", " + num + r"\])?", text)
    if not m:
        return None
    g = m.groups()
    vals = [(float(g[0]), len(g[1] or ""))]
    if g[2] is not None:
        vals.append((float(g[2]), len(g[3] or "")))
    ci = None
    if g[4] is not None:
        ci = ((float(g[4]), len(g[5] or "")), (float(g[6]), len(g[7] or "")))
    return vals, ci


def check_verdict(where, text, pts, a_name, b_name, chk):
    """One summary cell against the recomputed effects of its comparison's sizes."""
    if text.startswith(("not compared", "too few", "equal", "not measured")) or not pts:
        return
    if text.startswith("no significant difference"):
        if any(p["significant"] for p in pts):
            chk.mismatches.append(f"{where}: 'no significant difference' beside a significant size")
        got = pct_numbers(text)
        if got is None:
            return
        vals = [p["pct"] for p in pts]
        for (g, dec), want in zip(got[0], (min(vals), max(vals)) if len(got[0]) == 2 else (vals[0],)):
            chk.close(f"{where} range", g, want, rel=0, abs_=0.51 * 10**-dec)
        return
    for part in text.split("; "):
        m = re.match(r"(.*) (higher|lower) by (.*) at (\d+) of (\d+) sizes", part)
        if not m:
            chk.mismatches.append(f"{where}: cannot read {part!r}")
            continue
        name, word, mag, k = m.group(1), m.group(2), m.group(3), int(m.group(4))
        a_side = name == a_name
        # The named side's lead: A − B, or B − A when B is named.
        sign = 1 if a_side else -1
        higher = word == "higher"
        chosen = [
            p for p in pts if p["significant"] and (sign * p["effect"] > 0) == higher
        ]
        chk.close(f"{where} {name} sizes", float(k), float(len(chosen)), rel=0, abs_=0)
        if not chosen:
            continue
        lead = [(sign * p["pct"] if higher else -sign * p["pct"]) for p in chosen]
        cis = []
        for p in chosen:
            lo, hi = p["ci"]
            f = sign if higher else -sign
            lo, hi = (f * lo, f * hi)
            cis.append((min(lo, hi), max(lo, hi)))
        got = pct_numbers(mag)
        if got is None:
            chk.mismatches.append(f"{where}: no magnitude in {part!r}")
            continue
        vals, ci = got
        want = (min(lead), max(lead)) if len(vals) == 2 else (lead[0],)
        if len(vals) == 1 and len(lead) > 1:
            want = (min(lead),)
        for (g, dec), w in zip(vals, want):
            chk.close(f"{where} {name} magnitude", g, w, rel=0, abs_=0.51 * 10**-dec)
        if ci is not None:
            for (g, dec), w in zip(ci, (min(c[0] for c in cis), max(c[1] for c in cis))):
                chk.close(f"{where} {name} CI bound", g, w, rel=0, abs_=0.51 * 10**-dec)


def check_summaries(out, effects, chk):
    """summary.csv and summary-systems.csv against the recomputed effects."""
    def slug(title):
        return re.sub(r" \(.*\)$", "", title).lower().replace(" ", "-")

    def rows(name):
        path = out / "tables" / name
        if not path.exists():
            return []
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    for r in rows("summary.csv"):
        view = slug(r["Metric"])
        for col, text in r.items():
            m = re.fullmatch(r"(.*): IPv4 vs IPv6", col)
            if not m:
                continue
            system = m.group(1)
            pts = effects.get((view, (system, "4"), (system, "6")), [])
            check_verdict(f"summary {view} {system}", text, pts, "IPv4", "IPv6", chk)
    for r in rows("summary-systems.csv"):
        view = slug(r["Metric"])
        a, b = r["Systems"].split(" vs ", 1)
        for fam in ("IPv4", "IPv6"):
            pts = effects.get((view, (a, FAMILY[fam]), (b, FAMILY[fam])), [])
            check_verdict(f"summary-systems {view} {a}–{b} {fam}", r[fam], pts, a, b, chk)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: recompute_report.py RESULTS.db REPORT_DIR", file=sys.stderr)
        return 2
    db, out = sys.argv[1], Path(sys.argv[2])
    tables = sorted((out / "tables").glob("*-ipv4-vs-ipv6.csv")) + sorted(
        (out / "tables").glob("*-systems.csv")
    )
    tables = [t for t in tables if "-reverse" not in t.name and "-bidir" not in t.name]
    if not tables:
        print(f"no comparison tables in {out}/tables", file=sys.stderr)
        return 2
    # The base every percentage of the report uses, as its header states it.
    with open(tables[0], newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    base = "first" if "A − B, as % of A" in header else "second"
    cells = runs_by_cell(db)
    chk = Checker()
    effects = defaultdict(list)
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in tables:
            check_table(t, cells, chk, base, effects)
        before = chk.checked
        check_summaries(out, effects, chk)
        in_summaries = chk.checked - before
    for m in chk.mismatches:
        print("MISMATCH", m)
    import scipy

    print(f"{chk.checked} numbers checked against SciPy {scipy.__version__}, {len(chk.mismatches)} mismatches")
    print(f"{in_summaries} of them in the Summary tables, {chk.hl_intervals} Hodges-Lehmann interval bounds")
    return 1 if chk.mismatches or chk.checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
