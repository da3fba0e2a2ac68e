//! PostgreSQL: what a user sees when something is wrong (an unreachable server, a wrong
//! password, a missing or empty database, a connection cut mid-study) and `sslmode`
//! (disable, prefer, require, verify-full with `sslrootcert`). All on a throwaway
//! cluster on 127.0.0.1; skipped with the reason when PostgreSQL is absent and CI unset.

use dualperf_store::{CellRecord, DbTarget, NewCampaign, NewRun, RunStatus, Store, StoreError};
use testkit::pg::Cluster;
use wire::spec::{Direction, Family, TestKind};

fn target(url: &str) -> DbTarget {
    DbTarget::from(url)
}

fn connect_error(url: &str) -> String {
    let e = Store::open_target(&target(url)).err().expect("must fail");
    assert!(matches!(e, StoreError::Connect { .. }), "{e:?}");
    eprintln!("{e}");
    e.to_string()
}

#[test]
fn connection_problems_are_clear_and_never_show_the_password() {
    let Some(pg) = Cluster::start_or_skip("connection_problems_are_clear") else {
        return;
    };
    pg.create_db("perf");
    pg.add_password_user("alice", "right");
    let base = format!("127.0.0.1:{}", pg.port);

    let msg = connect_error(&format!("postgres://alice:wrong@{base}/perf"));
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert!(msg.contains("check USER and PASSWORD"), "{msg}");
    assert!(
        msg.contains("alice:***@") && !msg.contains("wrong"),
        "{msg}"
    );

    // The right password works.
    let s = Store::open_target(&target(&format!("postgres://alice:right@{base}/perf")));
    assert!(s.is_ok(), "{:?}", s.err());

    let msg = connect_error(&format!("postgres://dualperf@{base}/nosuchdb"));
    assert!(
        msg.contains("does not exist") && msg.contains("createdb"),
        "{msg}"
    );

    // A read-only open of a database no study has written yet.
    pg.create_db("empty");
    let e = Store::open_target_read_only(&target(&pg.url("empty")))
        .err()
        .unwrap();
    assert!(matches!(e, StoreError::Empty(_)), "{e}");
    assert!(e.to_string().contains("dualperf study"), "{e}");

    // TLS required from a server without it.
    let msg = connect_error(&format!("{}?sslmode=require", pg.url("perf")));
    assert!(msg.contains("TLS"), "{msg}");
    // prefer and disable connect without.
    for mode in ["prefer", "disable"] {
        let url = format!("{}?sslmode={mode}", pg.url("perf"));
        assert!(Store::open_target(&target(&url)).is_ok(), "{mode}");
    }

    // Nothing listens any more: refused at once, with what to check.
    let port = pg.port;
    assert!(pg.stop().status.success());
    let msg = connect_error(&format!("postgres://alice:right@127.0.0.1:{port}/perf"));
    assert!(msg.contains("check the host and port"), "{msg}");
    assert!(!msg.contains("right"), "{msg}");
}

#[test]
fn tls_is_used_when_required_and_the_certificate_checked_when_asked() {
    let Some(pg) = Cluster::start_or_skip("tls_is_used_when_required") else {
        return;
    };
    pg.create_db("perf");
    let Some(ca) = pg.enable_tls() else {
        return;
    };
    let url = pg.url("perf");
    for mode in ["require", "prefer"] {
        let s = Store::open_target(&target(&format!("{url}?sslmode={mode}"))).unwrap();
        drop(s);
    }
    // The server sees dualperf's session encrypted.
    let held = Store::open_target(&target(&format!("{url}?sslmode=require"))).unwrap();
    let ssl = pg.psql(
        "postgres",
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE a.application_name = 'dualperf' AND s.ssl",
    );
    assert_eq!(ssl, "1");
    drop(held);
    // verify-full against the server's own certificate as the CA: accepted.
    let ca_param = ca.display().to_string().replace('/', "%2F");
    let ok = format!("{url}?sslmode=verify-full&sslrootcert={ca_param}");
    assert!(Store::open_target(&target(&ok)).is_ok());
    // verify-full against the system's CAs: a self-signed certificate is refused.
    let msg = connect_error(&format!("{url}?sslmode=verify-full"));
    assert!(msg.contains("TLS") || msg.contains("certificate"), "{msg}");
}

