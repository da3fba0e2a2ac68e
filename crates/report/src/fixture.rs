//! A fixed synthetic dataset for tests and demonstrations: two systems, IPv4 and IPv6,
//! all four tests at three packet sizes, five counted runs per cell plus a warm-up and a
//! failed run. Values follow simple formulas with deterministic noise, so every table,
//! figure and sentence made from it is reproducible. [`systems`] makes the same for
//! more systems, [`with_series`] adds interval samples to the runs a report draws.

use crate::dataset::{CampaignData, Dataset, IntervalCounts, RunOutcome, RunRow, RunSeries};
use std::collections::BTreeMap;
use wire::metrics;
use wire::spec::{Direction, Family, TestKind};

/// Deterministic noise in [−1, 1] from a counter (SplitMix64 finaliser).
fn noise(seed: u64) -> f64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Packet sizes of the fixture.
pub const SIZES: [u32; 3] = [128, 640, 1408];

/// Metrics of one run of the fixture.
fn run_metrics(
    system: usize,
    family: Family,
    kind: TestKind,
    size: u32,
    seed: u64,
) -> BTreeMap<String, f64> {
    let v6 = family == Family::V6;
    let hdr = if v6 { 20.0 } else { 0.0 };
    let sys_gain = if system == 0 {
        1.0
    } else {
        0.95 - 0.01 * system as f64
    };
    let mut m = BTreeMap::new();
    let mut put = |name: &str, v: f64| {
        m.insert(name.to_string(), v);
    };
    let n = |k: u64| noise(seed * 16 + k);
    match kind {
        TestKind::TcpStream => {
            let base = 941.0 * 1448.0 / (1448.0 + 90.0 + hdr) * sys_gain;
            put(metrics::THROUGHPUT_BPS, (base + 2.0 * n(1)) * 1e6);
            put(
                metrics::CPU_LOCAL_PCT,
                30.0 + size as f64 / 200.0 + if v6 { 1.0 } else { 0.0 } + 1.5 * n(2),
            );
        }
        TestKind::QuicStream => {
            let base = 900.0 * sys_gain;
            put(metrics::THROUGHPUT_BPS, (base + 2.0 * n(1)) * 1e6);
            put(metrics::CPU_LOCAL_PCT, 60.0 + 2.0 * n(2));
        }
        TestKind::UdpStream => {
            let base = 960.0 * size as f64 / (size as f64 + 66.0 + hdr) * sys_gain;
            // At 640 bytes the two IP versions are made indistinguishable.
            let base = if size == 640 {
                960.0 * 640.0 / 716.0 * sys_gain
            } else {
                base
            };
            put(metrics::THROUGHPUT_BPS, (base + 3.0 * n(1)) * 1e6);
            put(
                metrics::JITTER_RFC3550_NS,
                20_000.0 + 5_000.0 * n(3) + if v6 { 500.0 } else { 0.0 },
            );
            put(metrics::LOSS_PCT, (0.2 + 0.1 * n(4)).max(0.0));
            put(metrics::CPU_LOCAL_PCT, 45.0 + 2.0 * n(2));
        }
        TestKind::TcpRr | TestKind::UdpRr | TestKind::QuicRr => {
            let base_us = 120.0 + size as f64 / 50.0 + 15.0 * system as f64;
            let v6_us = if v6 { 4.0 } else { 0.0 };
            put(metrics::RTT_MEAN_NS, (base_us + v6_us + 3.0 * n(5)) * 1e3);
            put(metrics::TRANSACTIONS_PER_S, 1e6 / (base_us + v6_us));
        }
        TestKind::TcpCrr => {
            // A handshake more than tcp-rr's transaction; IPv6's connect 3 µs slower.
            let connect_us = 25.0 + 5.0 * system as f64 + if v6 { 3.0 } else { 0.0 } + n(10);
            let txn_us = connect_us + 40.0 + size as f64 / 50.0 + 2.0 * n(11);
            put(metrics::CONNECT_TIME_MEAN_NS, connect_us * 1e3);
            put(metrics::CONNECT_TIME_P50_NS, connect_us * 0.95e3);
            put(metrics::CONNECT_TIME_P90_NS, connect_us * 1.3e3);
            put(metrics::CONNECT_TIME_P99_NS, connect_us * 2.0e3);
            put(metrics::TRANSACTION_TIME_MEAN_NS, txn_us * 1e3);
            put(metrics::CONNECTIONS_PER_S, 1e6 / txn_us);
        }
        TestKind::Rrul => {
            // Idle ~100 µs; the load adds a queue of ~2 ms (IPv6 0.3 ms more), growing
            // with the load's write size; goodput split between the directions.
            let idle_us = 100.0 + 10.0 * system as f64 + 2.0 * n(6);
            let added_us = 2_000.0 + size as f64 / 2.0 + if v6 { 300.0 } else { 0.0 } + 60.0 * n(7);
            let loaded_us = idle_us + added_us;
            for (udp, k) in [(true, 8), (false, 9)] {
                let idle = (idle_us + 2.0 * n(k)) * 1e3;
                let loaded = (loaded_us + 40.0 * n(k + 10)) * 1e3;
                let (i, l, a) = if udp {
                    (
                        metrics::IDLE_UDP_RTT_P50_NS,
                        metrics::LOADED_UDP_RTT_P50_NS,
                        metrics::ADDED_UDP_RTT_P50_NS,
                    )
                } else {
                    (
                        metrics::IDLE_TCP_RTT_P50_NS,
                        metrics::LOADED_TCP_RTT_P50_NS,
                        metrics::ADDED_TCP_RTT_P50_NS,
                    )
                };
                put(i, idle);
                put(l, loaded);
                put(a, loaded - idle);
                // Quantile ladders: idle within ±30 % of its median, loaded spread
                // from 40 % to 180 % of its median.
                for (pct, (fi, fl)) in metrics::RTT_LADDER_PCT.iter().zip([
                    (0.7, 0.4),
                    (0.75, 0.5),
                    (0.8, 0.6),
                    (0.85, 0.7),
                    (0.9, 0.8),
                    (0.95, 0.9),
                    (1.0, 1.0),
                    (1.04, 1.1),
                    (1.07, 1.2),
                    (1.1, 1.35),
                    (1.15, 1.45),
                    (1.22, 1.6),
                    (1.3, 1.8),
                ]) {
                    put(&metrics::rtt_ladder_name(false, udp, *pct), idle * fi);
                    put(&metrics::rtt_ladder_name(true, udp, *pct), loaded * fl);
                }
            }
            put(metrics::RPM_LOADED, 60e6 / loaded_us);
            put(metrics::RPM_IDLE, 60e6 / idle_us);
            let gbps = 4.0 * sys_gain * size as f64 / (size as f64 + 52.0 + hdr);
            put(metrics::UPLOAD_BPS, (gbps + 0.02 * n(11)) * 1e9);
            put(metrics::DOWNLOAD_BPS, (gbps + 0.02 * n(12)) * 1e9);
        }
        TestKind::Pmtu => {
            // A clean 1500-byte path: no Packet Too Big, no black hole.
            put(metrics::PATH_MTU_BYTES, 1500.0);
            put(metrics::KERNEL_PATH_MTU_BYTES, 1500.0);
            put(metrics::PTB_RECEIVED, 0.0);
            put(metrics::BLACK_HOLE, 0.0);
            put(metrics::PMTU_PROBES_SENT, 16.0 + (seed % 3) as f64);
        }
        TestKind::Frag => {
            // Fragments cross the IPv4 path; one IPv6 path in ten drops them.
            let pct = if v6 { 90.0 } else { 100.0 };
            put(metrics::DELIVERED_PCT, pct);
            put(metrics::DELIVERED_CI_LOW_PCT, pct - 5.0);
            put(metrics::DELIVERED_CI_HIGH_PCT, 100.0);
        }
        TestKind::ExtHeaders => {
            // Plain and Destination Options cross; Hop-by-Hop is dropped (IPv6 only).
            if v6 {
                put(metrics::PLAIN_DELIVERED_PCT, 100.0);
                put(metrics::DEST_OPTS_DELIVERED_PCT, 100.0);
                put(metrics::HOP_BY_HOP_DELIVERED_PCT, 0.0);
            } else {
                put(metrics::PLAIN_DELIVERED_PCT, 100.0);
            }
        }
    }
    m
}

