//! The words follow the statistics: each rule of the summary, the findings and the
//! means tables, checked on crafted data (a tie, a one-sided difference, differences in
//! opposite directions, a missing cell, zero-variance cells, receiver-limited runs, a
//! plan too small to show a difference).

use dualperf_report::{build, fixture::crafted, Dataset, Report, ReportOptions};
use dualperf_report::{RunOutcome, RunRow};
use wire::metrics::{
    CPU_LOCAL_PCT, LOSS_PCT, PROC_LOCAL_PCT, RECEIVER_LIMITED, RTT_MEAN_NS, THROUGHPUT_BPS,
};
use wire::spec::{Direction, Family, TestKind::UdpStream};
use wire::spec::{Family::V4, Family::V6, TestKind::TcpStream, TestKind::UdpRr};

fn report(data: &Dataset) -> Report {
    build(data, &ReportOptions::default())
}

fn table_md(r: &Report, id: &str) -> String {
    r.tables
        .iter()
        .find(|t| t.id == id)
        .map(|t| t.to_markdown())
        .unwrap_or_default()
}

/// The summary row of a metric, as cells.
fn summary_row(r: &Report, metric: &str) -> Vec<String> {
    let t = r.tables.iter().find(|t| t.id == "summary");
    t.and_then(|t| t.rows.iter().find(|row| row[0].text() == metric))
        .map(|row| row.iter().map(|c| c.text().to_string()).collect())
        .unwrap_or_default()
}

const A5: [f64; 5] = [100e6, 101e6, 99e6, 100.5e6, 99.5e6];
const B5: [f64; 5] = [90e6, 91e6, 89e6, 90.5e6, 89.5e6];
const TIE: [f64; 5] = [50e6; 5];

#[test]
fn a_tie_is_no_difference_and_names_no_winner() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &TIE),
        ],
    );
    let r = report(&d);
    let row = summary_row(&r, "TCP throughput");
    assert_eq!(
        row,
        [
            "TCP throughput",
            "equal at all 2 sizes",
            "no significant best"
        ]
    );
    let f = &r.findings[0];
    assert!(
        f.text
            .contains("IPv4 and IPv6 TCP throughput were equal at all 2 sizes"),
        "{}",
        f.text
    );
    assert!(!f.text.contains("higher"), "{}", f.text);
    // The evidence of "equal" is every size's numbers, with zero spread and p.
    for needle in [
        "128 bytes: 50.000 vs 50.000",
        "1408 bytes:",
        "sd 0.00 and 0.00",
        "p = 1.000",
    ] {
        assert!(f.evidence.contains(needle), "{needle}: {}", f.evidence);
    }
}

#[test]
fn a_one_sided_difference_is_named_with_its_sizes_and_ties_are_not_credited() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            (0, V4, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &B5),
        ],
    );
    let r = report(&d);
    assert_eq!(
        summary_row(&r, "TCP throughput"),
        [
            "TCP throughput",
            "IPv4 higher by 11.1 % [9.83, 12.4] at 2 of 3 sizes (Holm p ≤ 0.001)",
            "S IPv4"
        ]
    );
    let t = &r.findings[0].text;
    assert!(
        t.starts_with("IPv4 TCP throughput was significantly higher than IPv6 at 2 of 3 sizes (128 and 1408 bytes); no significant difference at 640 bytes"),
        "{t}"
    );
    assert!(
        t.contains("the mean was higher for IPv4 at 2 and for IPv6 at 0 of 3 sizes and equal at 1"),
        "{t}"
    );
}

#[test]
fn one_significant_size_of_three_is_reported_but_names_no_best() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            (0, V4, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &TIE),
        ],
    );
    let r = report(&d);
    assert_eq!(
        summary_row(&r, "TCP throughput"),
        [
            "TCP throughput",
            "IPv4 higher by 11.1 % [9.83, 12.4] at 1 of 3 sizes (Holm p ≤ 0.001)",
            "no significant best"
        ]
    );
}

#[test]
fn opposite_directions_are_both_reported_and_no_winner_is_named() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            // At 1408 IPv6 is higher, and by more.
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &B5),
            (
                0,
                V6,
                TcpStream,
                1408,
                THROUGHPUT_BPS,
                &[120e6, 121e6, 119e6, 120.5e6, 119.5e6],
            ),
        ],
    );
    let r = report(&d);
    assert_eq!(
        summary_row(&r, "TCP throughput"),
        [
            "TCP throughput",
            "IPv4 higher by 11.1 % [9.83, 12.4] at 1 of 2 sizes (Holm p ≤ 0.001); \
             IPv6 higher by 25.0 % [24.0, 26.0] at 1 of 2 sizes (Holm p ≤ 0.001)",
            "no significant best"
        ]
    );
    let t = &r.findings[0].text;
    assert!(t.contains("significantly higher than"), "{t}");
    assert!(
        t.contains("and significantly lower at 1 (1408 bytes)"),
        "{t}"
    );
    // The largest difference is IPv6's (30 Mbit/s), and says so, with its base.
    assert!(
        t.contains("the largest significant difference was a difference of means of 30.000 Mbit/s"),
        "{t}"
    );
    assert!(
        t.contains("IPv4 − IPv6 = -25.0% of IPv6) at 1408 bytes, IPv6 higher"),
        "{t}"
    );
}

#[test]
fn lower_is_better_metrics_use_lower_and_zero_variance_is_handled() {
    // RTT: IPv4 constant 50 µs, IPv6 constant 60 µs (zero variance on both sides).
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &[50e3; 5]),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &[60e3; 5]),
        ],
    );
    let r = report(&d);
    let t = &r.findings[0].text;
    // Mann-Whitney with all values tied within each side: normal approximation.
    assert!(
        t.contains("IPv4 UDP RTT was significantly lower than IPv6"),
        "{t}"
    );
    assert_eq!(
        summary_row(&r, "UDP RTT"),
        [
            "UDP RTT",
            "IPv4 lower by 16.7 % [16.7, 16.7] at 1 of 1 sizes (Holm p ≤ 0.008)",
            "S IPv4"
        ]
    );
}

#[test]
fn means_use_only_the_sizes_both_sides_have_and_say_which() {
    // IPv6 is missing at 1408, where IPv4 is much higher: including it would tilt the mean.
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V4, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &A5),
        ],
    );
    let r = report(&d);
    let md = table_md(&r, "tcp-throughput-means");
    assert!(
        md.contains("| S | 50.000 | 50.000 | 0.00 | 2 of 3: 128, 640 |"),
        "{md}"
    );
    // The comparison, too, covers only the sizes both IP versions have.
    let f = &r.findings[0].text;
    assert!(f.contains("were equal at all 2 sizes"), "{f}");
    // The figure still draws IPv4's lone point at 1408.
    assert!(r.figures[0].svg.contains("data-label=\"IPv4\""));
}

