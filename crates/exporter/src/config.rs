//! The exporter's configuration file (TOML): modules as blackbox_exporter's (what test a
//! probe runs), the allow-list of targets and the limits. A module's test is resolved
//! by runner as `dualperf run`'s is ([`module_run`]); its peer and default port are
//! runner's ([`runner::Peer`]).

use crate::target::{AllowList, AllowListError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wire::bounds::RangeError;
use wire::proto::TestSpecError;
use wire::quantity::QuantityError;
use wire::spec::{Bound, Family, SocketOpts, TestSpec};

pub use runner::Peer;

/// The exporter's default listen address (loopback only; 9531 is free in Prometheus'
/// default port allocation list).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9531";
/// Probes running at once, all targets together, unless the file says otherwise.
pub const DEFAULT_MAX_CONCURRENT_PROBES: usize = 4;
/// Blackbox's default: the probe must end this long before Prometheus' scrape timeout.
pub const DEFAULT_TIMEOUT_OFFSET: Duration = Duration::from_millis(500);
/// A probe's budget when the request carries no scrape timeout (a person with curl).
pub const DEFAULT_PROBE_BUDGET: Duration = Duration::from_secs(60);
/// Allowance per family for connecting, the control exchange and the result, on top of
/// the test's own duration (loopback needs well under 50 ms of it).
pub const DEFAULT_SETUP_ALLOWANCE: Duration = Duration::from_secs(1);
/// A module's test length per family when it gives neither a duration nor a count: a
/// probe answers a scrape (`dualperf run`'s 10 s would be long for one).
pub const DEFAULT_MODULE_DURATION: &str = "2s";
/// The longest test a module may ask for per family: a probe answers a scrape.
pub const MAX_TEST_DURATION: Duration = Duration::from_secs(300);
/// Most modules one file may define (a bounded configuration).
pub const MAX_MODULES: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The OS's reason is part of the message and not also a `source`: a chain printed
    /// as `a: b` would repeat it.
    #[error("cannot read the exporter configuration {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("exporter configuration {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("module '{module}': {error}")]
    Module { module: String, error: ModuleError },
    #[error("allowed_targets: {0}")]
    Allow(AllowListError),
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error("{0}")]
    Invalid(String),
}

/// A duration in the configuration that does not parse or is out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("{what}: {error}")]
    Unparsed {
        what: &'static str,
        error: QuantityError,
    },
    #[error(transparent)]
    Range(#[from] RangeError),
}

/// Why a module cannot be run; shown after "module 'NAME': ".
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    #[error("unknown peer '{0}': use dualperf or iperf3")]
    UnknownPeer(String),
    /// A test an iperf3 peer cannot run (runner's words).
    #[error("{0}")]
    Iperf3(String),
    #[error("psk_file is for dualperf servers; an iperf3 peer does not take it")]
    PskWithIperf3,
    #[error("families is empty: give [4], [6] or [4, 6]")]
    NoFamilies,
    #[error("unknown family {0}: use 4 or 6")]
    UnknownFamily(u8),
    #[error("family {0} is listed twice")]
    FamilyTwice(u8),
    #[error(
        "a module with a count needs a timeout (e.g. timeout = \"5s\"): a probe must know how \
         long it may take"
    )]
    CountWithoutTimeout,
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error(transparent)]
    Psk(#[from] wire::auth::AuthError),
    #[error(transparent)]
    UnknownTest(#[from] runner::options::UnknownTest),
    #[error(
        "test '{0}' is not served by the exporter: use tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, pmtu, frag, ext-headers, quic-stream or quic-rr"
    )]
    NotServed(String),
    #[error("size {0} is too large")]
    SizeTooLarge(u64),
    #[error("size: {0}")]
    Size(QuantityError),
    #[error("unknown direction '{0}': use forward, reverse or bidir")]
    UnknownDirection(String),
    #[error("rate: {0}")]
    Rate(QuantityError),
    /// Refused as `dualperf run` refuses the same options (runner's words).
    #[error(transparent)]
    Resolve(#[from] runner::ResolveError),
    #[error(transparent)]
    Spec(#[from] TestSpecError),
}

/// A module's `size`: a number of bytes or a text with a unit (`64K`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Quantity {
    Number(u64),
    Text(String),
}