/// The fixture dataset: two systems, "Linux" and "Windows".
pub fn dataset() -> Dataset {
    systems(&["Linux", "Windows"])
}

/// The fixture dataset with interval samples for the runs a default report draws over
/// time ([`crate::timeseries::select`]), as the CLI loads them.
pub fn dataset_with_series() -> Dataset {
    with_series(dataset())
}

/// `data` with the default selection's runs given interval samples ([`interval_samples`])
/// and, for udp-stream runs, per-window statistics ([`window_samples`]),
/// run ids counted from 1 over all campaigns.
pub fn with_series(mut data: Dataset) -> Dataset {
    let mut run_id = 0i64;
    for c in &mut data.campaigns {
        let chosen = crate::timeseries::select(c, &crate::timeseries::Selection::default(), &[]);
        c.series = chosen
            .into_iter()
            .map(|i| RunSeries {
                run_index: i,
                run_id: run_id + 1 + i as i64,
                samples: interval_samples(&c.runs[i], i as u64),
                windows: window_samples(&c.runs[i], i as u64),
                loaded: loaded_samples(&c.runs[i], i as u64),
            })
            .collect();
        run_id += c.runs.len() as i64;
    }
    data
}

/// Ten interval samples of a run as the client records them (none for rrul, whose
/// samples are [`loaded_samples`]): 1 s windows (the last one
/// 0.5 s) with the run's throughput (stream: sent by the client, with a slower first
/// second for TCP) or transaction rate (RR: one request sent and one response received
/// per transaction), with deterministic noise.
pub fn interval_samples(run: &RunRow, seed: u64) -> Vec<IntervalCounts> {
    if run.kind == TestKind::Rrul {
        return Vec::new();
    }
    let get = |m: &str| run.metrics.get(m).copied().unwrap_or(0.0);
    (0..10u64)
        .map(|i| {
            let start_ns = i as i64 * 1_000_000_000;
            let end_ns = start_ns + if i == 9 { 500_000_000 } else { 1_000_000_000 };
            let dt_s = (end_ns - start_ns) as f64 / 1e9;
            let wobble = 1.0 + 0.03 * noise(seed * 64 + i);
            let mut s = IntervalCounts {
                start_ns,
                end_ns,
                ..Default::default()
            };
            if run.kind.is_rr() {
                let tx = (get(metrics::TRANSACTIONS_PER_S) * wobble * dt_s).round();
                s.sent_packets = Some(tx);
                s.recv_packets = Some(tx);
                s.sent_bytes = Some(tx * run.payload_bytes as f64);
                s.recv_bytes = Some(tx * run.payload_bytes as f64);
            } else {
                let ramp = if i == 0 && run.kind == TestKind::TcpStream {
                    0.6
                } else {
                    1.0
                };
                let bytes = (get(metrics::THROUGHPUT_BPS) / 8.0 * wobble * ramp * dt_s).round();
                s.sent_bytes = Some(bytes);
                s.sent_packets = Some((bytes / run.payload_bytes.max(1) as f64).round());
                s.recv_bytes = Some(0.0);
                s.recv_packets = Some(0.0);
            }
            s
        })
        .collect()
}

