//! Progress of a study, in words the terminal bar and a log share ([`summary`]): runs
//! done, cells finished of all, the runs left as a range (a cell that misses its target
//! runs on, so the total is not a fixed number) and the time left at the mean run length
//! so far (`study::schedule::time_left_s`). Where stderr is not a terminal (a log file, CI,
//! `2>file`) the bar draws nothing, so a line says the same at least every
//! [`DEFAULT_INTERVAL`], from a thread of its own so that a long run cannot hold the
//! next line back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a progress line is printed.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);
/// Overrides [`DEFAULT_INTERVAL`], in seconds (0.05 to 3600; tests use a short one).
pub const INTERVAL_ENV: &str = "DUALPERF_PROGRESS_INTERVAL_S";

/// The interval: [`INTERVAL_ENV`] when it holds a number in range, else the default.
pub fn interval() -> Duration {
    std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && (0.05..=3600.0).contains(s))
        .map_or(DEFAULT_INTERVAL, Duration::from_secs_f64)
}

/// What the next line says.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The runner's last word: runs done, cells finished, runs left.
    pub progress: study::Progress,
    /// Runs this invocation ran (a resumed study's reused runs took no time).
    pub timed_runs: u64,
    /// The current cell and run ("IPv4 tcp-stream 128 B run 2/5").
    pub current: String,
}

impl Default for Status {
    fn default() -> Status {
        Status {
            progress: study::Progress {
                done_slots: 0,
                expected_slots: 0,
                cells_finished: 0,
                cells: 0,
                left_min: 0,
                left_max: 0,
            },
            timed_runs: 0,
            current: String::new(),
        }
    }
}

/// A range of counts or times: one value when both ends agree.
fn range(lo: String, hi: String) -> String {
    if lo == hi {
        lo
    } else {
        format!("{lo} to {hi}")
    }
}

/// How far the study is after `elapsed`: "12 runs done, 3 of 48 cells finished, 36 to
/// 612 runs left, about 1m12s to 20m24s left" (the time once a run has been timed).
pub fn summary(s: &Status, elapsed: Duration) -> String {
    let p = &s.progress;
    let mut out = format!(
        "{} runs done, {} of {} cells finished, {} runs left",
        p.done_slots,
        p.cells_finished,
        p.cells,
        range(p.left_min.to_string(), p.left_max.to_string())
    );
    if let Some((lo, hi)) = study::schedule::time_left_s(p, s.timed_runs, elapsed.as_secs_f64()) {
        out.push_str(&format!(
            ", about {} left",
            range(fmt_duration(lo), fmt_duration(hi))
        ));
    }
    out
}

/// Where a resumed campaign stands before its first new run: [`summary`] of the replayed
/// runs, the time left at the pace the recorded runs kept (their median start-to-start
/// gap), and that pace.
pub fn resumed(left: &runner::lifecycle::Left) -> String {
    let status = Status {
        progress: left.progress,
        timed_runs: u64::from(left.pace_s.is_some()),
        current: String::new(),
    };
    let pace = left.pace_s.unwrap_or(0.0);
    let mut out = summary(&status, Duration::from_secs_f64(pace.max(0.0)));
    if left.pace_s.is_some() {
        out.push_str(&format!(
            " at the recorded runs' pace (one every {})",
            fmt_pace(pace)
        ));
    }
    out
}

/// Seconds per run for people: `0.8 s`, `2.1 s`, `42 s`, `3m05s`.
fn fmt_pace(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else {
        fmt_duration(s)
    }
}

/// One progress line: `dualperf: progress: 12 runs done, … left, 1m05s elapsed, now
/// IPv4 …`.
pub fn line(s: &Status, elapsed: Duration) -> String {
    let now = if s.current.is_empty() {
        String::new()
    } else {
        format!(", now {}", s.current)
    };
    format!(
        "dualperf: progress: {}, {} elapsed{now}",
        summary(s, elapsed),
        fmt_duration(elapsed.as_secs_f64())
    )
}

