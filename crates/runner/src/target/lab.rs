//! `--lab`: a temporary network-namespace lab for one run or one study. Owns the lab
//! (from the `lab` crate) and the server process running in its server namespace
//! (`dualperf server`, or `iperf3 -s` with `--peer iperf3`, started through
//! [`super::lab_server`]); runs closures on threads inside the client namespace; removes
//! the server and the lab when dropped (normal end, error, first Ctrl-C). A second
//! Ctrl-C is the binary's signal handler's, through `lab::teardown_all_live`.

use super::lab_server::{dualperf_server_command, ServerProcess};
use super::TargetError;
use lab::{Lab, LabSpec, Topology};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::Command;
use wire::spec::Family;

/// What lab to build (from the flags, or from a resumed campaign's metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabRequest {
    pub topology: Topology,
    pub rate_bps: Option<u64>,
    pub mtu_bytes: Option<u32>,
    /// An emulated link (`--lab-link`) and its A-MPDU length (`--lab-ampdu`).
    pub link: Option<model::Link>,
    pub ampdu: Option<u32>,
    /// What the router of a client-server lab does to the path (`--lab-path-mtu`,
    /// `--lab-drop`); plain forwarding by default.
    pub path: lab::PathSpec,
}

impl LabRequest {
    /// The request a campaign's stored `lab.*` metadata describes.
    pub fn from_metadata(md: &BTreeMap<String, String>) -> Result<LabRequest, TargetError> {
        let bad = |why: String| TargetError::LabMetadata(why);
        let topology: Topology = md
            .get("lab.topology")
            .ok_or_else(|| bad("the campaign's lab metadata has no lab.topology".into()))?
            .parse()
            .map_err(|e: lab::LabError| bad(e.to_string()))?;
        let number = |key: &str, v: &str| {
            v.parse::<u64>()
                .map_err(|e| bad(format!("stored {key} {v:?} is not a number: {e}")))
        };
        let rate_bps = match md.get("lab.rate_bps").map(String::as_str) {
            None | Some("unshaped") => None,
            Some(r) => Some(number("lab.rate_bps", r)?),
        };
        let mtu_bytes = match md.get("lab.mtu_bytes") {
            None => None,
            Some(m) => Some(
                u32::try_from(number("lab.mtu_bytes", m)?)
                    .map_err(|e| bad(format!("stored lab.mtu_bytes {m:?}: {e}")))?,
            ),
        };
        let link = match md.get("lab.emulated_link") {
            None => None,
            Some(l) => Some(
                model::link::parse(l)
                    .map_err(|e| bad(format!("stored lab.emulated_link {l:?}: {e}")))?,
            ),
        };
        let ampdu = match md.get("lab.emulated_ampdu") {
            None => None,
            Some(n) => Some(
                u32::try_from(number("lab.emulated_ampdu", n)?)
                    .map_err(|e| bad(format!("stored lab.emulated_ampdu {n:?}: {e}")))?,
            ),
        };
        let path = lab::PathSpec::from_description(md).map_err(|e| bad(e.to_string()))?;
        Ok(LabRequest {
            path,
            topology,
            // An emulated link sets its own rate.
            rate_bps: rate_bps.filter(|_| link.is_none()),
            mtu_bytes,
            link,
            ampdu,
        })
    }

    /// One line for the plan and `--dry-run`.
    pub fn text(&self) -> String {
        let shaping = match (&self.link, self.rate_bps) {
            (Some(l), _) => format!(
                "emulating {l}{}",
                self.ampdu
                    .map(|n| format!(", A-MPDU {n}"))
                    .unwrap_or_default()
            ),
            (None, Some(r)) => format!("tbf {}", wire::quantity::format_bit_rate(r)),
            (None, None) => "unshaped".to_string(),
        };
        let path = match self.path.mtu_bytes {
            _ if self.path.is_plain() => String::new(),
            Some(m) => format!(", path MTU {m} B, drops {}", self.path.drops),
            None => format!(", drops {}", self.path.drops),
        };
        format!(
            "temporary {} lab ({shaping}, MTU {} B{path}; needs root)",
            self.topology,
            self.mtu_bytes.unwrap_or(1500)
        )
    }
}

/// The server program run in the lab's server namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabServer {
    /// `EXE server` (the dualperf binary at this path) on the lab server's IPv4 and IPv6
    /// addresses.
    Dualperf(PathBuf),
    /// `iperf3 -s` from PATH (dual-stack, one test at a time).
    Iperf3,
}