/// Per-window statistics of a udp-stream run as `--stats-window 100ms` stores them (none
/// for other tests): ten windows at the run's throughput and loss, with a one-way delay
/// of about 20 µs, with deterministic noise.
pub fn window_samples(run: &RunRow, seed: u64) -> Vec<crate::dataset::WindowSample> {
    if run.kind != TestKind::UdpStream {
        return Vec::new();
    }
    let get = |m: &str| run.metrics.get(m).copied().unwrap_or(0.0);
    (0..10u64)
        .map(|i| {
            let wobble = 1.0 + 0.03 * noise(seed * 64 + 32 + i);
            crate::dataset::WindowSample {
                start_ns: i as i64 * 100_000_000,
                end_ns: (i as i64 + 1) * 100_000_000,
                bitrate_bps: Some(get(metrics::THROUGHPUT_BPS) * wobble),
                loss_pct: Some((get(metrics::LOSS_PCT) * wobble).clamp(0.0, 100.0)),
                jitter_ns: Some(get(metrics::JITTER_RFC3550_NS)),
                owd_mean_ns: Some(20_000.0 * wobble),
            }
        })
        .collect()
}

/// The fixture for `labels.len()` systems (the first two as in [`dataset`]).
pub fn systems(labels: &[&str]) -> Dataset {
    let mut campaigns = Vec::new();
    let mut seed = 1u64;
    for (system, label) in labels.iter().enumerate() {
        let mut runs = Vec::new();
        for kind in TestKind::WIRE {
            for size in SIZES {
                for family in [Family::V4, Family::V6] {
                    for repetition in 0..6u32 {
                        seed += 1;
                        runs.push(RunRow {
                            family,
                            kind,
                            direction: Direction::Forward,
                            payload_bytes: size,
                            repetition,
                            warmup: repetition == 0,
                            outcome: RunOutcome::Ok,
                            metrics: run_metrics(system, family, kind, size, seed).into(),
                        });
                    }
                }
            }
        }
        runs.push(RunRow {
            family: Family::V6,
            kind: TestKind::UdpStream,
            direction: Direction::Forward,
            payload_bytes: 1408,
            repetition: 6,
            warmup: false,
            outcome: RunOutcome::Failed("server did not answer within 5 s".to_string()),
            metrics: Default::default(),
        });
        // rrul runs last, with seeds of their own: the other tests' runs keep their
        // places and values whatever this adds.
        for size in SIZES {
            for family in [Family::V4, Family::V6] {
                for repetition in 0..6u32 {
                    let seed = 1_000_000 + runs.len() as u64 + 1_000 * system as u64;
                    runs.push(RunRow {
                        family,
                        kind: TestKind::Rrul,
                        direction: Direction::Forward,
                        payload_bytes: size,
                        repetition,
                        warmup: repetition == 0,
                        outcome: RunOutcome::Ok,
                        metrics: run_metrics(system, family, TestKind::Rrul, size, seed).into(),
                    });
                }
            }
        }
        let mut hosts = BTreeMap::new();
        for role in ["client", "server"] {
            let mut meta = BTreeMap::new();
            meta.insert("os".to_string(), format!("{label} test build"));
            meta.insert("mtu".to_string(), "1500".to_string());
            meta.insert(
                "hostname".to_string(),
                format!("{}-{role}", label.to_lowercase()),
            );
            hosts.insert(role.to_string(), meta);
        }
        let mut facts = BTreeMap::new();
        facts.insert(
            "command line".to_string(),
            format!("dualperf study --label {label}"),
        );
        campaigns.push(CampaignData {
            id: system as i64 + 1,
            label: label.to_string(),
            facts,
            hosts,
            runs,
            target: None,
            missed: Vec::new(),
            series: Vec::new(),
            offered_load: Default::default(),
            ..Default::default()
        });
    }
    Dataset { campaigns }
}