/// One module: the test a probe runs against each family of the target.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Module {
    /// tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, pmtu, frag, ext-headers, quic-stream
    /// or quic-rr.
    pub test: String,
    /// Payload bytes per send, datagram or request.
    #[serde(default)]
    pub size: Option<Quantity>,
    /// Test length per family (`2s`, `500ms`); [`DEFAULT_MODULE_DURATION`] unless `count`
    /// is set.
    #[serde(default)]
    pub duration: Option<String>,
    /// Packets (datagrams, writes or transactions) per stream instead of a duration.
    #[serde(default)]
    pub count: Option<u64>,
    /// With `count`: the longest the test may take per family (`5s`).
    #[serde(default)]
    pub timeout: Option<String>,
    /// udp-stream only: bits/s (`100M`) or packets/s (`10kpps`).
    #[serde(default)]
    pub rate: Option<String>,
    /// forward (default), reverse or bidir (stream tests).
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub streams: Option<u16>,
    /// The peer: `dualperf` (default) or `iperf3` (an unmodified iperf3 3.x server; stream
    /// tests only; port 5201 by default).
    #[serde(default)]
    pub peer: Option<String>,
    /// Control port of the target's server when the target names none.
    #[serde(default)]
    pub port: Option<u16>,
    /// Pre-shared key file of the target's `dualperf server --psk-file`.
    #[serde(default)]
    pub psk_file: Option<PathBuf>,
    /// Families to probe: `[4, 6]` (default), `[4]` or `[6]`.
    #[serde(default)]
    pub families: Option<Vec<u8>>,
    /// How long to wait for the control connection [default: `dualperf run`'s,
    /// `runner::target::DEFAULT_CONNECT_TIMEOUT`]; a probe holds it to what the scrape's
    /// budget leaves ([`crate::probe::FamilyLimits`]), so it needs no shorter default.
    #[serde(default)]
    pub connect_timeout: Option<String>,
    /// Socket options, as `dualperf run`'s flags.
    #[serde(default)]
    pub socket: SocketOpts,
}

impl Module {
    fn new(test: &str, size: u64, rate: Option<&str>) -> Module {
        Module {
            test: test.into(),
            size: Some(Quantity::Number(size)),
            duration: Some("2s".into()),
            count: None,
            timeout: None,
            rate: rate.map(str::to_string),
            direction: None,
            streams: None,
            peer: None,
            port: None,
            psk_file: None,
            families: None,
            connect_timeout: None,
            socket: SocketOpts::default(),
        }
    }
}

/// The modules every exporter has unless its file redefines them.
pub fn builtin_modules() -> BTreeMap<String, Module> {
    BTreeMap::from([
        ("udp_rr".to_string(), Module::new("udp-rr", 64, None)),
        ("tcp_rr".to_string(), Module::new("tcp-rr", 64, None)),
        ("quic_rr".to_string(), Module::new("quic-rr", 64, None)),
        (
            "quic_stream".to_string(),
            Module::new("quic-stream", 131_072, None),
        ),
        (
            "tcp_stream".to_string(),
            Module::new("tcp-stream", 131_072, None),
        ),
        (
            "udp_stream_1408".to_string(),
            Module::new("udp-stream", 1408, Some("100M")),
        ),
        ("tcp_crr".to_string(), Module::new("tcp-crr", 64, None)),
    ])
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    allowed_targets: Option<Vec<String>>,
    #[serde(default)]
    max_concurrent_probes: Option<usize>,
    #[serde(default)]
    max_probes_per_client: Option<usize>,
    #[serde(default)]
    timeout_offset: Option<String>,
    #[serde(default)]
    setup_allowance: Option<String>,
    #[serde(default)]
    modules: BTreeMap<String, Module>,
    #[serde(default)]
    hosts: BTreeMap<String, Vec<String>>,
}

