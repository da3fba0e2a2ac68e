//! Before a study creates anything (database file, campaign, lab): a remote target
//! resolves in every family of the plan and a server answers there. A study that cannot
//! start fails at once with the cause and leaves nothing behind, instead of recording a
//! campaign whose every run fails and suggesting a `--resume` that cannot help.
//!
//! "Answers" means a whole handshake: against `dualperf server`, one 1-byte tcp-rr
//! transaction (hello, key proof with a pre-shared key, request, result); a server busy
//! with someone else's test, or refusing this one, has answered too. An iperf3 server is
//! only resolved (see [`check_remote`]).

use super::{DualperfTarget, Peer, TargetError, TargetOptions};
use std::net::SocketAddr;
use wire::spec::Family;

/// Why a remote target cannot be studied, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("cannot resolve host {host}: check the name (nothing was recorded)")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "host {host} has no {family} address ({record}); give the {family} server with \
         --host{n} ADDR, or use --families {other} (nothing was recorded)",
        n = family.number()
    )]
    NoAddress {
        host: String,
        family: Family,
        record: &'static str,
        other: u8,
    },
    #[error(
        "no {family} server given: add --host{n} ADDR, or use --families {o} \
         (nothing was recorded)",
        n = family.number(),
        o = family.other().number()
    )]
    NoHost { family: Family },
    #[error("the study cannot start, nothing was recorded: {addr} does not answer")]
    NoAnswer {
        addr: SocketAddr,
        #[source]
        source: Box<TargetError>,
    },
    /// Boxed: a target error holds an engine error, and this one is returned by value.
    #[error(transparent)]
    Target(Box<TargetError>),
}

impl From<TargetError> for PreflightError {
    fn from(e: TargetError) -> Self {
        PreflightError::Target(Box::new(e))
    }
}

/// Checks the remote target of `opts` in each of `families` (nothing to check for the
/// embedded server or a lab, which the study builds itself).
pub fn check_remote(opts: &TargetOptions, families: &[Family]) -> Result<(), PreflightError> {
    if !opts.hosts.is_remote() || opts.lab.is_some() {
        return Ok(());
    }
    for &family in families {
        // An address HOST of the other family is resolved too: its error names the fix.
        let given = opts.hosts.for_family(family);
        let Some(host) = given.or(opts.hosts.host.as_deref()) else {
            return Err(PreflightError::NoHost { family });
        };
        let addr = resolve(host, opts.port, family)?;
        match opts.peer {
            Peer::Dualperf => {
                let target = DualperfTarget::open(opts, families, &mut |_| {})?;
                target
                    .hello(family)
                    .map_err(|source| PreflightError::NoAnswer {
                        addr,
                        source: Box::new(source),
                    })?;
            }
            // Resolution only: iperf3 has no test-free handshake, and a probe connection
            // is a client to it whose error path raced the study's first run (one reset
            // run in 9 loaded suite runs), so an iperf3 target is checked by its first run.
            Peer::Iperf3 => {}
        }
    }
    Ok(())
}

/// The address of `host` in `family`, or why there is none and what to do.
fn resolve(host: &str, port: u16, family: Family) -> Result<SocketAddr, PreflightError> {
    match net::host::address_in(host, family) {
        Ok(ip) => Ok(SocketAddr::new(ip, port)),
        Err(net::host::HostError::Resolve { source, .. }) => Err(PreflightError::Resolve {
            host: host.to_string(),
            source,
        }),
        Err(net::host::HostError::NoAddress { .. }) => Err(PreflightError::NoAddress {
            host: host.to_string(),
            family,
            record: net::host::record(family),
            other: family.other().number(),
        }),
    }
}
