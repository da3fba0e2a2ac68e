//! Progress of a study whose stderr is not a terminal (a log file, CI, `2>file`): the
//! progress bar draws nothing there, so a line says how far the study is at least every
//! [`DEFAULT_INTERVAL`] (runs done of those expected, time elapsed, the current cell),
//! from a thread of its own so that a long run cannot hold the next line back.

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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub done_runs: u64,
    pub expected_runs: u64,
    /// The current cell and run ("IPv4 tcp-stream 128 B run 2/5").
    pub current: String,
}

/// One progress line: `dualperf: progress: 12/240 runs, 1m05s elapsed, now IPv4 …`.
pub fn line(s: &Status, elapsed: Duration) -> String {
    let now = if s.current.is_empty() {
        String::new()
    } else {
        format!(", now {}", s.current)
    };
    format!(
        "dualperf: progress: {}/{} runs, {} elapsed{now}",
        s.done_runs,
        s.expected_runs,
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
    fn a_line_says_runs_elapsed_and_the_current_cell() {
        let s = Status {
            done_runs: 12,
            expected_runs: 240,
            current: "IPv6 udp-rr 640 B run 3/5..20".into(),
        };
        assert_eq!(
            line(&s, Duration::from_secs(65)),
            "dualperf: progress: 12/240 runs, 1m05s elapsed, now IPv6 udp-rr 640 B run 3/5..20"
        );
        assert_eq!(
            line(&Status::default(), Duration::ZERO),
            "dualperf: progress: 0/0 runs, 0s elapsed"
        );
    }

    #[test]
    fn stopping_ends_the_thread_without_waiting_an_interval() {
        let t = Instant::now();
        let mut l = Lines::start(Duration::from_secs(3600));
        l.update(|s| s.done_runs = 1);
        l.stop();
        // Whatever the load, far less than the hour the next line was due in.
        assert!(t.elapsed() < Duration::from_secs(600), "{:?}", t.elapsed());
        assert!(l.thread.is_none());
    }
}
