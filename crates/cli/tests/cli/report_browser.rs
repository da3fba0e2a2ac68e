//! `report.html` in a real browser: headless Chromium loads the page made by the binary
//! from a real database, with no console messages (the page has no script, so any
//! message is an error or a blocked fetch), every figure (the views' and the time series
//! of selected runs) laid out with a non-zero size, its axis and legend text readable and
//! inside it, nothing fetched, no sideways scrolling at phone width, and screenshots kept
//! under `target/test-artifacts/report-browser/` (and `report-browser-six/` for six
//! systems × two IP versions).
//!
//! Needs `/usr/bin/chromium` (Debian's `chromium`), or `DUALPERF_CHROMIUM=/path`.
//! Set `DUALPERF_SKIP_BROWSER=1` to skip where no browser can be installed.

use crate::support::fixture::{artifacts_dir, dualperf, fixture_db, six_systems_db};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FIGURES: [&str; 35] = [
    "tcp-throughput",
    "udp-throughput",
    "tcp-rtt",
    "udp-rtt",
    "udp-jitter",
    "udp-loss",
    "tcp-host-cpu-busy",
    "udp-host-cpu-busy",
    "tcp-stream-128-timeseries",
    "tcp-stream-1408-timeseries",
    "udp-stream-128-timeseries",
    "udp-stream-1408-timeseries",
    "tcp-rr-128-timeseries",
    "tcp-rr-1408-timeseries",
    "udp-rr-128-timeseries",
    "udp-rr-1408-timeseries",
    "udp-stream-128-windows-goodput",
    "udp-stream-128-windows-loss",
    "udp-stream-128-windows-owd",
    "udp-stream-1408-windows-goodput",
    "udp-stream-1408-windows-loss",
    "udp-stream-1408-windows-owd",
    "tcp-rtt-under-load-p50-of-probes",
    "udp-rtt-under-load-p50-of-probes",
    "tcp-responsiveness-under-load",
    "tcp-upload-goodput-under-load",
    "tcp-download-goodput-under-load",
    "rrul-128-rtt-cdf-tcp",
    "rrul-128-rtt-cdf-udp",
    "rrul-1408-rtt-cdf-tcp",
    "rrul-1408-rtt-cdf-udp",
    "rrul-1408-rtt-tcp-timeseries",
    "rrul-1408-rtt-udp-timeseries",
    "rrul-1408-upload-timeseries",
    "rrul-1408-download-timeseries",
];

/// Appended to a copy of the page (never to report.html itself): writes each figure's
/// laid-out size, the number of fetched resources and whether the page scrolls sideways
/// into the DOM, which `--dump-dom` then prints.
const PROBE: &str = r#"<script>
window.addEventListener('load', function () {
  var figs = [];
  var minfont = 1000, outside = 0;
  document.querySelectorAll('svg.figure').forEach(function (s) {
    var r = s.getBoundingClientRect();
    figs.push(s.id + '=' + Math.round(r.width) + 'x' + Math.round(r.height));
    var vb = s.viewBox.baseVal;
    var scale = r.width / vb.width;
    s.querySelectorAll('text.ytick, text.xtick, g.legend text').forEach(function (t) {
      var size = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (size < minfont) { minfont = size; }
      var b = t.getBBox();
      if (b.x < 0 || b.x + b.width > vb.width + 0.5 || b.y + b.height > vb.height + 0.5) { outside++; }
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = 'PROBE_' + 'RESULT figures ' + figs.join(',') +
    ' minfont ' + minfont.toFixed(1) + ' outside ' + outside +
    ' resources ' + performance.getEntriesByType('resource').length +
    ' overflow ' + (document.documentElement.scrollWidth > document.documentElement.clientWidth) + ' END_' + 'PROBE';
  document.body.appendChild(pre);
});
</script>"#;

fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("DUALPERF_CHROMIUM") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Run Chromium headless on `url` with `extra` flags; kill it after 90 s.
fn run_chromium(browser: &Path, window: &str, extra: &[String], url: &str) -> Output {
    // A fresh profile per run: a profile still held by a previous instance would get the
    // page handed over to it. Output goes to files, not pipes: a DOM larger than a pipe
    // buffer would block the browser while we wait for it.
    let scratch = tempfile::tempdir().expect("scratch dir");
    let profile = scratch.path().join("profile");
    let out_path = scratch.path().join("stdout");
    let err_path = scratch.path().join("stderr");
    let stdout = std::fs::File::create(&out_path).expect("stdout file");
    let stderr = std::fs::File::create(&err_path).expect("stderr file");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={window}"))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            _ => {
                let _ = child.kill();
                break child.wait().expect("reap chromium");
            }
        }
    };
    Output {
        status,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    }
}

fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

#[test]
fn report_html_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var("DUALPERF_SKIP_BROWSER").as_deref() == Ok("1") {
            eprintln!("skipped: no chromium and DUALPERF_SKIP_BROWSER=1");
            return;
        }
        panic!(
            "headless Chromium not found at /usr/bin/chromium: install Debian's `chromium` \
             package (apt-get install chromium), point DUALPERF_CHROMIUM at a browser, or set \
             DUALPERF_SKIP_BROWSER=1 to skip this test"
        );
    };
    let dir = artifacts_dir("report-browser");
    let db = dir.join("results.db");
    let ids = fixture_db(&db);
    let out_dir = dir.join("report");
    let made = dualperf()
        .args(["report", "--no-png", "--link-rate", "1gbit", "--db"])
        .arg(&db)
        .arg("--campaign")
        .args(ids.iter().map(|i| i.to_string()))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run dualperf report");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let page = out_dir.join("report.html");
    let html = std::fs::read_to_string(&page).expect("read report.html");

    // The console check can fail: a page that logs is caught.
    let bad = dir.join("console-check.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><script>console.error('boom')</script>",
    )
    .expect("write");
    let out = run_chromium(&browser, "800,600", &["--dump-dom".into()], &file_url(&bad));
    assert!(
        !console_lines(&out.stderr).is_empty(),
        "console messages are not detected; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // 1. The page itself: no console message at all.
    let out = run_chromium(
        &browser,
        "1280,900",
        &["--dump-dom".into()],
        &file_url(&page),
    );
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = console_lines(&out.stderr);
    assert!(
        console.is_empty(),
        "console messages from report.html: {console:#?}"
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("Findings") && dom.contains("Header overhead"),
        "DOM not loaded: {}",
        &dom[..dom.len().min(500)]
    );

    // 2. Layout at laptop and phone width, through a probe copy of the page.
    check_layout(&browser, &dir, &html);

    // 3. Screenshots as artifacts.
    screenshots(&browser, &dir, &page);
}

