//! The [`Lab`] handle: builds a planned topology step by step (undoing everything on a
//! failure), answers where the client and server live, describes itself for campaign
//! metadata, and tears down on drop. Also lists and destroys labs by name, across processes.

use crate::exec::{is_qdisc_unavailable, run, run_with_stdin};
use crate::guard::{add_ns_registered, delete_ns};
use crate::ns::{write_sysctl, NETNS_DIR};
use crate::plan::{ns_name, parse_ns_name, plan_with_path, Plan, Role, Step, TBF_LATENCY_MS};
use crate::{LabError, LabSpec, LinkEmulation, PathSpec, Topology};
use std::collections::BTreeMap;
use std::net::IpAddr;
use wire::quantity::format_bit_rate as format_rate;
use wire::spec::Family;

/// A running lab. Dropping it removes its namespaces (and the veths and processes in
/// them); [`Lab::teardown`] does the same and reports errors.
#[derive(Debug)]
pub struct Lab {
    plan: Plan,
    /// Namespaces created so far (all of them once `create` returns).
    created_ns: Vec<String>,
    /// Human-readable problems that did not stop the lab (e.g. shaping unavailable).
    warnings: Vec<String>,
    /// Devices that really carry the tbf shaper.
    shaped: Vec<(String, &'static str)>,
    /// The emulated link the shaper stands for, if any.
    emulation: Option<LinkEmulation>,
    torn_down: bool,
}

impl Lab {
    /// Builds the lab described by `spec`. Refuses a name that exists; on any error,
    /// removes whatever was already created. Installs the Ctrl-C guard (see
    /// [`crate::install_signal_guard`]).
    pub fn create(spec: &LabSpec) -> Result<Lab, LabError> {
        Lab::create_with_fault(spec, None, None)
    }

    /// Builds the lab with each host's egress shaped as `emulation` says: tbf at its
    /// rate (which replaces `spec.rate_bps`) plus its per-packet overhead. The
    /// emulation is recorded in [`Lab::describe`].
    pub fn create_emulated(spec: &LabSpec, emulation: &LinkEmulation) -> Result<Lab, LabError> {
        crate::check_rate_bps(emulation.rate_bps)?;
        let spec = LabSpec {
            rate_bps: Some(emulation.rate_bps),
            ..spec.clone()
        };
        Lab::build(&spec, &PathSpec::default(), Some(emulation), None, None)
    }

    /// Builds a client-server ("routed") lab whose router narrows the path MTU toward
    /// the server and drops what `path` says (see [`PathSpec`]), with each host's egress
    /// shaped as `emulation` says when given (as [`Lab::create_emulated`]). Refuses a
    /// path on the p2p topology, and drop rules when `nft` is missing
    /// ([`LabError::NftMissing`]). The path is recorded in [`Lab::describe`].
    pub fn create_with_path(
        spec: &LabSpec,
        path: &PathSpec,
        emulation: Option<&LinkEmulation>,
    ) -> Result<Lab, LabError> {
        let spec = match emulation {
            Some(e) => {
                crate::check_rate_bps(e.rate_bps)?;
                LabSpec {
                    rate_bps: Some(e.rate_bps),
                    ..spec.clone()
                }
            }
            None => spec.clone(),
        };
        Lab::build(&spec, path, emulation, None, None)
    }

    /// Test hook: fail on purpose at setup step `fail_at_step`, and/or use qdisc kind
    /// `qdisc` instead of tbf (to exercise the missing-qdisc path).
    #[doc(hidden)]
    pub fn create_with_fault(
        spec: &LabSpec,
        fail_at_step: Option<usize>,
        qdisc: Option<&str>,
    ) -> Result<Lab, LabError> {
        Lab::build(spec, &PathSpec::default(), None, fail_at_step, qdisc)
    }