/// A checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: String,
    pub allow: AllowList,
    pub max_concurrent_probes: usize,
    /// Probes one scrape client (its address; an IPv6 one by /64) may have running at
    /// once; by default one less than `max_concurrent_probes`, so one client cannot take
    /// every slot.
    pub max_probes_per_client: usize,
    pub timeout_offset: Duration,
    pub setup_allowance: Duration,
    pub modules: BTreeMap<String, ProbeModule>,
    /// Names the exporter resolves itself, before DNS (as /etc/hosts, for servers
    /// without DNS records): lower-case name → addresses.
    pub hosts: BTreeMap<String, Vec<std::net::IpAddr>>,
}

/// A module made ready: one resolved run (a campaign of one test, as `dualperf run`
/// makes) per family, and what a probe needs besides.
#[derive(Debug, Clone)]
pub struct ProbeModule {
    pub name: String,
    pub peer: Peer,
    /// The run of each family, in the module's order.
    pub runs: Vec<runner::Single>,
    pub port: u16,
    pub connect_timeout: Duration,
    pub psk: Option<wire::auth::Psk>,
    /// The longest one family's test may run (its duration, or the module's timeout).
    pub test_time: Duration,
}

impl ProbeModule {
    /// The test of each family, in the module's order.
    pub fn specs(&self) -> impl Iterator<Item = &TestSpec> {
        self.runs.iter().map(|r| &r.cell().test)
    }
}

impl Default for Config {
    fn default() -> Config {
        // Built-in modules are checked by a test; a failure here would be a bug.
        Config::from_toml_str("", Path::new("(built-in)"))
            .unwrap_or_else(|e| unreachable!("the built-in exporter configuration is invalid: {e}"))
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Config::from_toml_str(&text, path)
    }