#[test]
fn a_second_system_is_best_only_through_significant_comparisons() {
    let cells = |sys: usize, v4: &'static [f64], v6: &'static [f64]| {
        [
            (sys, V4, TcpStream, 128, THROUGHPUT_BPS, v4),
            (sys, V6, TcpStream, 128, THROUGHPUT_BPS, v6),
        ]
    };
    const C5: [f64; 5] = [80e6, 81e6, 79e6, 80.5e6, 79.5e6];
    let mut all = cells(0, &A5, &B5).to_vec();
    all.extend(cells(1, &B5, &C5));
    let r = report(&crafted(&["One", "Two"], &all));
    let row = summary_row(&r, "TCP throughput");
    assert_eq!(row.last().map(String::as_str), Some("One IPv4"), "{row:?}");
    // Columns: systems in campaign order, IPv4 then IPv6.
    let md = table_md(&r, "summary");
    assert!(
        md.contains("| Metric | One: IPv4 vs IPv6 | Two: IPv4 vs IPv6 | Best |"),
        "{md}"
    );
}

#[test]
fn missed_confidence_targets_are_warned_with_the_runs_needed() {
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
        ],
    );
    d.campaigns[0].target = Some(dualperf_report::ConfidenceTarget {
        level_pct: 95.0,
        width_pct: 5.0,
    });
    d.campaigns[0].missed.push(dualperf_report::MissedCell {
        family: V6,
        kind: TcpStream,
        direction: wire::spec::Direction::Forward,
        payload_bytes: 128,
        runs: 10,
        metric: THROUGHPUT_BPS.to_string(),
        width_pct: 12.5,
    });
    let r = report(&d);
    let w = r.warnings.join("\n");
    // 10 · (12.5 / 5)² = 62.5 → 63 runs.
    assert!(
        w.contains("S: 1 cell missed the confidence target (95% interval within 5% of the mean): IPv6 tcp-stream 128 B: throughput interval 12.5% of the mean after 10 runs, about 63 runs would reach it"),
        "{w}"
    );
    assert!(r.html.contains("id=\"warnings\""));
    assert!(r.findings_markdown().starts_with("### Warnings"));
}

#[test]
fn a_plan_too_small_for_the_rank_test_is_a_warning_and_in_the_method() {
    // 3 runs per side over 2 sizes: exact Mann-Whitney cannot go below 2/20 · 2 = 0.2.
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &[50e3, 51e3, 52e3]),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &[60e3, 61e3, 62e3]),
            (0, V4, UdpRr, 1408, RTT_MEAN_NS, &[50e3, 51e3, 52e3]),
            (0, V6, UdpRr, 1408, RTT_MEAN_NS, &[60e3, 61e3, 62e3]),
        ],
    );
    let r = report(&d);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("UDP RTT, IPv4 vs IPv6 on S: with 3 and 3 runs over 2 sizes, Mann-Whitney U cannot go below a corrected p of 0.2"),
        "{w}"
    );
    assert!(w.contains("About 5 runs per side would be needed"), "{w}");
    assert!(
        r.html.contains("smallest reachable corrected p = 0.2")
            && r.html.contains("cannot reach alpha"),
        "method section"
    );
    // And the summary does not name a winner although the separation is complete, nor
    // claim "no difference": 3 runs a side could not have shown one.
    assert_eq!(
        summary_row(&r, "UDP RTT"),
        ["UDP RTT", "too few runs to tell", "no significant best"]
    );
}

#[test]
fn cpu_with_both_ends_on_one_host_is_labelled_so() {
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &[30.0, 31.0, 29.0]),
            (0, V6, TcpStream, 128, CPU_LOCAL_PCT, &[30.0, 31.0, 29.0]),
        ],
    );
    assert!(!report(&d).html.contains("one host"));
    d.campaigns[0].hosts.insert(
        "client".to_string(),
        [("study.target".to_string(), "embedded".to_string())].into(),
    );
    let r = report(&d);
    assert!(
        r.html
            .contains("TCP host CPU busy (one host: client and server together)"),
        "label missing"
    );
    assert_eq!(
        summary_row(
            &r,
            "TCP host CPU busy (one host: client and server together)"
        )
        .len(),
        3
    );
}

#[test]
fn host_cpu_and_the_process_cpu_are_separate_views_with_separate_names() {
    // Issue 29: the report's CPU was the host's busy time, unnamed, while the process
    // CPU the database also stores was not reported.
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &[99.0, 99.5, 99.2]),
            (0, V6, TcpStream, 128, CPU_LOCAL_PCT, &[99.1, 99.4, 99.3]),
            (0, V4, TcpStream, 128, PROC_LOCAL_PCT, &[40.0, 41.0, 39.0]),
            (0, V6, TcpStream, 128, PROC_LOCAL_PCT, &[45.0, 46.0, 44.0]),
        ],
    );
    d.campaigns[0].hosts.insert(
        "client".to_string(),
        [("study.target".to_string(), "embedded".to_string())].into(),
    );
    let r = report(&d);
    let titles: Vec<String> = r.analysis.views.iter().map(|v| v.view.title()).collect();
    assert!(
        titles.contains(&"TCP host CPU busy (one host: client and server together)".to_string()),
        "{titles:?}"
    );
    assert!(
        titles.contains(
            &"TCP client process CPU (one process: client and built-in server together)"
                .to_string()
        ),
        "{titles:?}"
    );
    let md = table_md(&r, "tcp-client-process-cpu-means");
    assert!(md.contains("IPv4 mean (% of one core)"), "{md}");
}

/// One run on a side (e.g. the rest were receiver-limited and left out): equal means
/// are no evidence of equality, and no "did not differ" is claimed either.
#[test]
fn a_single_run_on_a_side_is_too_few_to_compare_not_equal() {
    let one = [50e6];
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &one),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &one),
        ],
    );
    let r = report(&d);
    let f = &r.findings[0].text;
    assert!(
        f.contains("too few runs to compare (n=1 IPv4 and 1 IPv6 at 128 bytes)")
            && f.contains("the means were equal at the one size compared"),
        "{f}"
    );
    assert!(!f.contains("were equal at all"), "{f}");
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &[50e6]),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &A5),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert!(
        f.contains("too few runs to compare") && !f.contains("did not differ"),
        "{f}"
    );
}

/// A tie at one size reads "at the one size compared", never "all 1 sizes".
#[test]
fn a_tie_at_one_size_is_worded_for_one_size() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &TIE),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert!(f.contains("were equal at the one size compared"), "{f}");
}

/// No size where both IP versions have runs: the summary says "not compared", never a
/// blank that reads like a missing value or "no difference".
#[test]
fn versions_without_a_common_size_are_not_compared() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &B5),
        ],
    );
    let row = summary_row(&report(&d), "TCP throughput");
    assert_eq!(row[1], "not compared: one IP version only");
}