/// A running lab with a server in its server namespace.
pub struct LabTarget {
    server: Option<ServerProcess>,
    lab: Option<Lab>,
    port: u16,
    kind: LabServer,
}

impl LabTarget {
    /// Builds the lab and starts the server on the lab's IPv4 and IPv6 addresses;
    /// `notice` hears of stale labs removed first and of the new lab's warnings.
    pub fn start(
        req: &LabRequest,
        port: u16,
        kind: LabServer,
        notice: &mut dyn FnMut(&str),
    ) -> Result<LabTarget, TargetError> {
        if port == 0 {
            return Err(TargetError::Refused(
                "--port 0 cannot be used with --lab (the client must know the port)".into(),
            ));
        }
        // Temporary labs left by a dualperf that was killed (SIGKILL) go first.
        if let Ok(removed) = lab::cleanup_stale() {
            for name in removed {
                notice(&format!(
                    "removed lab {name} left by a process that no longer runs"
                ));
            }
        }
        let spec = LabSpec {
            rate_bps: req.rate_bps,
            mtu: req.mtu_bytes,
            ..LabSpec::temporary(req.topology)
        };
        let emulation = req
            .link
            .as_ref()
            .map(|link| lab::LinkEmulation::of(link, req.mtu_bytes, req.ampdu))
            .transpose();
        let lab = emulation
            .and_then(|e| Lab::create_with_path(&spec, &req.path, e.as_ref()))
            .map_err(|source| TargetError::Lab {
                what: "cannot build the lab for --lab (--lab-link)",
                source,
            })?;
        for w in lab.warnings() {
            notice(&format!("warning: {w}"));
        }
        let mut target = LabTarget {
            server: None,
            lab: Some(lab),
            port,
            kind,
        };
        target.start_server()?; // on error, `target` drops and removes the lab
        Ok(target)
    }

    fn lab(&self) -> &Lab {
        // Invariant: `lab` is only taken in `close` / `drop`, which consume the target.
        self.lab.as_ref().expect("lab present until close")
    }

    fn start_server(&mut self) -> Result<(), TargetError> {
        let lab = self.lab();
        let server = match &self.kind {
            LabServer::Dualperf(exe) => {
                let cmd = dualperf_server_command(exe, lab, self.port);
                ServerProcess::start(lab, cmd, "dualperf", "starting the lab's dualperf server")?
            }
            LabServer::Iperf3 => {
                let mut cmd = Command::new("iperf3");
                // --forceflush: its "Server listening on" line reaches the pipe at once.
                cmd.args(["-s", "--forceflush", "-p", &self.port.to_string()]);
                ServerProcess::start(
                    lab,
                    cmd,
                    "iperf3",
                    "--peer iperf3 with --lab runs `iperf3 -s` in the lab; install iperf3",
                )?
            }
        };
        self.server = Some(server);
        Ok(())
    }

    /// Kills and reaps the server process.
    fn stop_server(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.stop();
        }
    }

    pub fn client_ns(&self) -> String {
        self.lab().client_ns().to_string()
    }

    pub fn server_addr(&self, family: Family) -> IpAddr {
        self.lab().server_addr(family)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The lab's `lab.*` description plus its warnings, for the campaign's "lab" host.
    pub fn describe(&self) -> BTreeMap<String, String> {
        let lab = self.lab();
        let mut md = lab.describe();
        md.insert("lab.server_port".into(), self.port.to_string());
        md.insert(
            "lab.server".into(),
            match self.kind {
                LabServer::Dualperf(_) => "dualperf server (this binary) in the server namespace",
                LabServer::Iperf3 => "iperf3 -s (from PATH) in the server namespace",
            }
            .into(),
        );
        if !lab.warnings().is_empty() {
            md.insert("lab.warnings".into(), lab.warnings().join("; "));
        }
        md
    }

    /// Stops the server and removes the lab, reporting a lab that could not be removed.
    pub fn close(mut self) -> Result<(), TargetError> {
        self.stop_server();
        match self.lab.take() {
            Some(lab) => lab.teardown().map_err(|source| TargetError::Lab {
                what: "removing the lab",
                source,
            }),
            None => Ok(()),
        }
    }

    /// Whether the lab runs `iperf3 -s` rather than a dualperf server.
    pub fn runs_iperf3(&self) -> bool {
        self.kind == LabServer::Iperf3
    }
}