    pub fn from_toml_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file: FileConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if file.modules.len() > MAX_MODULES {
            return Err(ConfigError::Invalid(format!(
                "at most {MAX_MODULES} modules, not {}",
                file.modules.len()
            )));
        }
        let mut modules = builtin_modules();
        modules.extend(file.modules);
        let modules = modules
            .into_iter()
            .map(|(name, m)| {
                let ready = ready_module(&name, &m).map_err(|error| ConfigError::Module {
                    module: name.clone(),
                    error,
                })?;
                Ok((name, ready))
            })
            .collect::<Result<BTreeMap<_, _>, ConfigError>>()?;
        let allow = match &file.allowed_targets {
            None => AllowList::loopback(),
            Some(list) => AllowList::parse(list).map_err(ConfigError::Allow)?,
        };
        let max = file
            .max_concurrent_probes
            .unwrap_or(DEFAULT_MAX_CONCURRENT_PROBES);
        if !(1..=64).contains(&max) {
            return Err(ConfigError::Invalid(format!(
                "max_concurrent_probes must be between 1 and 64, not {max}"
            )));
        }
        let per_client = file
            .max_probes_per_client
            .unwrap_or(max.saturating_sub(1).max(1));
        if !(1..=max).contains(&per_client) {
            return Err(ConfigError::Invalid(format!(
                "max_probes_per_client must be between 1 and max_concurrent_probes ({max}), not {per_client}"
            )));
        }
        let secs = |what: &'static str, v: &Option<String>, default: Duration, max: Duration| {
            v.as_deref()
                .map(|s| parse_duration(what, s, Duration::ZERO, max))
                .transpose()
                .map(|d| d.unwrap_or(default))
        };
        if file.hosts.len() > MAX_MODULES * 16 {
            return Err(ConfigError::Invalid(format!(
                "at most {} hosts",
                MAX_MODULES * 16
            )));
        }
        let hosts = file
            .hosts
            .into_iter()
            .map(|(name, addrs)| {
                let ips = addrs
                    .iter()
                    .take(16)
                    .map(|a| {
                        a.parse().map_err(|_| {
                            ConfigError::Invalid(format!(
                                "hosts.\"{name}\": '{a}' is not an IP address"
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((name.to_ascii_lowercase(), ips))
            })
            .collect::<Result<BTreeMap<_, _>, ConfigError>>()?;
        Ok(Config {
            hosts,
            listen: file.listen.unwrap_or_else(|| DEFAULT_LISTEN.to_string()),
            allow,
            max_concurrent_probes: max,
            max_probes_per_client: per_client,
            timeout_offset: secs(
                "timeout_offset",
                &file.timeout_offset,
                DEFAULT_TIMEOUT_OFFSET,
                Duration::from_secs(10),
            )?,
            setup_allowance: secs(
                "setup_allowance",
                &file.setup_allowance,
                DEFAULT_SETUP_ALLOWANCE,
                Duration::from_secs(60),
            )?,
            modules,
        })
    }
}

fn parse_duration(
    what: &'static str,
    s: &str,
    min: Duration,
    max: Duration,
) -> Result<Duration, DurationError> {
    let secs = wire::quantity::parse_duration_s(s)
        .map_err(|error| DurationError::Unparsed { what, error })?;
    Ok(wire::bounds::secs_to_duration(what, secs, min, max)?)
}

fn ready_module(name: &str, m: &Module) -> Result<ProbeModule, ModuleError> {
    let peer = match m.peer.as_deref().unwrap_or("dualperf") {
        "dualperf" => Peer::Dualperf,
        "iperf3" => Peer::Iperf3,
        other => return Err(ModuleError::UnknownPeer(other.to_string())),
    };
    if peer == Peer::Iperf3 && m.psk_file.is_some() {
        return Err(ModuleError::PskWithIperf3);
    }
    let families = match m.families.as_deref() {
        None => vec![Family::V4, Family::V6],
        Some([]) => return Err(ModuleError::NoFamilies),
        Some(list) => {
            let mut out: Vec<Family> = Vec::new();
            for n in list {
                let f = match n {
                    4 => Family::V4,
                    6 => Family::V6,
                    _ => return Err(ModuleError::UnknownFamily(*n)),
                };
                if out.contains(&f) {
                    return Err(ModuleError::FamilyTwice(*n));
                }
                out.push(f);
            }
            out
        }
    };
    let runs = families
        .iter()
        .map(|&f| module_run(m, f))
        .collect::<Result<Vec<_>, _>>()?;
    if peer == Peer::Iperf3 {
        if let Some(why) = runs
            .first()
            .and_then(|r| runner::target::iperf3::refuse_rr(r.spec()))
        {
            return Err(ModuleError::Iperf3(why));
        }
    }
    let test_time = match (m.count, &m.timeout) {
        (Some(_), Some(t)) => parse_duration("timeout", t, Duration::ZERO, MAX_TEST_DURATION)?,
        (Some(_), None) => return Err(ModuleError::CountWithoutTimeout),
        // Without a count every test's bound is its duration; families is never empty.
        (None, _) => match runs.first().map(|r| r.cell().test.bound) {
            Some(Bound::DurationNs(ns)) => Duration::from_nanos(ns),
            _ => return Err(ModuleError::NoFamilies),
        },
    };
    let connect_timeout = m
        .connect_timeout
        .as_deref()
        .map(|s| {
            parse_duration(
                "connect_timeout",
                s,
                Duration::from_millis(10),
                Duration::from_secs(60),
            )
        })
        .transpose()?
        .unwrap_or(runner::target::DEFAULT_CONNECT_TIMEOUT);
    let psk = m
        .psk_file
        .as_deref()
        .map(wire::auth::Psk::load)
        .transpose()?;
    Ok(ProbeModule {
        name: name.to_string(),
        peer,
        runs,
        port: m.port.unwrap_or(peer.default_port()),
        connect_timeout,
        psk,
        test_time,
    })
}

/// A module's options as `dualperf run`'s: the test, its size, and the shared options
/// (a probe's own default length, [`DEFAULT_MODULE_DURATION`], when neither a duration
/// nor a count is given).
pub fn module_options(
    m: &Module,
    family: Family,
) -> Result<(runner::TestOptions, runner::OneTest), ModuleError> {
    let test: runner::RunTest = m.test.parse()?;
    if test == runner::RunTest::Loaded {
        return Err(ModuleError::NotServed(m.test.clone()));
    }
    let size_bytes = match &m.size {
        None => None,
        Some(Quantity::Number(n)) => {
            Some(u32::try_from(*n).map_err(|_| ModuleError::SizeTooLarge(*n))?)
        }
        Some(Quantity::Text(t)) => {
            Some(wire::quantity::parse_bytes_u32(t).map_err(ModuleError::Size)?)
        }
    };
    let duration = match (&m.duration, m.count) {
        (None, Some(_)) => None,
        (d, _) => Some(parse_duration(
            "duration",
            d.as_deref().unwrap_or(DEFAULT_MODULE_DURATION),
            Duration::from_millis(1),
            MAX_TEST_DURATION,
        )?),
    };
    let (reverse, bidir) = match m.direction.as_deref().unwrap_or("forward") {
        "forward" => (false, false),
        "reverse" => (true, false),
        "bidir" => (false, true),
        other => return Err(ModuleError::UnknownDirection(other.to_string())),
    };
    let rate = m
        .rate
        .as_deref()
        .map(|r| wire::quantity::parse_rate(r).map_err(ModuleError::Rate))
        .transpose()?;
    let s = &m.socket;
    let options = runner::TestOptions {
        duration_s: duration.map(|d| d.as_secs_f64()),
        count: m.count,
        reverse,
        bidir,
        streams: m.streams,
        rate,
        sndbuf_bytes: s.sndbuf_bytes.map(u64::from),
        rcvbuf_bytes: s.rcvbuf_bytes.map(u64::from),
        nodelay: s.nodelay,
        mss_bytes: s.mss_bytes,
        tos: s.tos,
        flowlabel: s.flowlabel,
        congestion: s.congestion.clone(),
        dont_fragment: s.dont_fragment,
        ..runner::TestOptions::default()
    };
    let one = runner::OneTest {
        test,
        family,
        size_bytes,
        traffic_seed: None,
        rate_search: false,
    };
    Ok((options, one))
}

/// A module's test for one family: its options resolved by runner as `dualperf run`'s
/// are (so a module gets run's defaults and is refused for run's reasons, in run's
/// words), then checked by the protocol's own `validate_spec`, as a server checks it.
pub fn module_run(m: &Module, family: Family) -> Result<runner::Single, ModuleError> {
    let (options, one) = module_options(m, family)?;
    let single = runner::resolve_single(&options, &one)?;
    wire::proto::validate_spec(&single.cell().test)?;
    // A probe waits out a busy iperf3 server within its budget.
    Ok(single.waiting())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::spec::TestKind;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::from_toml_str(text, Path::new("test.toml"))
    }

    #[test]
    fn builtin_modules_are_valid_and_probe_both_families() {
        let c = parse("").unwrap();
        for name in [
            "udp_rr",
            "tcp_rr",
            "tcp_stream",
            "udp_stream_1408",
            "tcp_crr",
        ] {
            let m = &c.modules[name];
            let fams: Vec<Family> = m.specs().map(|s| s.family).collect();
            assert_eq!(fams, [Family::V4, Family::V6], "{name}");
            assert_eq!(m.test_time, Duration::from_secs(2), "{name}");
        }
        assert_eq!(c.listen, DEFAULT_LISTEN);
        assert!(c.allow.is_loopback_only());
    }

    #[test]
    fn a_module_becomes_the_spec_run_would_build() {
        let c = parse(
            r#"
            [modules.small]
            test = "udp-stream"
            size = "512"
            duration = "500ms"
            rate = "10M"
            families = [6]
            socket = { tos = 16 }
            "#,
        )
        .unwrap();
        let m = &c.modules["small"];
        assert_eq!(m.runs.len(), 1);
        let s = &m.runs[0].cell().test;
        assert_eq!(s.kind, TestKind::UdpStream);
        assert_eq!(s.family, Family::V6);
        assert_eq!(s.payload_bytes, 512);
        assert_eq!(s.bound, Bound::DurationNs(500_000_000));
        assert_eq!(s.rate, Some(wire::spec::Rate::BitsPerSec(10_000_000)));
        assert_eq!(s.socket.tos, Some(16));
        assert_eq!(m.test_time, Duration::from_millis(500));
    }

    #[test]
    fn a_pmtu_module_probes_both_families_with_the_test_of_run() {
        let c = parse("[modules.pmtu]\ntest = \"pmtu\"\nduration = \"20s\"").unwrap();
        let m = &c.modules["pmtu"];
        let kinds: Vec<_> = m.runs.iter().map(|r| r.cell().test.kind).collect();
        assert_eq!(kinds, vec![TestKind::Pmtu, TestKind::Pmtu]);
    }

    #[test]
    fn config_errors_name_the_module_and_the_fix() {
        let cases = [
            ("[modules.a]\ntest = \"sctp\"", "module 'a'"),
            ("[modules.a]\ntest = \"rrul\"", "not served by the exporter"),
            (
                "[modules.a]\ntest = \"udp-rr\"\ncount = 10",
                "needs a timeout",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\ncount = 10\nduration = \"1s\"\ntimeout = \"2s\"",
                "not both",
            ),
            (
                "[modules.a]\ntest = \"udp-stream\"\nsize = 70000",
                "payload",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\nfamilies = [5]",
                "unknown family 5",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\nfamilies = []",
                "families is empty",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\nduration = \"1h\"",
                "duration",
            ),
            (
                "[modules.a]\ntest = \"tcp-stream\"\nrate = \"1M\"",
                "--rate applies to udp-stream only",
            ),
            (
                "[modules.a]\ntest = \"tcp-rr\"\npeer = \"iperf3\"",
                "iperf3 has no request/response test",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\npeer = \"ftp\"",
                "unknown peer",
            ),
            (
                "[modules.a]\ntest = \"udp-rr\"\ncolour = 1",
                "unknown field",
            ),
            ("allowed_targets = [\"10.0.0.0/33\"]", "allowed_targets"),
            ("max_concurrent_probes = 0", "between 1 and 64"),
            (
                "max_concurrent_probes = 2\nmax_probes_per_client = 3",
                "max_probes_per_client must be between 1 and max_concurrent_probes (2), not 3",
            ),
            ("max_probes_per_client = 0", "between 1 and"),
            ("[hosts]\n\"a.test\" = [\"1.2.3\"]", "not an IP address"),
            (
                "[modules.a]\ntest = \"udp-rr\"\npsk_file = \"/nonexistent/psk\"",
                "module 'a'",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    /// The message and its chain of sources, as the binary prints an error (`{:#}`).
    fn chain_text(e: &dyn std::error::Error) -> String {
        let mut text = e.to_string();
        let mut next = e.source();
        while let Some(s) = next {
            text = format!("{text}: {s}");
            next = s.source();
        }
        text
    }

    #[test]
    fn a_missing_file_is_named_with_the_os_reason_once() {
        let path = Path::new("/nonexistent-dualperf-dir/exporter.toml");
        let e = Config::load(path).unwrap_err();
        let text = chain_text(&e);
        assert!(
            text.starts_with(
                "cannot read the exporter configuration /nonexistent-dualperf-dir/exporter.toml: "
            ),
            "{text}"
        );
        assert_eq!(text.matches("(os error").count(), 1, "{text}");
        let Err(e) = crate::webconfig::WebConfig::load(path) else {
            panic!("{} loaded", path.display());
        };
        let text = chain_text(&e);
        assert_eq!(text.matches("(os error").count(), 1, "{text}");
    }

    #[test]
    fn an_iperf3_module_defaults_to_port_5201() {
        let c = parse("[modules.i]\ntest = \"tcp-stream\"\npeer = \"iperf3\"").unwrap();
        assert_eq!(c.modules["i"].peer, Peer::Iperf3);
        assert_eq!(c.modules["i"].port, runner::target::IPERF3_DEFAULT_PORT);
        assert_eq!(c.modules["tcp_rr"].port, Peer::Dualperf.default_port());
        assert_eq!(c.modules["tcp_rr"].peer, Peer::Dualperf);
    }

    /// What `dualperf run` makes of the same options: its error's words, or its test.
    fn run_of(opts: &runner::TestOptions, one: &runner::OneTest) -> Result<TestSpec, String> {
        match runner::resolve_run(opts, one) {
            Ok(runner::RunSpec::One(t)) => Ok(t),
            Ok(other) => panic!("not one test: {other:?}"),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn a_module_is_refused_for_the_reasons_and_in_the_words_of_run() {
        let cases = [
            ("test = \"tcp-stream\"\nrate = \"1M\"", Family::V4),
            ("test = \"udp-rr\"\nrate = \"100pps\"", Family::V4),
            (
                "test = \"udp-stream\"\nsocket = { flowlabel = 5 }",
                Family::V4,
            ),
            (
                "test = \"udp-rr\"\ncount = 5\nduration = \"1s\"\ntimeout = \"2s\"",
                Family::V4,
            ),
        ];
        for (body, family) in cases {
            let text = format!("[modules.a]\n{body}");
            let m: Module = toml::from_str(body).unwrap();
            let (opts, one) = module_options(&m, family).unwrap();
            let run = run_of(&opts, &one).expect_err("run refuses it too");
            let err = parse(&text).unwrap_err().to_string();
            assert_eq!(err, format!("module 'a': {run}"), "{body}");
        }
    }

    #[test]
    fn a_modules_defaults_are_those_of_run_for_the_same_test() {
        for test in ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr", "tcp-crr"] {
            let c = parse(&format!("[modules.a]\ntest = \"{test}\"")).unwrap();
            let m = &c.modules["a"];
            for (i, family) in [Family::V4, Family::V6].into_iter().enumerate() {
                let opts = runner::TestOptions {
                    duration_s: Some(2.0),
                    ..runner::TestOptions::default()
                };
                let one = runner::OneTest {
                    test: test.parse().unwrap(),
                    family,
                    size_bytes: None,
                    traffic_seed: None,
                    rate_search: false,
                };
                let run = run_of(&opts, &one).unwrap();
                assert_eq!(m.runs[i].cell().test, run, "{test} {family}");
            }
        }
    }

    /// One connect-timeout default, `run`'s: a probe's budget shortens it where the scrape
    /// leaves less time.
    #[test]
    fn a_modules_connect_timeout_defaults_to_runs() {
        let c = parse("[modules.m]\ntest = \"tcp-rr\"\n").unwrap();
        for m in c.modules.values() {
            assert_eq!(
                m.connect_timeout,
                runner::target::DEFAULT_CONNECT_TIMEOUT,
                "{}",
                m.name
            );
        }
        let c = parse("[modules.m]\ntest = \"tcp-rr\"\nconnect_timeout = \"3s\"\n").unwrap();
        assert_eq!(c.modules["m"].connect_timeout, Duration::from_secs(3));
    }

    #[test]
    fn a_file_redefines_a_builtin_module() {
        let c =
            parse("[modules.udp_rr]\ntest = \"udp-rr\"\nsize = 200\nduration = \"1s\"").unwrap();
        assert_eq!(c.modules["udp_rr"].runs[0].cell().test.payload_bytes, 200);
        assert_eq!(c.modules.len(), builtin_modules().len());
    }
}