/// No size in common: the means table shows each IP version's mean over its own sizes,
/// says which, and gives no percentage — 100 at 128 bytes against 90 at 1408 bytes is no
/// IPv4-against-IPv6 difference.
#[test]
fn means_without_a_common_size_have_no_percentage_and_list_each_sides_sizes() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &B5),
        ],
    );
    let r = report(&d);
    let md = table_md(&r, "tcp-throughput-means");
    let row = "| S | 100.00 | 90.000 | – | no packet size in common (IPv4: 1 of 2: 128; IPv6: 1 of 2: 1408) |";
    assert!(md.contains(row), "{md}");
    assert!(!md.contains("11.11"), "{md}");
    let latex = r.latex();
    assert!(
        latex.contains("no packet size in common (IPv4: 1 of 2: 128; IPv6: 1 of 2: 1408)"),
        "{latex}"
    );
    assert!(r
        .html
        .contains("no packet size in common (IPv4: 1 of 2: 128; IPv6: 1 of 2: 1408)"));
    // One IP version only: the other has no runs, and no percentage either.
    let d = crafted(&["S"], &[(0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5)]);
    let md = table_md(&report(&d), "tcp-throughput-means");
    assert!(
        md.contains(
            "| S | 100.00 | – | – | no packet size in common (IPv4: all 1; IPv6: no runs) |"
        ),
        "{md}"
    );
}

/// A UDP stream run whose receiving socket dropped datagrams: its loss is left out.
fn receiver_limited(family: Family, size: u32, loss_pct: f64) -> RunRow {
    RunRow {
        family,
        kind: UdpStream,
        direction: Direction::Forward,
        payload_bytes: size,
        repetition: 9,
        warmup: false,
        outcome: RunOutcome::Ok,
        metrics: [
            (LOSS_PCT.to_string(), loss_pct),
            (RECEIVER_LIMITED.to_string(), 1.0),
        ]
        .into(),
    }
}

/// The finding of the view whose title starts with `title`.
fn finding<'a>(r: &'a Report, starts: &str) -> &'a str {
    r.findings
        .iter()
        .map(|f| f.text.as_str())
        .find(|t| t.starts_with(starts))
        .unwrap_or_default()
}

/// Receiver-limited runs left out leave IPv6 one run at 128 bytes and none at 1408:
/// the loss finding says too few runs, with each size's n and the runs left out and
/// why — never "equal at all 2 sizes", and the emptied size is not silently dropped.
#[test]
fn receiver_limited_runs_leaving_one_or_no_run_are_too_few_to_compare() {
    let zero = [0.0; 3];
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, UdpStream, 128, LOSS_PCT, &zero),
            (0, V6, UdpStream, 128, LOSS_PCT, &[0.0]),
            (0, V4, UdpStream, 1408, LOSS_PCT, &zero),
        ],
    );
    for (size, loss) in [
        (128, 40.0),
        (128, 45.0),
        (1408, 30.0),
        (1408, 35.0),
        (1408, 50.0),
    ] {
        d.campaigns[0].runs.push(receiver_limited(V6, size, loss));
    }
    let r = report(&d);
    let f = finding(&r, "IPv4 and IPv6 UDP loss");
    assert_eq!(
        f,
        "IPv4 and IPv6 UDP loss: too few runs to compare (n=3 IPv4 and 1 IPv6 at 128 bytes; \
         n=3 IPv4 and 0 IPv6 at 1408 bytes) once 5 receiver-limited runs were left out \
         (IPv4 0, IPv6 5: the receiving socket dropped datagrams itself, so their loss \
         describes the receiving host, not the network); the means were equal at the one \
         size compared."
    );
    assert!(
        !f.contains("were equal at all") && !f.contains("did not differ"),
        "{f}"
    );
    let evidence = &r.findings[0].evidence;
    assert!(
        evidence.contains("At 1408 bytes: n = 3 IPv4 and 0 IPv6 after 0 and 3 receiver-limited runs were left out; not compared."),
        "{evidence}"
    );
}

/// Every IPv6 loss run receiver-limited: n=0, still a finding that says so (not a
/// silently missing comparison), and the summary says "not compared".
#[test]
fn a_side_with_every_run_receiver_limited_is_too_few_runs_with_n_0() {
    let mut d = crafted(
        &["S"],
        &[(0, V4, UdpStream, 128, LOSS_PCT, &[0.0, 0.1, 0.0])],
    );
    for loss in [40.0, 45.0] {
        d.campaigns[0].runs.push(receiver_limited(V6, 128, loss));
    }
    let r = report(&d);
    let f = finding(&r, "IPv4 and IPv6 UDP loss");
    assert_eq!(
        f,
        "IPv4 and IPv6 UDP loss: too few runs to compare (n=3 IPv4 and 0 IPv6 at 128 bytes) \
         once 2 receiver-limited runs were left out (IPv4 0, IPv6 2: the receiving socket \
         dropped datagrams itself, so their loss describes the receiving host, not the \
         network)."
    );
    assert_eq!(
        summary_row(&r, "UDP loss")[1],
        "not compared: no size with usable runs on both sides"
    );
}

/// A size with one run on a side next to a significant size: the significant size is
/// reported, the other is "too few runs", not "no significant difference".
#[test]
fn a_single_run_size_beside_a_significant_size_is_not_called_no_difference() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &[100e6]),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &B5),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert!(
        f.starts_with("IPv4 TCP throughput was significantly higher than IPv6 at 1 of 2 sizes (128 bytes); too few runs to compare (n=1 IPv4 and 5 IPv6 at 1408 bytes)"),
        "{f}"
    );
    assert!(!f.contains("no significant difference"), "{f}");
    // Its largest difference (10 Mbit/s at 1408) is not given a p it cannot have.
    assert!(
        f.contains("at 1408 bytes, IPv4 higher (too few runs to test)"),
        "{f}"
    );
}

/// 3 runs per side over 2 sizes: exact Mann-Whitney cannot go below 2/20 · 2 = 0.2, so
/// a complete separation is "cannot show a difference with this many runs", not "did
/// not differ significantly".
#[test]
fn a_plan_that_cannot_reach_alpha_cannot_show_a_difference() {
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &[50e3, 51e3, 52e3]),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &[60e3, 61e3, 62e3]),
            (0, V4, UdpRr, 1408, RTT_MEAN_NS, &[50e3, 51e3, 52e3]),
            (0, V6, UdpRr, 1408, RTT_MEAN_NS, &[60e3, 61e3, 62e3]),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert!(
        f.starts_with("IPv4 and IPv6 UDP RTT: cannot show a difference with this many runs (n=3 IPv4 and 3 IPv6: Mann-Whitney U cannot go below a corrected p of 0.2 over 2 sizes, alpha = 0.05); in most run pairs, IPv4 was lower at 2 and IPv6 at 0 of 2 sizes"),
        "{f}"
    );
    assert!(
        f.contains("(Mann-Whitney U p = 0.200 after Holm correction: not significant, and this many runs could not show it)"),
        "{f}"
    );
    assert!(!f.contains("did not differ"), "{f}");
    // The summary cannot say "no difference" either: these runs could not have told.
    let row = summary_row(&report(&d), "UDP RTT");
    assert_eq!(
        row[1..],
        ["too few runs to tell", "no significant best"],
        "{row:?}"
    );
}

