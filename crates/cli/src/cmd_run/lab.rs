//! `dualperf run --lab p2p|client-server`: one test in a temporary network-namespace
//! lab. Owns the lab (from the `lab` crate) and the `dualperf server` process in its
//! server namespace (started through `crate::lab_server`) for the length of one run; the client runs on a thread inside the
//! client namespace. The server is stopped and the lab removed on every way out: normal
//! end, error (drop), and Ctrl-C / SIGTERM (a handler here removes every lab of this
//! process and exits with 130; the main thread never exits on its own while that runs).

use super::{say, summary, to_json, CliRecorder, RunArgs};
use crate::lab_server::{dualperf_server_command, ServerProcess};
use anyhow::{anyhow, bail, Context};
use engine::ClientConfig;
use lab::{Lab, LabSpec};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;
use wire::spec::TestSpec;

pub fn main(args: &RunArgs, spec: TestSpec) -> anyhow::Result<ExitCode> {
    crate::interrupt::remove_labs_and_exit()?;
    let out = run_in_lab(args, spec);
    // Interrupted: the handler is removing the lab and will exit(130); wait for it.
    while crate::interrupt::INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    out
}

fn run_in_lab(args: &RunArgs, spec: TestSpec) -> anyhow::Result<ExitCode> {
    let direction = spec.direction;
    let family = spec.family;
    let mut rec = CliRecorder::new(args.json, direction);
    let (result, md) = in_lab(args, family, |host, port| {
        let mut cfg = ClientConfig::new(host, port, spec);
        cfg.connect_timeout = super::connect_timeout_of(args.connect_timeout)?;
        if let Some(v) = args.protocol_version {
            cfg.protocol_version = v;
        }
        engine::run_client(&cfg, &mut rec).map_err(|e| anyhow!("{e}"))
    })?;
    if args.json {
        let mut doc: serde_json::Value = serde_json::from_str(&to_json(&result, &rec.samples)?)
            .context("cannot re-read the JSON result")?;
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("lab".into(), serde_json::to_value(&md)?);
        }
        say(&serde_json::to_string_pretty(&doc).context("cannot encode the result as JSON")?);
    } else {
        say(summary(&result, false).trim_end());
        say_lab(&md);
    }
    Ok(ExitCode::SUCCESS)
}

/// The lab's description lines under a text result.
pub(super) fn say_lab(md: &BTreeMap<String, String>) {
    for (k, v) in md {
        say(&format!("  {k:<34} {v}"));
    }
    say("  (the lab was removed)");
}

/// Builds the lab of `--lab` with a `dualperf server` in its server namespace, runs
/// `client(server address, port)` on a thread inside the client namespace, and removes
/// the lab on every way out. Returns the client's answer and the lab's description.
pub(super) fn in_lab<T: Send>(
    args: &RunArgs,
    family: wire::spec::Family,
    client: impl FnOnce(&str, u16) -> anyhow::Result<T> + Send,
) -> anyhow::Result<(T, BTreeMap<String, String>)> {
    let Some(topology) = args.target.lab else {
        bail!("--lab needs a topology (p2p or client-server)");
    };
    let port = args.target.port();
    if port == 0 {
        bail!("--port 0 cannot be used with --lab (the client must know the port)");
    }
    // Temporary labs left by a dualperf that was killed (SIGKILL) go first.
    if let Ok(removed) = lab::cleanup_stale() {
        for name in removed {
            eprintln!("dualperf: removed lab {name} left by a process that no longer runs");
        }
    }
    let lab_spec = LabSpec {
        rate_bps: args.target.lab_rate,
        mtu: args.target.lab_mtu,
        ..LabSpec::temporary(topology)
    };
    let lab = match &args.target.lab_link {
        Some(link) => {
            let emulation =
                lab::LinkEmulation::of(link, args.target.lab_mtu, args.target.lab_ampdu)
                    .context("--lab-link")?;
            Lab::create_emulated(&lab_spec, &emulation)
        }
        None => Lab::create(&lab_spec),
    }
    .context("cannot build the lab for --lab")?;
    for w in lab.warnings() {
        eprintln!("dualperf: warning: {w}");
    }
    // Declared after `lab`: dropped first, so the server goes before its namespace.
    let exe = std::env::current_exe().context("cannot find this dualperf binary")?;
    let mut server = ServerProcess::start(
        &lab,
        dualperf_server_command(&exe, &lab, port),
        "dualperf",
        "starting the lab's dualperf server",
    )?;
    let host = lab.server_addr(family).to_string();
    let client_ns = lab.client_ns().to_string();
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            lab::enter_ns(&client_ns).map_err(|e| anyhow!("{e}"))?;
            client(&host, port)
        })
        .join()
        .unwrap_or_else(|_| {
            Err(anyhow!(
                "the client thread in namespace {client_ns} panicked"
            ))
        })
    });
    let mut md = lab.describe();
    md.insert("lab.server_port".into(), port.to_string());
    if !lab.warnings().is_empty() {
        md.insert("lab.warnings".into(), lab.warnings().join("; "));
    }
    server.stop();
    let teardown = lab.teardown().context("removing the run's lab");
    let result = result?;
    teardown?;
    Ok((result, md))
}
