//! Per-run commit latency of the results store (docs/benchmarks.md): `WRITERS` threads,
//! each with its own connection and campaign as a study would have, commit `RUNS` runs
//! of the size a real run has (24 metrics, 10 intervals × 8 sampled metrics, 12 applied
//! settings), pausing `PAUSE_MS` between runs as the measurement would. Prints the
//! latency of `record_run` (median, 95th percentile, max) over all writers.
//!
//! cargo run --release -p dualperf-store --example commit_latency -- DB [WRITERS] [RUNS] [PAUSE_MS]
//!
//! DB is an SQLite file or a postgres:// URL, as for `--db`.

use dualperf_store::{CellRecord, DbTarget, IntervalSample, NewCampaign, NewRun, RunStatus, Store};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use wire::spec::{Direction, Family, TestKind};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(db) = args.first() else {
        eprintln!("usage: commit_latency DB [WRITERS] [RUNS] [PAUSE_MS]");
        std::process::exit(2);
    };
    let num = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|s| s.parse().unwrap_or(default))
            .unwrap_or(default)
    };
    let (writers, runs, pause_ms) = (num(1, 1), num(2, 200), num(3, 0));
    let target = DbTarget::from(db.as_str());
    let t0 = Instant::now();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let target = target.clone();
            std::thread::spawn(move || writer(&target, w, runs, pause_ms))
        })
        .collect();
    let mut all: Vec<Duration> = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(mut l)) => all.append(&mut l),
            Ok(Err(e)) => {
                eprintln!("commit_latency: {e}");
                std::process::exit(1);
            }
            Err(_) => std::process::exit(1),
        }
    }
    let wall = t0.elapsed();
    all.sort();
    let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize];
    println!(
        "{target}: {writers} writers x {runs} runs, pause {pause_ms} ms: record_run median {:.2} ms, p95 {:.2} ms, max {:.2} ms; {:.0} commits/s",
        ms(at(0.5)),
        ms(at(0.95)),
        ms(at(1.0)),
        all.len() as f64 / wall.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn writer(
    target: &DbTarget,
    w: u64,
    runs: u64,
    pause_ms: u64,
) -> Result<Vec<Duration>, dualperf_store::StoreError> {
    let mut s = Store::open_target(target)?;
    let id = s.create_campaign(&NewCampaign {
        label: format!("bench writer {w}"),
        created_unix_s: 0,
        command_line: "commit_latency".into(),
        spec_json: "{}".into(),
        dualperf_version: "bench".into(),
        git_revision: "bench".into(),
    })?;
    s.add_cells(&[CellRecord {
        campaign_id: id,
        cell_index: 0,
        family: Family::V4,
        kind: TestKind::TcpStream,
        payload_bytes: 1408,
        direction: Direction::Forward,
        spec_json: "{}".into(),
        target_met: None,
    }])?;
    let metrics: BTreeMap<String, f64> = (0..24)
        .map(|i| (format!("metric_{i:02}"), f64::from(i) * 1.5e6))
        .collect();
    let samples: Vec<IntervalSample> = (0..10)
        .map(|i| IntervalSample {
            start_ns: i * 100_000_000,
            end_ns: (i + 1) * 100_000_000,
            metrics: metrics
                .iter()
                .take(8)
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        })
        .collect();
    let applied: BTreeMap<String, String> = (0..12)
        .map(|i| (format!("client.setting_{i}"), "16384".to_string()))
        .collect();
    let mut out = Vec::new();
    for rep in 0..runs {
        let run = NewRun {
            campaign_id: id,
            cell_index: 0,
            repetition: rep as u32,
            warmup: false,
            attempt: 0,
            status: RunStatus::Ok,
            metrics: metrics.clone(),
            samples: samples.clone(),
            applied: applied.clone(),
            started_unix_ns: 0,
            duration_ns: 1,
        };
        let t = Instant::now();
        s.record_run(&run)?;
        out.push(t.elapsed());
        if pause_ms > 0 {
            std::thread::sleep(Duration::from_millis(pause_ms));
        }
    }
    Ok(out)
}