/// Equal means with a plan that cannot reach alpha: not "equal" (the test could not
/// have said otherwise), but the tie stays a tie, credited to neither side.
#[test]
fn a_tie_the_plan_cannot_test_is_cannot_show_and_stays_a_tie() {
    let same = [50e3, 51e3, 52e3];
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &same),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &same),
            (0, V4, UdpRr, 1408, RTT_MEAN_NS, &same),
            (0, V6, UdpRr, 1408, RTT_MEAN_NS, &same),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert_eq!(
        f,
        "IPv4 and IPv6 UDP RTT: cannot show a difference with this many runs (n=3 IPv4 and 3 \
         IPv6: Mann-Whitney U cannot go below a corrected p of 0.2 over 2 sizes, alpha = \
         0.05); neither side was lower in most run pairs at all 2 sizes."
    );
}

/// Enough runs at one size, too few for the rank test at the other: "did not differ"
/// only where the test could have shown a difference.
#[test]
fn only_sizes_that_could_show_a_difference_read_did_not_differ() {
    let d = crafted(
        &["S"],
        &[
            (
                0,
                V4,
                UdpRr,
                128,
                RTT_MEAN_NS,
                &[50e3, 61e3, 52e3, 63e3, 54e3],
            ),
            (
                0,
                V6,
                UdpRr,
                128,
                RTT_MEAN_NS,
                &[60e3, 51e3, 62e3, 53e3, 64e3],
            ),
            (0, V4, UdpRr, 1408, RTT_MEAN_NS, &[50e3, 61e3, 52e3]),
            (0, V6, UdpRr, 1408, RTT_MEAN_NS, &[60e3, 51e3, 62e3]),
        ],
    );
    let f = &report(&d).findings[0].text;
    assert!(
        f.starts_with("IPv4 and IPv6 UDP RTT did not differ significantly at 128 bytes (smallest Holm-adjusted p = "),
        "{f}"
    );
    assert!(
        f.contains("; cannot show a difference with this many runs at 1408 bytes (n=3 IPv4 and 3 IPv6: Mann-Whitney U cannot go below a corrected p of 0.2 over 2 sizes, alpha = 0.05)"),
        "{f}"
    );
}

fn report_with(data: &Dataset, base: stats::PercentBase) -> Report {
    let mut o = ReportOptions::default();
    o.analysis.percent_base = base;
    build(data, &o)
}

#[test]
fn the_summary_answers_which_system_was_better_per_ip_version() {
    // Issue 29: two systems that differ significantly at every size; before, the summary
    // showed only IPv4 against IPv6 within each system.
    let faster: [f64; 5] = [110e6, 111e6, 109e6, 110.5e6, 109.5e6];
    let d = crafted(
        &["Fedora", "Windows 7"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &faster),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &faster),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &faster),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &faster),
            (1, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (1, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            (1, V4, TcpStream, 1408, THROUGHPUT_BPS, &A5),
            (1, V6, TcpStream, 1408, THROUGHPUT_BPS, &A5),
        ],
    );
    let r = report(&d);
    let md = table_md(&r, "summary-systems");
    assert!(md.contains("| Metric | Systems | IPv4 | IPv6 |"), "{md}");
    assert!(
        md.contains(
            "| TCP throughput | Fedora vs Windows 7 | Fedora higher by 10.0 % [8.85, 11.2] at 2 of 2 sizes (Holm p ≤ 0.001) | Fedora higher by 10.0 to 22.2 % [8.85, 23.5] at 2 of 2 sizes (Holm p ≤ 0.001) |"
        ),
        "{md}"
    );
    // One campaign: the summary says there is no system comparison.
    let one = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
        ],
    );
    let r = report(&one);
    assert!(table_md(&r, "summary-systems").is_empty());
    assert!(
        table_md(&r, "summary").contains("No system comparison: this report holds one campaign")
    );
}

#[test]
fn percentages_state_their_base_and_the_papers_convention_reproduces_seed_004() {
    // Seed 004, Table II: IPv4 438.68, IPv6 411.83 Mbit/s → 6.1 % over the IPv4 value.
    let v4 = [438.68e6; 3];
    let v6 = [411.83e6; 3];
    let d = crafted(
        &["Red Hat"],
        &[
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &v4),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &v6),
        ],
    );
    let r = report_with(&d, stats::PercentBase::First);
    let md = table_md(&r, "tcp-throughput-means");
    assert!(md.contains("IPv4 − IPv6, as % of IPv4"), "{md}");
    assert!(md.contains("| 6.12 |"), "{md}");
    let r = report_with(&d, stats::PercentBase::Second);
    let md = table_md(&r, "tcp-throughput-means");
    assert!(md.contains("IPv4 − IPv6, as % of IPv6"), "{md}");
    assert!(md.contains("| 6.52 |"), "{md}");
    let cmp = table_md(&r, "tcp-throughput-ipv4-vs-ipv6");
    assert!(cmp.contains("A − B, as % of B"), "{cmp}");
}

#[test]
fn findings_lead_with_the_significant_size_and_call_a_larger_one_not_significant() {
    // Issue 29: "largest difference 4.72 % at 768 B (not significant)" while the only
    // significant size was not named.
    let small_a: [f64; 5] = [101.27e6, 101.28e6, 101.26e6, 101.27e6, 101.28e6];
    let small_b: [f64; 5] = [100e6, 100.01e6, 99.99e6, 100e6, 100.01e6];
    let noisy_a: [f64; 5] = [130e6, 80e6, 120e6, 95e6, 110e6];
    let noisy_b: [f64; 5] = [100e6, 95e6, 105e6, 90e6, 110e6];
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 768, THROUGHPUT_BPS, &noisy_a),
            (0, V6, TcpStream, 768, THROUGHPUT_BPS, &noisy_b),
            (0, V4, TcpStream, 1408, THROUGHPUT_BPS, &small_a),
            (0, V6, TcpStream, 1408, THROUGHPUT_BPS, &small_b),
        ],
    );
    let r = report(&d);
    let t = &r.findings[0].text;
    assert!(
        t.contains("the largest significant difference was a difference of means of 1.270 Mbit/s"),
        "{t}"
    );
    assert!(t.contains("at 1408 bytes"), "{t}");
    assert!(
        t.contains(
            "a larger difference was not significant: a difference of means of 7.000 Mbit/s"
        ),
        "{t}"
    );
}

#[test]
fn a_rank_tested_finding_quotes_the_hodges_lehmann_shift_not_the_mean_difference() {
    // One 20 ms run drives the mean difference; Mann-Whitney judges ranks, so the
    // effect quoted is the Hodges-Lehmann shift with its CI.
    let a: [f64; 6] = [100e3, 101e3, 102e3, 103e3, 104e3, 105e3];
    let b: [f64; 6] = [110e3, 111e3, 112e3, 113e3, 114e3, 20e6];
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &a),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &b),
        ],
    );
    let r = report(&d);
    let t = &r.findings[0].text;
    assert!(
        t.contains("a Hodges-Lehmann shift of 0.01000 ms (95% CI ["),
        "{t}"
    );
    assert!(!t.contains("a difference of means of"), "{t}");
    // The 20 ms run is named as an outlier with the difference without it.
    assert!(
        t.contains("1 outlying run (beyond 3 scaled MADs of its cell's median and more than 20 % from it: IPv6 20.000 ms)"),
        "{t}"
    );
    assert!(
        t.contains("without it, IPv4 − IPv6 = -0.009500 ms (difference of means)"),
        "{t}"
    );
}