fn new_run(campaign_id: i64, repetition: u32) -> NewRun {
    NewRun {
        campaign_id,
        cell_index: 0,
        repetition,
        warmup: false,
        attempt: 0,
        status: RunStatus::Ok,
        metrics: [("throughput_bps".to_string(), 1e9)].into(),
        samples: Vec::new(),
        applied: Default::default(),
        started_unix_ns: 0,
        duration_ns: 1,
    }
}

/// The server ends the session between two runs: the next commit fails with
/// ConnectionLost (naming the database, not the password), nothing partial is left,
/// and a new connection carries on from what was committed.
#[test]
fn a_connection_cut_mid_study_loses_nothing_committed() {
    let Some(pg) = Cluster::start_or_skip("a_connection_cut_mid_study") else {
        return;
    };
    pg.create_db("perf");
    let url = format!("postgres://dualperf:pw@127.0.0.1:{}/perf", pg.port);
    let mut s = Store::open_target(&target(&url)).unwrap();
    let id = s
        .create_campaign(&NewCampaign {
            label: "cut".into(),
            created_unix_s: 0,
            command_line: "dualperf study".into(),
            spec_json: "{}".into(),
            dualperf_version: "0".into(),
            git_revision: "x".into(),
        })
        .unwrap();
    s.add_cells(&[CellRecord {
        campaign_id: id,
        cell_index: 0,
        family: Family::V4,
        kind: TestKind::TcpStream,
        payload_bytes: 128,
        direction: Direction::Forward,
        spec_json: "{}".into(),
        target_met: None,
    }])
    .unwrap();
    s.record_run(&new_run(id, 0)).unwrap();
    assert_eq!(pg.terminate_sessions("perf"), 1);
    let e = s.record_run(&new_run(id, 1)).unwrap_err();
    assert!(matches!(e, StoreError::ConnectionLost { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("dualperf:***@127.0.0.1"), "{msg}");
    assert!(msg.contains("committed before it is kept"), "{msg}");
    // Later calls on the dead connection fail the same way, never panic.
    assert!(matches!(s.runs(id), Err(StoreError::ConnectionLost { .. })));
    drop(s);
    let mut again = Store::open_target(&target(&url)).unwrap();
    assert_eq!(again.runs(id).unwrap().len(), 1);
    again.record_run(&new_run(id, 1)).unwrap();
    assert_eq!(again.runs(id).unwrap().len(), 2);
}

/// A statement the server refuses names the table and the columns written (before:
/// the server's words only, e.g. "value too long for type character varying(3)", with
/// no hint of which field).
#[test]
fn a_refused_write_names_the_table_and_columns() {
    let Some(pg) = Cluster::start_or_skip("a_refused_write_names_the_table_and_columns") else {
        return;
    };
    let url = pg.create_db("narrow");
    drop(Store::open_target(&target(&url)).unwrap());
    // Narrowed behind dualperf's back.
    pg.psql(
        "narrow",
        "ALTER TABLE campaigns ALTER COLUMN git_revision TYPE varchar(3)",
    );
    let mut s = Store::open_target(&target(&url)).unwrap();
    let e = s
        .create_campaign(&NewCampaign {
            label: "lab".into(),
            created_unix_s: 1,
            command_line: "dualperf study".into(),
            spec_json: "{}".into(),
            dualperf_version: "0".into(),
            git_revision: "0123456789ab".into(),
        })
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("value too long"), "{msg}");
    assert!(
        msg.contains("(writing table campaigns: uuid, label,"),
        "{msg}"
    );
}