/// One crafted cell: system index, IP version, test, packet size, metric, run values.
pub type CraftedCell<'a> = (usize, Family, TestKind, u32, &'a str, &'a [f64]);

/// A crafted dataset for rule tests: `labels` name the systems (campaigns 1, 2, …);
/// each entry is one cell — system index, IP version, test, packet size, metric, and
/// the values of its counted runs.
pub fn crafted(labels: &[&str], cells: &[CraftedCell]) -> Dataset {
    let campaigns = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let runs = cells
                .iter()
                .filter(|c| c.0 == i)
                .flat_map(|&(_, family, kind, size, metric, values)| {
                    values.iter().enumerate().map(move |(rep, &v)| RunRow {
                        family,
                        kind,
                        direction: Direction::Forward,
                        payload_bytes: size,
                        repetition: rep as u32,
                        warmup: false,
                        outcome: RunOutcome::Ok,
                        metrics: [(metric.to_string(), v)].into(),
                    })
                })
                .collect();
            CampaignData {
                id: i as i64 + 1,
                label: label.to_string(),
                runs,
                ..Default::default()
            }
        })
        .collect();
    Dataset { campaigns }
}

/// The samples of an rrul run as a study stores them (none for other tests): 1 s of
/// idle probes, then 4 s of load in both directions with probes from 0.8 s after it
/// started to 0.8 s before it ended, in 0.2 s intervals at the run's medians, with
/// deterministic noise.
pub fn loaded_samples(run: &RunRow, seed: u64) -> Vec<crate::dataset::LoadedSample> {
    use crate::dataset::LoadedSample;
    if run.kind != TestKind::Rrul {
        return Vec::new();
    }
    let get = |m: &str| run.metrics.get(m).copied().unwrap_or(0.0);
    let ms = 1_000_000i64;
    let mut out = Vec::new();
    let probes = |t: i64, loaded: bool, k: u64| {
        let wobble = 1.0 + 0.05 * noise(seed * 64 + k);
        let (tcp, udp) = if loaded {
            (
                get(metrics::LOADED_TCP_RTT_P50_NS),
                get(metrics::LOADED_UDP_RTT_P50_NS),
            )
        } else {
            (
                get(metrics::IDLE_TCP_RTT_P50_NS),
                get(metrics::IDLE_UDP_RTT_P50_NS),
            )
        };
        LoadedSample {
            start_ns: t,
            end_ns: t + 200 * ms,
            tcp_rtt: Some((4.0 * tcp * wobble, 4.0)),
            udp_rtt: Some((4.0 * udp * wobble, 4.0)),
            loaded_phase: loaded,
            ..LoadedSample::default()
        }
    };
    for i in 0..5i64 {
        out.push(probes(i * 200 * ms, false, i as u64));
    }
    for i in 0..20i64 {
        let t = 1000 * ms + i * 200 * ms;
        let wobble = 1.0 + 0.05 * noise(seed * 64 + 16 + i as u64);
        out.push(LoadedSample {
            start_ns: t,
            end_ns: t + 200 * ms,
            upload_sent_bytes: Some(get(metrics::UPLOAD_BPS) / 8.0 * 0.2 * wobble),
            ..LoadedSample::default()
        });
        out.push(LoadedSample {
            start_ns: t,
            end_ns: t + 200 * ms,
            download_recv_bytes: Some(get(metrics::DOWNLOAD_BPS) / 8.0 * 0.2 / wobble),
            ..LoadedSample::default()
        });
    }
    for i in 0..12i64 {
        out.push(probes(1800 * ms + i * 200 * ms, true, 40 + i as u64));
    }
    out.sort_by_key(|s| s.start_ns);
    out
}