    fn build(
        spec: &LabSpec,
        path: &PathSpec,
        emulation: Option<&LinkEmulation>,
        fail_at_step: Option<usize>,
        qdisc: Option<&str>,
    ) -> Result<Lab, LabError> {
        let mut plan = plan_with_path(spec, path)?;
        if let Some(e) = emulation {
            // tbf adds the overhead once per skb: a TSO/GSO batch of segments would pay
            // it once. One segment per skb makes TCP hand the qdisc one packet at a time.
            let mut steps = Vec::with_capacity(plan.steps.len() + 2);
            for mut step in std::mem::take(&mut plan.steps) {
                if let Step::Shape { ns, dev, args } = &mut step {
                    args.extend(["overhead".to_string(), e.overhead_bytes.to_string()]);
                    steps.push(Step::Ip {
                        ns: ns.clone(),
                        args: ["link", "set", "dev", dev, "gso_max_segs", "1"]
                            .map(String::from)
                            .to_vec(),
                    });
                }
                steps.push(step);
            }
            plan.steps = steps;
        }
        crate::check_privileges()?;
        if plan.steps.iter().any(|s| matches!(s, Step::Nft { .. })) {
            crate::exec::check_nft()?;
        }
        for role in Role::ALL {
            let ns = ns_name(&spec.name, role);
            if std::path::Path::new(NETNS_DIR).join(&ns).exists() {
                return Err(LabError::Exists {
                    name: spec.name.clone(),
                    ns,
                });
            }
        }
        crate::install_signal_guard();
        let mut lab = Lab {
            plan,
            created_ns: Vec::new(),
            warnings: Vec::new(),
            shaped: Vec::new(),
            emulation: emulation.cloned(),
            torn_down: false,
        };
        let steps = lab.plan.steps.clone();
        for (i, step) in steps.iter().enumerate() {
            if fail_at_step == Some(i) {
                return Err(LabError::Injected(i)); // `lab` drops here and tears down
            }
            lab.apply(step, qdisc)?;
        }
        Ok(lab)
    }