#[test]
fn an_anomalous_run_is_marked_in_the_comparison_table() {
    // Issue 29: one IPv6 run ~700x below its neighbours decided a finding silently.
    let v4: [f64; 6] = [7061e6, 7102e6, 6998e6, 7010e6, 7050e6, 7077e6];
    let v6: [f64; 6] = [7050e6, 7090e6, 7001e6, 10.1e6, 7040e6, 7066e6];
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 640, THROUGHPUT_BPS, &v4),
            (0, V6, TcpStream, 640, THROUGHPUT_BPS, &v6),
        ],
    );
    let r = report(&d);
    let md = table_md(&r, "tcp-throughput-ipv4-vs-ipv6");
    assert!(md.contains("Outlying runs (A; B)"), "{md}");
    assert!(md.contains("| –; 10.100 |"), "{md}");
    let t = &r.findings[0].text;
    assert!(
        t.contains("1 outlying run (beyond 3 scaled MADs of its cell's median and more than 20 % from it: IPv6 10.100 Mbit/s)"),
        "{t}"
    );
}

#[test]
fn the_first_lines_say_where_each_campaign_ran_and_its_pinning() {
    use std::collections::BTreeMap;
    let mut d = crafted(
        &["loop", "lab", "hosts"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (1, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (2, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
        ],
    );
    let client = |target: &str, pin: Option<&str>| {
        let mut m = BTreeMap::from([("study.target".to_string(), target.to_string())]);
        if let Some(p) = pin {
            m.insert("study.cpu_pinning".to_string(), p.to_string());
        }
        m
    };
    d.campaigns[0].hosts.insert(
        "client".into(),
        client("embedded", Some("client cpu 0, server cpu 1")),
    );
    d.campaigns[1]
        .hosts
        .insert("client".into(), client("lab", None));
    d.campaigns[1].hosts.insert(
        "lab".into(),
        BTreeMap::from([
            ("lab.topology".to_string(), "p2p".to_string()),
            ("lab.shaping".to_string(), "tbf 200 Mbit/s".to_string()),
            ("lab.mtu_bytes".to_string(), "1500".to_string()),
        ]),
    );
    d.campaigns[2]
        .hosts
        .insert("client".into(), client("192.0.2.7 5301", None));
    let r = report(&d);
    assert_eq!(r.setting.len(), 3);
    assert!(r.setting[0].contains("loop (campaign 1): on loopback (127.0.0.1 and ::1), against the dualperf server built into the same process; CPU pinning: client cpu 0, server cpu 1."), "{}", r.setting[0]);
    assert!(r.setting[1].contains("network-namespace lab on one machine (p2p topology, shaping: tbf 200 Mbit/s, MTU 1500 bytes)"), "{}", r.setting[1]);
    assert!(
        r.setting[2].contains("against the dualperf server at 192.0.2.7"),
        "{}",
        r.setting[2]
    );
    assert!(
        r.setting[2].ends_with("no CPU pinning."),
        "{}",
        r.setting[2]
    );
    assert!(r
        .text()
        .starts_with("Where the tests ran\n- loop (campaign 1)"));
    assert!(r
        .html
        .contains("<ul class=\"setting\"><li>loop (campaign 1)"));
}

#[test]
fn loss_bounded_by_an_rfc_2544_search_is_its_criterion_not_a_finding() {
    // Issue 29: "no difference in loss" under RFC 2544 is a property of the method.
    let zero = [0.0; 5];
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, UdpStream, 128, LOSS_PCT, &zero),
            (0, V6, UdpStream, 128, LOSS_PCT, &[0.0, 0.05, 0.0, 0.1, 0.0]),
            (0, V4, UdpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, UdpStream, 128, THROUGHPUT_BPS, &B5),
        ],
    );
    let fixed = report(&d);
    assert!(fixed
        .findings
        .iter()
        .any(|f| f.text.contains("UDP loss did not differ")));
    d.campaigns[0].loss_bound_pct = Some(0.1);
    let r = report(&d);
    let row = summary_row(&r, "UDP loss");
    assert_eq!(row[1], "not compared: the method's criterion", "{row:?}");
    let f = r
        .findings
        .iter()
        .find(|f| f.text.contains("UDP loss"))
        .expect("a loss sentence");
    assert!(
        f.text.starts_with("UDP loss is the RFC 2544 search's criterion, not a finding: each run's loss was kept at or below 0.1 %"),
        "{}",
        f.text
    );
    assert!(!r
        .findings
        .iter()
        .any(|f| f.text.contains("UDP loss did not differ")));
    // The throughput the search found is still compared.
    assert!(r
        .findings
        .iter()
        .any(|f| f.text.contains("UDP throughput was significantly higher")));
    // The per-size loss table shows the means, no p-value and no "Significant: no";
    // the loss section and the figure's caption carry the criterion.
    let t = table_md(&r, "udp-loss-ipv4-vs-ipv6");
    let line = t
        .lines()
        .find(|l| l.starts_with("| 128 |"))
        .unwrap_or_default();
    assert!(
        line.ends_with("| – | – | – | not compared: the method's criterion |  |"),
        "{line}"
    );
    let section = r
        .html
        .split("<section id=\"v-udp-loss\">")
        .nth(1)
        .unwrap_or_default();
    let section = section.split("</section>").next().unwrap_or_default();
    assert_eq!(
        section
            .matches("UDP loss is the RFC 2544 search&#39;s criterion")
            .count(),
        2,
        "{section}"
    );
}

#[test]
fn a_recorded_cv_criterion_is_shown_per_cell() {
    // Preset udp-jitter-10x1M records seed 004's "standard deviation of less than 10 %".
    let spread: [f64; 5] = [100e6, 130e6, 70e6, 100e6, 100e6];
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &spread),
        ],
    );
    assert!(
        table_md(&report(&d), "tcp-throughput-cv").is_empty(),
        "no criterion, no table"
    );
    d.campaigns[0].cv_target_pct = Some(10.0);
    let md = table_md(&report(&d), "tcp-throughput-cv");
    assert!(md.contains("against the study's 10 % criterion"), "{md}");
    // A5: sd 0.79 of 100 → 0.79 %; the spread cell: sd 21.2 of 100 → 21.2 %.
    assert!(
        md.contains("| 128 | 0.7906 (met) | 21.213 (not met) |"),
        "{md}"
    );
    // Said as what happened: a fixed number of runs, and how many cells would have
    // passed.
    assert!(
        md.contains("What happened: the study ran a fixed 5 runs per cell and accepted every cell after them, not by its coefficient of variation; by the criterion, 1 of 2 cells would have passed."),
        "{md}"
    );
}