/// Every figure of FIGURES laid out at laptop and phone width, its axis and legend text
/// at least 11 px and inside the figure; nothing fetched, no sideways scrolling.
fn check_layout(browser: &Path, dir: &Path, html: &str) {
    let probe_page = dir.join("probe.html");
    std::fs::write(
        &probe_page,
        html.replace("</body>", &format!("{PROBE}</body>")),
    )
    .expect("write probe");
    for (window, min_width) in [("1280,900", 480), ("390,844", 300)] {
        let out = run_chromium(
            browser,
            window,
            &["--dump-dom".into(), "--virtual-time-budget=3000".into()],
            &file_url(&probe_page),
        );
        let dom = String::from_utf8_lossy(&out.stdout);
        let probe = dom
            .split("PROBE_RESULT ")
            .nth(1)
            .and_then(|s| s.split(" END_PROBE").next())
            .unwrap_or_else(|| {
                panic!(
                    "probe did not run at {window}: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
            .to_string();
        for id in FIGURES {
            let size = probe
                .split([' ', ','])
                .find_map(|f| f.strip_prefix(&format!("fig-{id}=")))
                .unwrap_or_else(|| panic!("figure {id} missing at {window}: {probe}"));
            let (w, h) = size.split_once('x').expect("WxH");
            let w: u32 = w.parse().expect("width");
            let h: u32 = h.parse().expect("height");
            assert!(
                w >= min_width && h > 100,
                "figure {id} is {w}x{h} at {window}"
            );
        }
        // Axis and legend text readable at phone width; no legend or tick text outside
        // its figure (measured by the browser, not estimated).
        let minfont: f64 = probe
            .split("minfont ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0);
        assert!(
            minfont >= 11.0,
            "axis text {minfont} px at {window}: {probe}"
        );
        assert!(
            probe.contains("outside 0 "),
            "figure text outside its figure at {window}: {probe}"
        );
        assert!(
            probe.contains("resources 0 "),
            "the page fetched something: {probe}"
        );
        assert!(
            probe.contains("overflow false"),
            "the page scrolls sideways at {window}: {probe}"
        );
    }
}

/// Full-page screenshots at laptop and phone width, kept as artifacts.
fn screenshots(browser: &Path, dir: &Path, page: &Path) {
    for (name, window) in [
        ("report-laptop.png", "1280,8400"),
        ("report-phone.png", "390,2400"),
    ] {
        let shot = dir.join(name);
        let out = run_chromium(
            browser,
            window,
            &[format!("--screenshot={}", shot.display())],
            &file_url(page),
        );
        let len = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
        assert!(
            len > 10_000,
            "screenshot {name} missing or empty ({len} bytes): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Six systems × two IP versions: twelve lines in every figure, whose legends and
/// labels stay readable and inside their figures at laptop and phone width.
#[test]
fn six_systems_report_keeps_every_legend_inside_at_laptop_and_phone_width() {
    let Some(browser) = chromium() else {
        if std::env::var("DUALPERF_SKIP_BROWSER").as_deref() == Ok("1") {
            eprintln!("skipped: no chromium and DUALPERF_SKIP_BROWSER=1");
            return;
        }
        panic!("headless Chromium not found at /usr/bin/chromium (see the test above)");
    };
    let dir = artifacts_dir("report-browser-six");
    let db = dir.join("results.db");
    let ids = six_systems_db(&db);
    let out_dir = dir.join("report");
    let made = dualperf()
        .args(["report", "--no-png", "--no-pdf", "--db"])
        .arg(&db)
        .arg("--campaign")
        .args(ids.iter().map(|i| i.to_string()))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run dualperf report");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let page = out_dir.join("report.html");
    let html = std::fs::read_to_string(&page).expect("read report.html");
    for id in FIGURES {
        let svg = std::fs::read_to_string(out_dir.join(format!("figures/{id}.svg")))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let lines = svg.matches("<g class=\"series\"").count();
        // RTT views add nothing; every figure has each system's IPv4 and IPv6 line.
        assert!(
            lines >= 12,
            "{id}: {lines} lines for 6 systems × 2 IP versions"
        );
    }
    check_layout(&browser, &dir, &html);
    screenshots(&browser, &dir, &page);
}