impl Drop for LabTarget {
    fn drop(&mut self) {
        self.stop_server();
        // Dropping the lab removes its namespaces (and anything still inside them).
        self.lab.take();
    }
}

/// Runs `f` on a thread inside network namespace `ns` (its own threads inherit it);
/// the calling thread stays where it is.
pub fn in_ns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> Result<T, TargetError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            lab::enter_ns(ns).map_err(|e| TargetError::Namespace(e.to_string()))?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|_| {
            Err(TargetError::Namespace(format!(
                "the client thread in namespace {ns} panicked"
            )))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lab_request_is_read_back_from_stored_metadata() {
        let mut md = BTreeMap::new();
        md.insert("lab.topology".to_string(), "client-server".to_string());
        md.insert("lab.rate_bps".to_string(), "50000000".to_string());
        md.insert("lab.mtu_bytes".to_string(), "9000".to_string());
        let req = LabRequest::from_metadata(&md).unwrap();
        assert_eq!(
            req,
            LabRequest {
                topology: Topology::ClientServer,
                rate_bps: Some(50_000_000),
                mtu_bytes: Some(9000),
                link: None,
                ampdu: None,
                path: lab::PathSpec::default(),
            }
        );
        assert_eq!(
            req.text(),
            "temporary client-server lab (tbf 50Mbit, MTU 9000 B; needs root)"
        );
        md.insert("lab.rate_bps".to_string(), "unshaped".to_string());
        assert_eq!(LabRequest::from_metadata(&md).unwrap().rate_bps, None);
        md.insert("lab.rate_bps".to_string(), "fast".to_string());
        assert!(LabRequest::from_metadata(&md).is_err());
        md.remove("lab.topology");
        assert!(LabRequest::from_metadata(&md).is_err());
    }

    #[test]
    fn a_routed_labs_path_is_read_back_so_resume_builds_the_same_lab() {
        let mut md = BTreeMap::new();
        md.insert("lab.topology".to_string(), "client-server".to_string());
        md.insert("lab.path_mtu_bytes".to_string(), "1280".to_string());
        md.insert(
            "lab.path_drops".to_string(),
            "icmp-too-big,hop-by-hop".to_string(),
        );
        let req = LabRequest::from_metadata(&md).unwrap();
        let want = lab::PathSpec {
            mtu_bytes: Some(1280),
            drops: [lab::PathDrop::IcmpTooBig, lab::PathDrop::HopByHop]
                .into_iter()
                .collect(),
        };
        assert_eq!(req.path, want);
        assert_eq!(
            req.text(),
            "temporary client-server lab (unshaped, MTU 1500 B, path MTU 1280 B, drops \
             icmp-too-big,hop-by-hop; needs root)"
        );
        md.insert("lab.path_drops".to_string(), "most".to_string());
        let e = LabRequest::from_metadata(&md).unwrap_err().to_string();
        assert!(e.contains("unknown drop rule \"most\""), "{e}");
    }

    #[test]
    fn an_emulated_link_is_read_back_so_resume_builds_the_same_lab() {
        let link = model::link::parse("802.11n:mcs=7,width=20,gi=long").unwrap();
        let mut md = BTreeMap::new();
        md.insert("lab.topology".to_string(), "p2p".to_string());
        // The emulation's rate is stored too; the link sets it again.
        md.insert("lab.rate_bps".to_string(), "65000000".to_string());
        md.insert("lab.mtu_bytes".to_string(), "1500".to_string());
        md.insert("lab.emulated_link".to_string(), link.to_string());
        md.insert("lab.emulated_ampdu".to_string(), "16".to_string());
        let req = LabRequest::from_metadata(&md).unwrap();
        assert_eq!(
            (req.link, req.ampdu, req.rate_bps),
            (Some(link), Some(16), None)
        );
        assert_eq!(
            req.text(),
            "temporary p2p lab (emulating 802.11n:mcs=7,width=20,gi=long,band=5, A-MPDU 16, MTU 1500 B; needs root)"
        );
        md.insert("lab.emulated_link".to_string(), "802.11q:1".to_string());
        assert!(LabRequest::from_metadata(&md).is_err());
    }

    #[test]
    fn in_ns_names_a_namespace_it_cannot_enter() {
        let err = in_ns("dpl-no-such-lab-client", || 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("dpl-no-such-lab-client"), "{err}");
    }
}