/// Preset 004 (issue 41): a campaign that accepted every cell after a fixed number of
/// runs, none of which met its 10 % CV criterion, is warned about; a view without a
/// CV (loss all zero) shows no "0 of 0"; a campaign whose udp-stream runs stored no
/// jitter is told why the preset's jitter is missing.
#[test]
fn a_cv_criterion_no_cell_met_is_a_warning_and_missing_jitter_says_why() {
    let wide: [f64; 5] = [100e6, 140e6, 60e6, 120e6, 80e6];
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, UdpStream, 128, THROUGHPUT_BPS, &wide),
            (0, V6, UdpStream, 128, THROUGHPUT_BPS, &wide),
            (0, V4, UdpStream, 128, LOSS_PCT, &[0.0; 5]),
            (0, V6, UdpStream, 128, LOSS_PCT, &[0.0; 5]),
        ],
    );
    d.campaigns[0].cv_target_pct = Some(10.0);
    let r = report(&d);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("UDP throughput: no cell met the study's coefficient-of-variation criterion (under 10 %; 0 of 2 cells): the study ran a fixed 5 runs per cell"),
        "{w}"
    );
    assert!(!r.markdown().contains("0 of 0"), "{}", r.markdown());
    assert!(table_md(&r, "udp-loss-cv").is_empty());
    assert!(
        w.contains(
            "S: UDP jitter (RFC 3550) is unavailable: none of its 20 udp-stream runs stored it."
        ),
        "{w}"
    );
}

#[test]
fn a_host_busy_before_the_study_is_flagged_for_its_host_cpu_figures() {
    let mut d = crafted(
        &["quiet", "busy"],
        &[
            (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &[40.0, 41.0, 39.0]),
            (1, V4, TcpStream, 128, CPU_LOCAL_PCT, &[90.0, 91.0, 89.0]),
        ],
    );
    for (i, idle) in ["1.2", "48.5"].into_iter().enumerate() {
        d.campaigns[i].hosts.insert(
            "client".to_string(),
            [("study.idle_cpu_busy_pct".to_string(), idle.to_string())].into(),
        );
    }
    let r = report(&d);
    let flagged: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.contains("already"))
        .collect();
    assert_eq!(flagged.len(), 1, "{:?}", r.warnings);
    assert!(
        flagged[0].starts_with("busy: the client host was already 48.5 % busy"),
        "{}",
        flagged[0]
    );
}

#[test]
fn a_rank_tested_difference_takes_its_side_from_the_rank_test_not_the_means() {
    // 7 of 8 IPv6 runs beat every IPv4 run; one 400 µs IPv6 run pulls IPv6's mean above
    // IPv4's. Mann-Whitney p = 0.0104 and the Hodges-Lehmann shift IPv4 − IPv6 = +10 µs:
    // IPv6 was the lower, whatever the means say (Welch p = 0.57).
    let v4: Vec<f64> = (0..8).map(|i| (200 + i) as f64 * 1e3).collect();
    let mut v6: Vec<f64> = (0..7).map(|i| (190 + i) as f64 * 1e3).collect();
    v6.push(400e3);
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &v4),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &v6),
        ],
    );
    let r = report(&d);
    let t = &r.findings[0].text;
    let lead = "IPv6 UDP RTT was significantly lower than IPv4 at 1 of 1 sizes (128 bytes)";
    assert!(t.starts_with(lead), "{t}");
    assert!(!t.contains("IPv4 UDP RTT was significantly lower"), "{t}");
    // The direction clause is the rank test's (run pairs), and the effect quoted is the
    // Hodges-Lehmann shift with IPv4 the higher: one direction throughout.
    assert!(
        t.contains("in most run pairs, IPv4 was lower at 0 and IPv6 at 1 of 1 sizes"),
        "{t}"
    );
    assert!(t.contains("a Hodges-Lehmann shift of 10.000 µs"), "{t}");
    assert!(
        t.contains("at 128 bytes, IPv4 higher (Mann-Whitney U"),
        "{t}"
    );
    assert!(!t.contains("the mean was"), "{t}");
    // The summary credits IPv6 and names it best, in every output that carries it.
    assert_eq!(
        summary_row(&r, "UDP RTT"),
        [
            "UDP RTT",
            "IPv6 lower by 4.57 % [2.74, 5.94] at 1 of 1 sizes (Holm p ≤ 0.011)",
            "S IPv6"
        ]
    );
    assert!(r.findings_markdown().contains(lead));
    assert!(r.html.contains(lead));
    let latex = r.latex();
    assert!(
        latex.contains("UDP RTT & IPv6 lower by 4.57 \\% {[}2.74, 5.94{]} at 1 of 1 sizes"),
        "{latex}"
    );
    assert!(r
        .html
        .contains("its direction (which side's runs were higher in most pairs) names the side"));
}

#[test]
fn tied_latencies_of_three_runs_a_side_are_not_called_significant() {
    // Loaded-RTT p50s from an HDR histogram tie often. 3 against 3, completely
    // separated: the exact p given the ties is 2 / C(6, 3) = 0.1 (the normal
    // approximation said 0.047, "significantly lower"), which the plan's reach agrees
    // cannot go below.
    let d = crafted(
        &["S"],
        &[
            (0, V4, UdpRr, 128, RTT_MEAN_NS, &[50e3, 50e3, 50e3]),
            (0, V6, UdpRr, 128, RTT_MEAN_NS, &[60e3, 60e3, 60e3]),
        ],
    );
    let r = report(&d);
    let t = &r.findings[0].text;
    assert!(!t.contains("significantly lower"), "{t}");
    assert!(
        t.contains("cannot show a difference with this many runs (n=3 IPv4 and 3 IPv6: Mann-Whitney U cannot go below a corrected p of 0.1 over 1 size"),
        "{t}"
    );
    assert!(
        t.contains("(Mann-Whitney U p = 0.100 after Holm correction"),
        "{t}"
    );
    // Nor does its Hodges-Lehmann interval claim a level 3 runs a side cannot reach.
    assert!(t.contains("(90% CI, the most these runs reach ["), "{t}");
    assert!(r.findings[0]
        .evidence
        .contains("Mann-Whitney U p = 0.100 (exact)"));
    assert!(r.html.contains("with ties exact given the ties"));
}