    fn apply(&mut self, step: &Step, qdisc: Option<&str>) -> Result<(), LabError> {
        match step {
            Step::AddNs(ns) => {
                add_ns_registered(ns)?;
                self.created_ns.push(ns.clone());
            }
            Step::Sysctl { ns, key, value } => write_sysctl(ns, key, value)?,
            Step::Ip { ns, args } => {
                let mut full = vec!["-n".to_string(), ns.clone()];
                full.extend(args.iter().cloned());
                run("ip", &full).map_err(|e| explain_ip_error(e, ns, args))?;
            }
            Step::Shape { ns, dev, args } => {
                let mut args = args.clone();
                if let Some(kind) = qdisc {
                    args[0] = kind.to_string();
                }
                let mut full = vec![
                    "-n".to_string(),
                    ns.clone(),
                    "qdisc".into(),
                    "add".into(),
                    "dev".into(),
                    dev.to_string(),
                    "root".into(),
                ];
                full.extend(args.iter().cloned());
                match run("tc", &full) {
                    Ok(_) => self.shaped.push((ns.clone(), *dev)),
                    Err(LabError::Command { stderr, .. }) if is_qdisc_unavailable(&stderr) => self.warnings.push(format!(
                        "qdisc {} is not available in this kernel ({stderr}); {dev} in {ns} is NOT shaped",
                        args[0]
                    )),
                    Err(e) => return Err(e),
                }
            }
            Step::WaitUp { ns, dev } => wait_up(ns, dev)?,
            Step::Nft { ns, ruleset } => {
                let args = ["netns", "exec", ns, "nft", "-f", "-"].map(String::from);
                run_with_stdin("ip", &args, ruleset)?;
            }
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.plan.spec.name
    }

    pub fn spec(&self) -> &LabSpec {
        &self.plan.spec
    }

    /// What the router does to the path (plain forwarding unless built with
    /// [`Lab::create_with_path`]).
    pub fn path(&self) -> &PathSpec {
        &self.plan.path
    }

    pub fn topology(&self) -> Topology {
        self.plan.spec.topology
    }

    /// The namespace to run the client (traffic sender) in.
    pub fn client_ns(&self) -> &str {
        self.ns_of(Role::Client)
    }

    /// The namespace to run the server in.
    pub fn server_ns(&self) -> &str {
        self.ns_of(Role::Server)
    }

    /// The router namespace (client-server topology only).
    pub fn router_ns(&self) -> Option<&str> {
        self.plan.end(Role::Router).map(|e| e.ns.as_str())
    }

    fn ns_of(&self, role: Role) -> &str {
        self.plan.end(role).map(|e| e.ns.as_str()).unwrap_or("")
    }

    /// The address a client in [`Lab::client_ns`] connects to.
    pub fn server_addr(&self, fam: Family) -> IpAddr {
        self.addr_of(Role::Server, fam)
    }

    /// The router's address on the client's link (the client's gateway, and the source
    /// of the ICMP errors the router sends the client); unspecified without a router.
    pub fn router_addr(&self, fam: Family) -> IpAddr {
        self.addr_of(Role::Router, fam)
    }

    /// The client's own address (what the server sees).
    pub fn client_addr(&self, fam: Family) -> IpAddr {
        self.addr_of(Role::Client, fam)
    }

    fn addr_of(&self, role: Role, fam: Family) -> IpAddr {
        match (self.plan.end(role), fam) {
            (Some(e), Family::V4) => IpAddr::V4(e.v4),
            (Some(e), Family::V6) => IpAddr::V6(e.v6),
            (None, Family::V4) => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            (None, Family::V6) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        }
    }

    /// Whether the requested rate is really applied (false when unshaped or when the
    /// kernel lacks tbf).
    pub fn is_shaped(&self) -> bool {
        !self.shaped.is_empty()
    }

    /// Problems that did not stop the lab; show them to the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Topology, rate, MTU, namespaces and addresses, and (when the router does more than
    /// forward) the path MTU and drop rules (`lab.path_mtu_bytes`, `lab.path_drops`,
    /// `lab.path_rules`, `lab.path`; [`PathSpec::from_description`] reads them back), as
    /// `lab.*` keys for campaign metadata.
    pub fn describe(&self) -> BTreeMap<String, String> {
        let spec = &self.plan.spec;
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: String| m.insert(format!("lab.{k}"), v);
        put("name", spec.name.clone());
        put("topology", spec.topology.name().into());
        put(
            "rate_bps",
            spec.rate_bps.map_or("unshaped".into(), |r| r.to_string()),
        );
        let shaping = match spec.rate_bps {
            None => "none".to_string(),
            Some(_) if self.shaped.is_empty() => {
                "requested but unavailable (no tbf in this kernel)".to_string()
            }
            Some(r) => format!(
                "tbf rate {} burst {} latency {TBF_LATENCY_MS}ms{} on egress of {}",
                format_rate(r),
                self.burst_bytes().unwrap_or(0),
                self.emulation
                    .as_ref()
                    .map(|e| format!(" overhead {}", e.overhead_bytes))
                    .unwrap_or_default(),
                self.shaped
                    .iter()
                    .map(|(ns, dev)| format!("{ns}/{dev}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        put("shaping", shaping);
        if let Some(b) = self.burst_bytes().filter(|_| !self.shaped.is_empty()) {
            // The report counts the bucket into the link's ceiling (rate × T + burst).
            put("burst_bytes", b.to_string());
        }
        if let Some(e) = &self.emulation {
            put("emulated_link", e.link.clone());
            put("emulation_overhead_bytes", e.overhead_bytes.to_string());
            if let Some(n) = e.ampdu {
                put("emulated_ampdu", n.to_string());
            }
            put(
                "emulation",
                format!(
                    "tbf at the link rate plus {} bytes per packet for {}; GSO off on the \
                     shaped veths (gso_max_segs 1: TCP hands tbf one segment at a time; a UDP \
                     sender's own GSO batches still pay the overhead once per batch); leaves \
                     out {}",
                    e.overhead_bytes, e.overhead_covers, e.leaves_out
                ),
            );
        }
        put("mtu_bytes", spec.mtu.unwrap_or(1500).to_string());
        put("link", "veth".into());
        for role in Role::ALL {
            let Some(e) = self.plan.end(role) else {
                continue;
            };
            put(&format!("{}_ns", role.name()), e.ns.clone());
            if role != Role::Router {
                put(&format!("{}_addr_v4", role.name()), e.v4.to_string());
                put(&format!("{}_addr_v6", role.name()), e.v6.to_string());
            }
        }
        if let (false, Some(router)) = (self.plan.path.is_plain(), self.router_ns()) {
            self.plan.path.describe_into(&mut m, router);
        }
        m
    }

    fn burst_bytes(&self) -> Option<u64> {
        self.plan.steps.iter().find_map(|s| match s {
            Step::Shape { args, .. } => args.get(4)?.parse().ok(),
            _ => None,
        })
    }

    /// Keeps the lab after this handle and this process are gone (`dualperf lab up`):
    /// neither drop nor the Ctrl-C guard removes it; `dualperf lab down NAME` does.
    pub fn persist(mut self) -> String {
        for ns in &self.created_ns {
            crate::guard::forget_ns(ns);
        }
        self.torn_down = true;
        self.plan.spec.name.clone()
    }

    /// Removes the lab now and reports any namespace that could not be removed.
    pub fn teardown(mut self) -> Result<(), LabError> {
        self.teardown_inner()
    }

    fn teardown_inner(&mut self) -> Result<(), LabError> {
        if self.torn_down {
            return Ok(());
        }
        self.torn_down = true;
        let errors: Vec<String> = self
            .created_ns
            .iter()
            .rev()
            .filter_map(|ns| delete_ns(ns).err().map(|e| format!("{ns}: {e}")))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(LabError::Teardown {
                name: self.plan.spec.name.clone(),
                errors: errors.join("; "),
            })
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Errors cannot be returned from drop; `teardown` reports them. A namespace that
        // could not be removed stays in the registry, so the signal guard retries it.
        let _ = self.teardown_inner();
    }
}

/// Polls `ip link` until `dev` in `ns` is operationally UP (at most 5 s).
fn wait_up(ns: &str, dev: &str) -> Result<(), LabError> {
    let args: Vec<String> = ["-n", ns, "-o", "link", "show", "dev", dev]
        .map(String::from)
        .to_vec();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let out = run("ip", &args)?;
        if word_after(&out, "state").as_deref() == Some("UP") {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(LabError::Command {
                cmd: format!("ip {}", args.join(" ")),
                stderr: format!("{dev} did not come up within 5 s: {}", out.trim()),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// IPv6 address changes fail with "Permission denied" when IPv6 is disabled on the device.
fn explain_ip_error(err: LabError, ns: &str, args: &[String]) -> LabError {
    match err {
        LabError::Command { stderr, .. }
            if args.first().map(String::as_str) == Some("-6")
                && stderr.contains("Permission denied") =>
        {
            LabError::Ipv6Unavailable {
                ns: ns.to_string(),
                detail: stderr,
            }
        }
        other => other,
    }
}

/// A lab found on this machine by its namespaces (it may belong to another process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabInfo {
    pub name: String,
    /// `None` when the namespaces present match no topology (a half-removed lab).
    pub topology: Option<Topology>,
    pub namespaces: Vec<String>,
    /// The client veth's MTU, as `ip link` shows it.
    pub mtu_bytes: Option<u32>,
    /// The client egress qdisc rate, as `tc` prints it (e.g. `100Mbit`).
    pub rate: Option<String>,
}

/// Every lab on this machine (namespaces named `dpl-NAME-ROLE`), sorted by name.
pub fn list_labs() -> Result<Vec<LabInfo>, LabError> {
    let mut by_name: BTreeMap<String, Vec<(Role, String)>> = BTreeMap::new();
    let dir = match std::fs::read_dir(NETNS_DIR) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(LabError::Io {
                what: format!("cannot read {NETNS_DIR}"),
                source,
            })
        }
    };
    for entry in dir.flatten() {
        let ns = entry.file_name().to_string_lossy().into_owned();
        if let Some((name, role)) = parse_ns_name(&ns) {
            by_name.entry(name).or_default().push((role, ns));
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(name, mut nss)| {
            nss.sort();
            let roles: Vec<Role> = nss.iter().map(|(r, _)| *r).collect();
            let topology = match roles.as_slice() {
                [Role::Client, Role::Server] => Some(Topology::P2p),
                [Role::Client, Role::Server, Role::Router] => Some(Topology::ClientServer),
                _ => None,
            };
            let client = ns_name(&name, Role::Client);
            let (mtu_bytes, rate) = if roles.contains(&Role::Client) {
                probe_link(&client)
            } else {
                (None, None)
            };
            LabInfo {
                name,
                topology,
                namespaces: nss.into_iter().map(|(_, ns)| ns).collect(),
                mtu_bytes,
                rate,
            }
        })
        .collect())
}

/// MTU and tbf rate of the client veth `dp-c` inside `client_ns`.
fn probe_link(client_ns: &str) -> (Option<u32>, Option<String>) {
    let args = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mtu = run(
        "ip",
        &args(&["-n", client_ns, "-o", "link", "show", "dev", "dp-c"]),
    )
    .ok()
    .and_then(|out| word_after(&out, "mtu")?.parse().ok());
    let rate = run(
        "tc",
        &args(&["-n", client_ns, "qdisc", "show", "dev", "dp-c"]),
    )
    .ok()
    .and_then(|out| {
        let line = out.lines().find(|l| l.contains("tbf"))?;
        word_after(line, "rate")
    });
    (mtu, rate)
}

fn word_after(text: &str, key: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    words.find(|w| *w == key)?;
    words.next().map(String::from)
}

/// Removes the lab called `name` (all its namespaces, veths and the processes inside).
pub fn destroy(name: &str) -> Result<(), LabError> {
    crate::validate_name(name)?;
    let present: Vec<String> = Role::ALL
        .into_iter()
        .map(|r| ns_name(name, r))
        .filter(|ns| std::path::Path::new(NETNS_DIR).join(ns).exists())
        .collect();
    if present.is_empty() {
        return Err(LabError::NotFound(name.to_string()));
    }
    crate::check_privileges()?;
    let errors: Vec<String> = present
        .iter()
        .filter_map(|ns| delete_ns(ns).err().map(|e| format!("{ns}: {e}")))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(LabError::Teardown {
            name: name.to_string(),
            errors: errors.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_after_reads_ip_and_tc_output() {
        let link = "7: dp-c@if6: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc tbf state UP";
        assert_eq!(word_after(link, "mtu").as_deref(), Some("9000"));
        let tc = "qdisc tbf 8001: root refcnt 2 rate 50Mbit burst 64Kb lat 50ms";
        assert_eq!(word_after(tc, "rate").as_deref(), Some("50Mbit"));
        assert_eq!(word_after(tc, "nothing"), None);
    }
}
