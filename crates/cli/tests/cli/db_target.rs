//! `--db` and `DUALPERF_DB`: the variable names the database when `--db` is absent, the
//! flag wins over it, a PostgreSQL URL that cannot be reached is a clear error that never
//! shows the password, and `--help` never prints the variable's value.

use crate::support::stderr;
use std::process::{Command, Output};

fn dualperf(args: &[&str], env: Option<&str>) -> Output {
    let mut c = Command::new(crate::support::BIN);
    c.args(args).env_remove("DUALPERF_DB");
    if let Some(v) = env {
        c.env("DUALPERF_DB", v);
    }
    c.output().expect("run dualperf")
}

#[test]
fn env_names_the_database_and_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let from_env = dir.path().join("from-env.db");
    let from_flag = dir.path().join("from-flag.db");
    for cmd in [&["show"][..], &["export"], &["report"]] {
        let o = dualperf(cmd, Some(from_env.to_str().unwrap()));
        assert!(!o.status.success(), "{cmd:?}");
        assert!(
            stderr(&o).contains("from-env.db"),
            "{cmd:?}: {}",
            stderr(&o)
        );
        let mut args = cmd.to_vec();
        args.extend(["--db", from_flag.to_str().unwrap()]);
        let o = dualperf(&args, Some(from_env.to_str().unwrap()));
        assert!(!o.status.success(), "{cmd:?}");
        let e = stderr(&o);
        assert!(
            e.contains("from-flag.db") && !e.contains("from-env.db"),
            "{cmd:?}: {e}"
        );
    }
    // Nothing was created by reading.
    assert!(!from_env.exists() && !from_flag.exists());
}

#[test]
fn unreachable_postgres_url_is_a_clear_error_without_its_password() {
    let url = "postgres://alice:s3cret@127.0.0.1:1/perf?sslmode=require";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    let cases: Vec<(Vec<&str>, Option<&str>)> = vec![
        (vec!["show", "--db", url], None),
        (vec!["export"], Some(url)),
        (vec!["report"], Some(url)),
        (vec!["study", "--resume", "1"], Some(url)),
        (vec!["import", url, "--db", file.to_str().unwrap()], None),
    ];
    for (args, env) in cases {
        let o = dualperf(&args, env);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("cannot connect to the PostgreSQL results database"),
            "{args:?}: {e}"
        );
        assert!(e.contains("check the host and port"), "{args:?}: {e}");
        assert!(e.contains("alice:***@127.0.0.1"), "{args:?}: {e}");
        assert!(!e.contains("s3cret"), "{args:?}: {e}");
    }
    assert!(
        !file.exists(),
        "nothing is created when the source is refused"
    );
    // No file or directory named after the URL appeared in the working directory.
    assert!(!std::path::Path::new("postgres:").exists());
}

#[test]
fn help_hides_the_variable_value() {
    let o = dualperf(&["show", "--help"], Some("postgres://u:s3cret@h/db"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(out.contains("DUALPERF_DB"), "{out}");
    assert!(!out.contains("s3cret"), "{out}");
}