/// The summary quotes the magnitude of the primary test's effect on the report's base:
/// Welch → the difference of means as % of the base mean, with its Welch CI; a rank test
/// → the Hodges-Lehmann shift and its interval, as % of the same base.
#[test]
fn the_summary_quotes_the_effect_of_the_test_used_on_the_stated_base() {
    // Throughput: means 100 and 90 → IPv4 higher by 11.1 % of IPv6.
    // RTT (rank test): IPv4 50, 51, …; IPv6 60, 61, … µs; the shift is −10 µs.
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &B5),
            (
                0,
                V4,
                UdpRr,
                128,
                RTT_MEAN_NS,
                &[50e3, 51e3, 52e3, 53e3, 54e3],
            ),
            (
                0,
                V6,
                UdpRr,
                128,
                RTT_MEAN_NS,
                &[60e3, 61e3, 62e3, 63e3, 70e3],
            ),
        ],
    );
    let r = report(&d);
    let tput = &summary_row(&r, "TCP throughput")[1];
    let vd = &r.analysis.views[0];
    let pt = &vd.family_cmp[0].points[0];
    let (lo, hi) = pt.welch.ci(0.95);
    let want = format!(
        "IPv4 higher by {:.1} % [{:.2}, {:.1}] at 1 of 1 sizes",
        pt.welch.diff / pt.b.mean * 100.0,
        lo / pt.b.mean * 100.0,
        hi / pt.b.mean * 100.0
    );
    assert!(tput.starts_with(&want), "{tput} / {want}");
    let rtt = &summary_row(&r, "UDP RTT")[1];
    let vd = r.analysis.views.iter().find(|v| v.view.id == "udp-rtt");
    let pt = &vd.map(|v| &v.family_cmp[0].points[0]).expect("udp-rtt");
    let hl = pt.hodges_lehmann.expect("a rank-tested view has its shift");
    assert_eq!(hl.shift, -10.0);
    // The mean difference (−10.4 µs, 16.9 %) is not what is quoted: the shift is.
    let pct = |v: f64| -v / pt.b.mean * 100.0;
    let want = format!(
        "IPv4 lower by {:.1} % [{:.1}, {:.1}] at 1 of 1 sizes",
        pct(hl.shift),
        pct(hl.ci.1),
        pct(hl.ci.0)
    );
    assert!(rtt.starts_with(&want), "{rtt} / {want}");
    // With the first side as the base, the same shift over IPv4's mean.
    let first = build(
        &d,
        &ReportOptions {
            analysis: dualperf_report::AnalysisOptions {
                percent_base: stats::PercentBase::First,
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let rtt = &summary_row(&first, "UDP RTT")[1];
    assert!(
        rtt.starts_with(&format!(
            "IPv4 lower by {:.1} %",
            -hl.shift / pt.a.mean * 100.0
        )),
        "{rtt}"
    );
}

/// report.html opens with both summaries (IP versions, then systems) and the figure of
/// the headline comparison, before the findings; Markdown shows no "&lt;" of its own and
/// no escaped backtick, the page no literal backtick.
#[test]
fn the_page_opens_with_both_summaries_and_the_headline_figure() {
    let r = build(
        &dualperf_report::fixture::dataset(),
        &ReportOptions::default(),
    );
    let at = |needle: &str| {
        r.html
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from the page"))
    };
    let (summary, systems) = (at("id=\"t-summary\""), at("id=\"t-summary-systems\""));
    let (headline, findings) = (
        at("<figure class=\"headline\">"),
        at("<section id=\"findings\">"),
    );
    assert!(summary < systems && systems < headline && headline < findings);
    assert!(r.html[headline..findings].contains("The headline comparison: TCP throughput"));
    // Drawn again in its own section: no id twice on the page.
    let mut ids: Vec<&str> = r
        .html
        .split(" id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "an id repeated on the page");
    // Both summaries wrap their cells (class "summary"): they fit a 1400 px page.
    assert!(r
        .html
        .contains("<table class=\"summary\" id=\"t-summary\">"));
    assert!(r
        .html
        .contains("<table class=\"summary\" id=\"t-summary-systems\">"));
    assert!(r
        .html
        .contains("table.summary td, table.summary th { white-space: normal;"));
    assert!(!r.html.contains('`'), "a literal backtick on the page");
    let md = r.markdown();
    assert!(!md.contains("&lt;") && !md.contains("\\`"), "{md}");
}

/// Like with like: a client process's CPU with the built-in server inside it against
/// one without, and a host CPU pinned at its 100 % ceiling, are shown per campaign and
/// marked "not compared" with the reason everywhere — summaries, per-size tables (no
/// p-values), findings, figure captions — and each qualifier names its own system only.
#[test]
fn unlike_metrics_are_not_compared_anywhere_and_qualifiers_name_their_system() {
    const LOW: [f64; 5] = [2.0, 2.1, 1.9, 2.05, 1.95];
    const HIGH: [f64; 5] = [99.0, 98.0, 100.0, 99.5, 98.5];
    const PINNED: [f64; 5] = [100.0; 5];
    let mut d = crafted(
        &["sysA", "sysB"],
        &[
            (0, V4, TcpStream, 128, PROC_LOCAL_PCT, &HIGH),
            (0, V6, TcpStream, 128, PROC_LOCAL_PCT, &HIGH),
            (1, V4, TcpStream, 128, PROC_LOCAL_PCT, &LOW),
            (1, V6, TcpStream, 128, PROC_LOCAL_PCT, &LOW),
            (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &A5.map(|v| v / 2e6)),
            (0, V6, TcpStream, 128, CPU_LOCAL_PCT, &B5.map(|v| v / 2e6)),
            (1, V4, TcpStream, 128, CPU_LOCAL_PCT, &PINNED),
            (1, V6, TcpStream, 128, CPU_LOCAL_PCT, &PINNED),
        ],
    );
    d.campaigns[0].hosts.insert(
        "client".to_string(),
        [("study.target".to_string(), "embedded".to_string())].into(),
    );
    let r = report(&d);
    let proc_title =
        "TCP client process CPU (one process for sysA: client and built-in server together)";
    let sys = table_md(&r, "summary-systems");
    let reason = "not compared: sysA's process also ran the built-in server, sysB's did not";
    assert!(
        sys.contains(&format!(
            "| {proc_title} | sysA vs sysB | {reason} | {reason} |"
        )),
        "{sys}"
    );
    assert!(!sys.contains("sysB lower by"), "{sys}");
    // Host CPU: sysB pinned at 100 % is no IPv4-vs-IPv6 "equal", nor a system verdict.
    let row = summary_row(
        &r,
        "TCP host CPU busy (one host for sysA: client and server together)",
    );
    assert!(
        row[2].starts_with("not compared: sysB (IPv4 and IPv6) at the 100 % ceiling"),
        "{row:?}"
    );
    assert!(row[1].starts_with("IPv6 lower by"), "{row:?}");
    assert!(
        sys.contains("| sysA vs sysB | not compared: sysB at the 100 % ceiling"),
        "{sys}"
    );
    // Per-size tables: no p-value, the reason instead.
    let t = table_md(&r, "tcp-client-process-cpu-systems");
    let line = t
        .lines()
        .find(|l| l.starts_with("| 128 | IPv4"))
        .unwrap_or_default();
    assert!(
        line.contains(&format!("| – | – | – | {reason} |")),
        "{line}"
    );
    // Findings: said, with the reason, and no test; sysB's own sentence carries no
    // qualifier of sysA's.
    let f: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
    assert!(
        f.iter().any(|t| t.starts_with(&format!(
            "SysA and sysB {proc_title} over IPv4: not compared, sysA's process also ran"
        ))),
        "{f:#?}"
    );
    assert!(
        !f.iter()
            .any(|t| t.contains("client process CPU") && t.contains("significantly")),
        "{f:#?}"
    );
    let on_b: Vec<&&str> = f.iter().filter(|t| t.starts_with("On sysB,")).collect();
    assert!(
        !on_b.is_empty() && on_b.iter().all(|t| !t.contains("for sysA")),
        "{on_b:#?}"
    );
    assert!(
        f.iter().any(|t| t.starts_with(
            "On sysA, IPv4 and IPv6 TCP client process CPU (one process: client and built-in server together)"
        )),
        "{f:#?}"
    );
    // The figure's caption says so.
    assert!(r.html.contains("Not compared, each shown on its own: sysA vs sysB (IPv4): sysA&#39;s process also ran the built-in server"));
}

/// The words state the rules as the code applies them: the outlier rule with both of its
/// conditions, the runs per cell as they were (no "runs vary" when every size had the
/// same count), and the search as the engine does it.
#[test]
fn the_outlier_rule_the_runs_and_the_search_are_stated_as_applied() {
    let r = build(
        &dualperf_report::fixture::dataset(),
        &ReportOptions::default(),
    );
    let note = r
        .tables
        .iter()
        .find(|t| t.id == "udp-loss-ipv4-vs-ipv6")
        .and_then(|t| t.note.clone())
        .unwrap_or_default();
    assert!(
        note.contains("beyond 3 scaled median absolute deviations (MAD × 1.4826) of their cell's median and more than 20 % of the median away from it"),
        "{note}"
    );
    let f = r.findings_markdown();
    assert!(
        f.contains("scaled MADs of their cell's median and more than 20 % from it"),
        "{f}"
    );
    assert!(!r.html.contains("runs vary"));
    assert!(
        r.html
            .contains("(Welch&#39;s t-test, 5 and 5 runs at every size, Holm over 3 sizes)"),
        "method section"
    );
    assert!(!r.html.contains("binary search over paced trials"));
    assert!(r.html.contains("(not by plain bisection)"));
}

/// `--holm-family report` corrects over every test of the report: a difference that
/// survives Holm over its own comparison's sizes (p ≈ 0.017, one size) drops when the
/// family is every test (here 5: four tied UDP sizes besides), and the notes say which
/// family was used.
#[test]
fn widening_the_holm_family_drops_a_call_the_narrow_family_keeps() {
    const NEAR: [f64; 5] = [98.5e6, 99.5e6, 97.5e6, 99e6, 98e6];
    let d = crafted(
        &["S"],
        &[
            (0, V4, TcpStream, 128, THROUGHPUT_BPS, &A5),
            (0, V6, TcpStream, 128, THROUGHPUT_BPS, &NEAR),
            (0, V4, UdpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V6, UdpStream, 128, THROUGHPUT_BPS, &TIE),
            (0, V4, UdpStream, 256, THROUGHPUT_BPS, &TIE),
            (0, V6, UdpStream, 256, THROUGHPUT_BPS, &TIE),
            (0, V4, UdpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V6, UdpStream, 640, THROUGHPUT_BPS, &TIE),
            (0, V4, UdpStream, 1408, THROUGHPUT_BPS, &TIE),
            (0, V6, UdpStream, 1408, THROUGHPUT_BPS, &TIE),
        ],
    );
    let narrow = report(&d);
    let p = narrow.analysis.views[0].family_cmp[0].points[0].p;
    assert!(p > 0.01 && p < 0.05, "{p}");
    let row = summary_row(&narrow, "TCP throughput");
    assert!(row[1].starts_with("IPv4 higher by"), "{row:?}");
    let wide = build(
        &d,
        &ReportOptions {
            analysis: dualperf_report::AnalysisOptions {
                holm_family: dualperf_report::HolmFamily::Report,
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let pt = &wide.analysis.views[0].family_cmp[0].points[0];
    assert_eq!(pt.p_holm, (5.0 * p).min(1.0));
    let row = summary_row(&wide, "TCP throughput");
    assert!(row[1].starts_with("no significant difference"), "{row:?}");
    let note = |r: &Report| {
        r.tables
            .iter()
            .find(|t| t.id == "tcp-throughput-ipv4-vs-ipv6")
            .and_then(|t| t.note.clone())
            .unwrap_or_default()
    };
    assert!(note(&narrow).contains("Holm correction across the sizes of each comparison"));
    assert!(note(&wide).contains("Holm correction across all 5 tests of the report"));
    assert!(table_md(&wide, "summary").contains("Holm across all 5 tests of the report"));
    assert!(wide
        .html
        .contains("Holm's method across all 5 tests of the report"));
}

/// Figures and captions say what is drawn: the percentile figure's p99.9 is dotted and
/// its caption says so; the loss figure of an RFC 2544 search carries the criterion in
/// the SVG itself; a LaTeX caption of an IPv4-vs-IPv6 table names the systems it covers,
/// not "(sysA vs sysB)".
#[test]
fn captions_match_the_figures_and_latex_captions_their_comparison() {
    let r = build(
        &dualperf_report::fixture::dataset(),
        &ReportOptions::default(),
    );
    let pct = r
        .figures
        .iter()
        .find(|f| f.id.ends_with("-percentiles"))
        .map(|f| f.svg.clone());
    if let Some(svg) = pct {
        assert!(svg.contains("stroke-dasharray=\"2 3\""), "p99.9 dotted");
        assert!(r.html.contains("p99 (dashed) and p99.9 (dotted)"));
        assert!(!r.html.contains("p99 / p99.9 (dashed)"));
    }
    let latex = r.latex();
    let caption = |title: &str| {
        latex
            .lines()
            .find(|l| l.starts_with("\\caption{") && l.contains(title))
            .unwrap_or_default()
            .to_string()
    };
    let v4v6 = caption("IPv4 (A) vs IPv6 (B) per size: TCP throughput");
    assert!(v4v6.ends_with("(on Linux, Windows)}"), "{v4v6}");
    let sys = caption("System vs system per size: TCP throughput");
    assert!(sys.ends_with("(Linux vs Windows)}"), "{sys}");
    // Loss under an RFC 2544 search: the figure's own note.
    let mut d = crafted(
        &["S"],
        &[
            (0, V4, UdpStream, 128, LOSS_PCT, &[0.0, 0.01, 0.0]),
            (0, V6, UdpStream, 128, LOSS_PCT, &[0.0, 0.0, 0.02]),
        ],
    );
    d.campaigns[0].loss_bound_pct = Some(0.1);
    let r = report(&d);
    let fig = r
        .figures
        .iter()
        .find(|f| f.id == "udp-loss")
        .map(|f| f.svg.clone());
    let words = fig
        .unwrap_or_default()
        .replace("</tspan><tspan", " ")
        .replace("</tspan>", "");
    assert!(words.contains("RFC 2544 search"), "{words}");
}
