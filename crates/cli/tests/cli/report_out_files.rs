//! How `dualperf report`, `dualperf export` and `dualperf man` write their files (one
//! writer, `runner::out_files`): never through a symbolic link, neither the file named
//! nor one inside `--out` (refused, the link named, its target untouched), and each
//! file to a temporary name first, so that a full disk leaves the previous report.html,
//! tables, export and manual pages byte-identical and the error names the path.

use crate::support::fixture::*;
use crate::support::text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn report(db: &Path, out: &Path, extra: &[&str]) -> Output {
    dualperf()
        .arg("report")
        .arg("--db")
        .arg(db)
        .arg("--out")
        .arg(out)
        .args(["--no-png", "--no-pdf"])
        .args(extra)
        .output()
        .expect("dualperf runs")
}

fn export(db: &Path, to: &Path, extra: &[&str]) -> Output {
    dualperf()
        .arg("export")
        .arg("--db")
        .arg(db)
        .arg("-o")
        .arg(to)
        .args(extra)
        .output()
        .expect("dualperf runs")
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn a_report_html_link_inside_out_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    fixture_db(&db);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = dir.path().join("precious.html");
    std::fs::write(&target, b"keep me").unwrap();
    std::os::unix::fs::symlink(&target, out.join("report.html")).unwrap();
    let o = report(&db, &out, &["--campaign", "1", "2"]);
    refused_link(&o, &out.join("report.html"), &target);
}

/// `o` failed naming `link` as a symbolic link; `link` is still one, and its target
/// still holds "keep me".
#[cfg(unix)]
fn refused_link(o: &Output, link: &Path, target: &Path) {
    assert!(!o.status.success(), "{}", text(o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        text(o)
    );
    assert_eq!(std::fs::read(target).unwrap(), b"keep me");
    assert!(std::fs::symlink_metadata(link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[cfg(unix)]
#[test]
fn a_tables_link_inside_out_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    fixture_db(&db);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("tables")).unwrap();
    let o = report(&db, &out, &["--campaign", "1", "2"]);
    assert!(!o.status.success(), "{}", text(&o));
    let link = out.join("tables");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        text(&o)
    );
    assert_eq!(files_under(&elsewhere), Vec::<PathBuf>::new());
    // Nothing was renamed into place either: no half report.
    assert!(!out.join("report.html").exists());
    // The --out directory itself may be a link the user chose.
    let real = dir.path().join("real-out");
    std::fs::create_dir(&real).unwrap();
    let chosen = dir.path().join("chosen");
    std::os::unix::fs::symlink(&real, &chosen).unwrap();
    let o = report(&db, &chosen, &["--campaign", "1", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(real.join("report.html").is_file() && real.join("tables/runs.csv").is_file());
}

fn man(out: &Path) -> Output {
    dualperf()
        .arg("man")
        .arg("--out")
        .arg(out)
        .output()
        .expect("dualperf runs")
}

#[cfg(unix)]
#[test]
fn an_export_to_a_link_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    fixture_db(&db);
    let target = dir.path().join("precious.csv");
    std::fs::write(&target, b"keep me").unwrap();
    let link = dir.path().join("runs.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = export(&db, &link, &["--campaign", "1"]);
    refused_link(&o, &link, &target);
}

#[cfg(unix)]
#[test]
fn a_man_page_link_inside_out_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man");
    std::fs::create_dir_all(out.join("man1")).unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let link = out.join("man1/dualperf.1");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = man(&out);
    refused_link(&o, &link, &target);
    // No page of the set was written either.
    assert_eq!(files_under(&out), vec![link]);
}

/// A tmpfs of `size`, unmounted on drop (also when the test panics); `None` (with the
/// reason printed) when it cannot be mounted here.
struct Tmpfs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Tmpfs { _dir: dir, path }),
            Ok(o) => {
                eprintln!(
                    "SKIPPED: cannot mount a tmpfs (needs root): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

/// Fill the file system holding `dir` until a write fails for lack of space.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0x55u8; 16 * 1024];
    loop {
        match f.write_all(&chunk) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
            Err(e) => panic!("filling the tmpfs: {e}"),
        }
    }
    // Byte by byte, to the last page.
    while f.write_all(&[0x55]).is_ok() {}
}

#[test]
fn a_full_disk_leaves_the_previous_report_export_and_man_pages_byte_identical() {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    fixture_db(&db);
    // First one system, then two: the second report and export are larger than the
    // first, as when a campaign is added (written in place, the old files were cut).
    let out = fs.path.join("report");
    let o = report(&db, &out, &["--campaign", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let csv_path = fs.path.join("runs.csv");
    let o = export(&db, &csv_path, &["--campaign", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let pages = fs.path.join("man");
    let o = man(&pages);
    assert!(o.status.success(), "{}", text(&o));
    // Pages that are not the ones the binary writes, so that rewriting them changes them.
    for p in files_under(&pages) {
        std::fs::write(&p, b"an older page").unwrap();
    }
    let before: Vec<(PathBuf, Vec<u8>)> = files_under(&out)
        .into_iter()
        .chain(files_under(&pages))
        .chain([csv_path.clone()])
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert!(before.len() > 50, "{} files", before.len());
    fill(&fs.path);

    let o = report(&db, &out, &["--campaign", "1", "2"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    println!("report on a full disk: {}", err.trim());
    assert!(
        err.contains(&format!("cannot write {}", out.display())),
        "the error names no path under {}: {}",
        out.display(),
        text(&o)
    );
    let o = export(&db, &csv_path, &[]);
    assert!(!o.status.success(), "{}", text(&o));
    println!(
        "export on a full disk: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&csv_path.display().to_string()),
        "the error names no path: {}",
        text(&o)
    );
    let o = man(&pages);
    assert!(!o.status.success(), "{}", text(&o));
    println!(
        "man on a full disk: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&pages.display().to_string()),
        "the error names no path: {}",
        text(&o)
    );
    for (p, bytes) in &before {
        assert!(
            std::fs::read(p).unwrap() == *bytes,
            "{} changed after the failed write",
            p.display()
        );
    }
    // No temporary file is left behind.
    let now: Vec<PathBuf> = files_under(&fs.path)
        .into_iter()
        .filter(|p| !p.ends_with("filler"))
        .collect();
    assert_eq!(now.len(), before.len(), "{now:?}");
}