/// A duration for people: `42s`, `3m05s`, `1h02m`.
pub fn fmt_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A thread printing [`line`] to stderr every interval until [`Lines::stop`] (or drop).
pub struct Lines {
    status: Arc<Mutex<Status>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Lines {
    /// Lines every `every`, the first one `every` after now.
    pub fn start(every: Duration) -> Lines {
        let status = Arc::new(Mutex::new(Status::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (status.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let t0 = Instant::now();
                let mut next = t0 + every;
                // Short sleeps, so that stopping never waits a whole interval.
                let step = every.min(Duration::from_millis(100));
                while !sp.load(Ordering::SeqCst) {
                    std::thread::sleep(step);
                    let now = Instant::now();
                    if now < next || sp.load(Ordering::SeqCst) {
                        continue;
                    }
                    next = now + every;
                    let text = match st.lock() {
                        Ok(s) => line(&s, t0.elapsed()),
                        Err(_) => return,
                    };
                    eprintln!("{}", wire::text::terminal_safe_line(&text));
                }
            })
            .ok();
        Lines {
            status,
            stop,
            thread,
        }
    }

    /// Change what the next line says.
    pub fn update(&self, f: impl FnOnce(&mut Status)) {
        if let Ok(mut s) = self.status.lock() {
            f(&mut s);
        }
    }

    /// No more lines; returns once the thread has ended.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_campaign_says_what_is_left_at_the_recorded_pace() {
        let mut left = runner::lifecycle::Left {
            progress: study::Progress {
                done_slots: 120,
                expected_slots: 240,
                cells_finished: 3,
                cells: 48,
                left_min: 90,
                left_max: 600,
            },
            pace_s: Some(2.1),
        };
        assert_eq!(
            resumed(&left),
            "120 runs done, 3 of 48 cells finished, 90 to 600 runs left, \
             about 3m09s to 21m00s left at the recorded runs' pace (one every 2.1 s)"
        );
        // One run recorded gives no pace: no time is guessed.
        left.pace_s = None;
        assert_eq!(
            resumed(&left),
            "120 runs done, 3 of 48 cells finished, 90 to 600 runs left"
        );
    }

    #[test]
    fn a_line_says_runs_done_cells_finished_what_is_left_and_the_current_cell() {
        let mut s = Status {
            progress: study::Progress {
                done_slots: 12,
                expected_slots: 240,
                cells_finished: 3,
                cells: 48,
                left_min: 36,
                left_max: 612,
            },
            timed_runs: 12,
            current: "IPv6 udp-rr 640 B run 3/5..20".into(),
        };
        // A fake clock: 12 runs in 24 s, 2 s a run.
        assert_eq!(
            line(&s, Duration::from_secs(24)),
            "dualperf: progress: 12 runs done, 3 of 48 cells finished, 36 to 612 runs left, \
             about 1m12s to 20m24s left, 24s elapsed, now IPv6 udp-rr 640 B run 3/5..20"
        );
        // Before a run is timed there is no time to give; one value when the range is one.
        s.timed_runs = 0;
        s.progress.left_min = 612;
        assert_eq!(
            summary(&s, Duration::from_secs(5)),
            "12 runs done, 3 of 48 cells finished, 612 runs left"
        );
        assert_eq!(
            line(&Status::default(), Duration::ZERO),
            "dualperf: progress: 0 runs done, 0 of 0 cells finished, 0 runs left, 0s elapsed"
        );
    }

    #[test]
    fn stopping_ends_the_thread_without_waiting_an_interval() {
        let t = Instant::now();
        let mut l = Lines::start(Duration::from_secs(3600));
        l.update(|s| s.timed_runs = 1);
        l.stop();
        // Whatever the load, far less than the hour the next line was due in.
        assert!(t.elapsed() < Duration::from_secs(600), "{:?}", t.elapsed());
        assert!(l.thread.is_none());
    }
}
