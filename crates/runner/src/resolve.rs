//! Options into tests: the one place where what a user asked for (preset, spec file,
//! options) becomes a checked [`StudySpec`], and where `dualperf run`'s single test is
//! taken from a study of one cell, so both commands share every default and limit.

use crate::options::{OneTest, RunTest, StudyOptions, TestOptions};
use crate::single::{RunSpec, Single};
use crate::ResolveError;
use std::path::Path;
use study::spec::SizesField;
use study::{SpecFile, StudySpec};
use wire::spec::{Family, TestKind, DEFAULT_LOAD_WRITE_BYTES};

/// Largest study spec file read (a spec is a few hundred bytes).
pub const MAX_SPEC_FILE_BYTES: u64 = 1 << 20;

/// Payload bytes of `dualperf run` without `-s`: a datagram's or a request's (a
/// tcp-stream writes [`DEFAULT_LOAD_WRITE_BYTES`]).
pub const DEFAULT_RUN_PAYLOAD_BYTES: u32 = 1408;
/// frag's payload when none is given: 3000 bytes, two or three fragments on a path of
/// MTU 1280–1500.
pub const DEFAULT_FRAG_PAYLOAD_BYTES: u32 = 3000;
/// Run length of `dualperf run` without `-d` / `-n`, seconds (a study's runs are
/// shorter: `study::spec::DEFAULT_DURATION_S`).
pub const DEFAULT_RUN_DURATION_S: f64 = 10.0;

/// Read a study spec file, at most [`MAX_SPEC_FILE_BYTES`] (`/dev/zero` is refused,
/// not read until memory runs out).
pub fn read_spec_file(path: &Path) -> Result<String, ResolveError> {
    use std::io::Read;
    let what = |e: std::io::Error| ResolveError::SpecFile {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(what)?
        .take(MAX_SPEC_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(what)?;
    if bytes.len() as u64 > MAX_SPEC_FILE_BYTES {
        return Err(ResolveError::Option(format!(
            "study spec {} is larger than {MAX_SPEC_FILE_BYTES} bytes; is it the right file?",
            path.display()
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        ResolveError::Option(format!("study spec {} is not UTF-8 text", path.display()))
    })
}

/// What lies under the options: a preset, a spec file, the target's constraints.
#[derive(Debug, Clone, Default)]
pub struct Layers<'a> {
    /// A preset name or seed number (`--preset`).
    pub preset: Option<&'a str>,
    /// A TOML study spec file (`--spec`).
    pub spec_file: Option<&'a Path>,
    /// The server's hosts as typed: an IP-literal HOST, or one of --host4/--host6
    /// alone, decides the family.
    pub hosts: Option<&'a crate::Hosts>,
    /// The peer is an unmodified iperf3 server (stream tests, one offered rate,
    /// one datagram per call).
    pub iperf3: bool,
    /// The path is a lab link emulating 802.11 or Ethernet (`--lab-link`): one datagram
    /// per call (see [`EMULATED_LINK_DATAPATH`]).
    pub emulated_link: bool,
}

/// Why a lab that emulates a link sends no UDP GSO batches: tbf charges the link's
/// per-frame cost once per packet it is handed, and a GSO batch reaches it as one
/// packet, so a batch of n datagrams would pay for one frame.
pub const EMULATED_LINK_DATAPATH: &str = "an emulated link (--lab-link) charges each \
     frame's airtime once per packet its shaper is handed, and a GSO batch is one packet; \
     use per-datagram (the default here) or batched";

/// `--udp-datapath` where only one datagram per call is right: unset or `auto` becomes
/// `per-datagram`; anything else is refused naming `flag` and `why`.
fn per_datagram_only(
    datapath: &mut Option<String>,
    flag: &str,
    why: &str,
) -> Result<(), ResolveError> {
    match datapath.as_deref() {
        None | Some("auto") | Some("per-datagram") => {
            *datapath = Some("per-datagram".into());
            Ok(())
        }
        Some(other) => Err(refused_datapath(other, flag, why)),
    }
}

fn refused_datapath(datapath: &str, flag: &str, why: &str) -> ResolveError {
    ResolveError::Option(format!(
        "--udp-datapath {datapath} is not available with {flag}: {why}"
    ))
}

/// `--udp-datapath` on an emulated link (see [`EMULATED_LINK_DATAPATH`]): unset or
/// `auto` becomes `per-datagram` (the studies' method); `batched` stays (each datagram
/// is its own packet); `gso` is refused.
pub fn emulated_link_datapath(
    datapath: Option<wire::spec::UdpDatapath>,
) -> Result<wire::spec::UdpDatapath, ResolveError> {
    use wire::spec::UdpDatapath as D;
    match datapath.unwrap_or_default() {
        D::Auto | D::PerDatagram => Ok(D::PerDatagram),
        D::Batched => Ok(D::Batched),
        D::Gso => Err(refused_datapath(
            "gso",
            "--lab-link",
            EMULATED_LINK_DATAPATH,
        )),
    }
}

/// The family of a host written as an IP literal (`192.0.2.7`, `::1`, `[::1]`); None
/// for a name.
pub fn literal_family(host: &str) -> Option<Family> {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.parse::<std::net::IpAddr>().ok().map(|ip| match ip {
        std::net::IpAddr::V4(_) => Family::V4,
        std::net::IpAddr::V6(_) => Family::V6,
    })
}

/// A clock-drawn seed for what the user left unseeded (it is recorded with the spec).
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// The study a `dualperf study` asks for: preset, then spec file, then options.
pub fn resolve_study(
    test: &TestOptions,
    study: &StudyOptions,
    layers: &Layers,
) -> Result<StudySpec, ResolveError> {
    resolve(study.layer(test)?, layers)
}

/// `over` on top of the preset and the spec file, with the target's constraints, into
/// a checked [`StudySpec`]: the one resolution `run` and `study` share.
fn resolve(over: SpecFile, layers: &Layers) -> Result<StudySpec, ResolveError> {
    let mut layer = SpecFile::default();
    if let Some(name) = layers.preset {
        let p = study::presets::find(name).ok_or_else(|| {
            ResolveError::Option(format!(
                "no preset '{name}' (see `dualperf study --list-presets`)"
            ))
        })?;
        layer = p.spec.clone();
        if layer.label.is_none() {
            layer.label = Some(format!("preset {}", p.name));
        }
    }
    if let Some(path) = layers.spec_file {
        let text = read_spec_file(path)?;
        let file = SpecFile::from_toml(&text).map_err(|source| ResolveError::InSpecFile {
            path: path.display().to_string(),
            source,
        })?;
        layer = layer.merge(&file);
    }
    layer = layer.merge(&over);
    // A target given in one family only (an IP-address HOST, or --host4/--host6 alone)
    // decides the families unless they were given, and a family it cannot have is
    // refused before anything starts.
    if let Some((hosts, only)) = layers.hosts.and_then(|h| Some((h, h.families()?))) {
        let host = hosts.text().unwrap_or_default();
        let numbers: Vec<u8> = only.iter().map(|f| f.number()).collect();
        match &layer.families {
            None => layer.families = Some(numbers),
            Some(fams) if fams.iter().any(|f| !numbers.contains(f)) => {
                let missing = if numbers.contains(&4) { 6 } else { 4 };
                let literal = hosts.host.as_deref().and_then(literal_family);
                return Err(ResolveError::Option(match literal {
                    Some(lit) => format!(
                        "{host} is an {lit} address, so it cannot be tested over the other \
                         family; use --families {n}, add the IPv{missing} server with \
                         --host{missing} ADDR, or give a host name with both A and AAAA records",
                        n = lit.number()
                    ),
                    None => format!(
                        "no IPv{missing} server given (only {host}); add --host{missing} ADDR \
                         or use --families {}",
                        numbers.first().copied().unwrap_or(4)
                    ),
                }));
            }
            Some(_) => {}
        }
    }
    if layers.iperf3 {
        if layer.tests.is_none() {
            // iperf3 has no request/response test: its default study is the stream tests.
            layer.tests = Some(vec!["tcp-stream".into(), "udp-stream".into()]);
        }
        if layer.udp_method.is_none() {
            // An iperf3 server runs one offered rate per test: no search.
            layer.udp_method = Some("fixed".into());
        }
        // The iperf3 datapath sends and receives one datagram per call, like iperf3.
        per_datagram_only(
            &mut layer.udp_datapath,
            "--peer iperf3",
            "its streams go one datagram per system call (per-datagram)",
        )?;
    }
    if layers.emulated_link {
        let asked = match layer.udp_datapath.as_deref() {
            None => None,
            Some(name) => Some(name.parse().map_err(|_| {
                ResolveError::Option(format!("--udp-datapath {name} is not a datapath"))
            })?),
        };
        layer.udp_datapath = Some(emulated_link_datapath(asked)?.name().to_string());
    }
    Ok(layer.resolve(clock_seed())?)
}

/// Options that a single test of this kind cannot use, refused with the fix.
fn refuse_for_one(o: &TestOptions, one: &OneTest) -> Result<(), ResolveError> {
    let refuse = |m: &str| Err(ResolveError::Option(m.to_string()));
    let kind = one.test.kind();
    if one.test == RunTest::Loaded {
        let refused = [
            (o.count.is_some(), "--count"),
            (o.reverse || o.bidir, "--reverse/--bidir (use --load)"),
            (o.rate.is_some() || one.rate_search, "--rate/--rate-search"),
            (
                o.shapes_traffic() || one.traffic_seed.is_some(),
                "--idt/--size-dist/--profile/--seed/--on-time",
            ),
            (o.interval_s.is_some(), "--interval"),
            (o.flowlabel.is_some(), "--flowlabel"),
            (o.mss_bytes.is_some(), "--mss"),
        ];
        if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
            return refuse(&format!("{what} does not apply to -t rrul"));
        }
        return Ok(());
    }
    if o.load.is_some()
        || o.probe_rate.is_some()
        || o.probe_size_bytes.is_some()
        || o.idle_s.is_some()
    {
        return refuse("--load, --probe-rate, --probe-size and --idle apply to -t rrul only");
    }
    if kind == TestKind::TcpCrr {
        let refused = [
            (
                o.rate.is_some(),
                "--rate does not apply to -t tcp-crr: it opens its connections back to back",
            ),
            (
                o.streams.is_some_and(|p| p != 1),
                "-P does not apply to -t tcp-crr: it runs one connection at a time",
            ),
            (
                o.reverse || o.bidir,
                "--reverse/--bidir do not apply to -t tcp-crr: each connection carries one request and one response",
            ),
        ];
        if let Some((_, why)) = refused.iter().find(|(on, _)| *on) {
            return refuse(why);
        }
    }
    if o.rate.is_some() && kind != TestKind::UdpStream {
        return refuse("--rate applies to udp-stream only");
    }
    if o.flowlabel.is_some() && one.family != Family::V6 {
        return refuse("--flowlabel needs --family 6");
    }
    if (o.shapes_traffic() || one.traffic_seed.is_some())
        && !matches!(kind, TestKind::UdpStream | TestKind::TcpStream)
    {
        return refuse("--idt, --size-dist, --profile and --on-time/--off-time shape a udp-stream or tcp-stream; use -t udp-stream or -t tcp-stream");
    }
    if kind.is_quic() {
        let refused = [
            (o.mss_bytes.is_some(), "--mss"),
            (o.nodelay, "--nodelay"),
            (o.flowlabel.is_some(), "--flowlabel"),
            (o.zerocopy.is_some(), "--zerocopy"),
        ];
        if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
            return refuse(&format!(
                "{what} does not apply to -t {}: QUIC's packets are its own (quinn sets its \
                 segment size by path-MTU discovery)",
                kind.name()
            ));
        }
        if let Some(cc) = o.congestion.as_deref() {
            if !crate::quic::congestion_names().contains(&cc) {
                return refuse(&format!(
                    "--congestion {cc}: a QUIC test's controller is one of {}",
                    crate::quic::congestion_names().join(", ")
                ));
            }
        }
    }
    if o.stats_window_s.is_some() && kind != TestKind::UdpStream {
        return refuse("--stats-window applies to -t udp-stream only");
    }
    if (o.loss_threshold_pct.is_some() || o.search_steps.is_some()) && !one.rate_search {
        return refuse("--loss-threshold and --search-steps set up --rate-search: add it");
    }
    Ok(())
}

/// The test a `dualperf run` asks for: a study of one cell (this family, test and
/// size, one run, no interval samples unless asked for, one offered rate: `--rate-search`
/// is the run's own), resolved as a study is, so both commands share every default and
/// limit. A payload above a study's size axis (TCP writes up to 1 MiB, rrul's 128K
/// load writes) is held to the protocol's limits (`wire::proto::validate_spec`), as a
/// server holds it.
pub fn resolve_run(test: &TestOptions, one: &OneTest) -> Result<RunSpec, ResolveError> {
    resolve_single(test, one).map(|s| s.run_spec().clone())
}

/// The campaign of one test a `dualperf run` makes ([`resolve_run`]'s test, with its
/// one-cell study: one run, no warm-up, no retry).
pub fn resolve_single(test: &TestOptions, one: &OneTest) -> Result<Single, ResolveError> {
    refuse_for_one(test, one)?;
    let loaded = one.test == RunTest::Loaded;
    // A TCP stream's default write is iperf3's (bulk transfer, what a run of tcp-stream
    // is asked for); the studies' sweep of small writes is `study`'s.
    let bulk = loaded
        || one.test == RunTest::One(TestKind::TcpStream)
        || one.test == RunTest::One(TestKind::QuicStream);
    let size = one.size_bytes.unwrap_or(if bulk {
        DEFAULT_LOAD_WRITE_BYTES
    } else if one.test == RunTest::One(TestKind::Frag) {
        DEFAULT_FRAG_PAYLOAD_BYTES
    } else {
        DEFAULT_RUN_PAYLOAD_BYTES
    });
    // The study's size axis stops at the largest UDP payload; a larger size is a
    // stream's write size and is set on the cell's test afterwards.
    let axis_max = Family::V4.max_udp_payload_bytes();
    let mut over = test.layer()?;
    over.families = Some(vec![one.family.number()]);
    over.tests = Some(vec![one.test.kind().name().to_string()]);
    over.sizes = Some(SizesField::List(vec![size.clamp(1, axis_max)]));
    over.runs = Some(1);
    over.udp_method = Some("fixed".into());
    over.traffic_seed = one.traffic_seed;
    if over.interval_ms.is_none() {
        over.interval_ms = Some(0);
    }
    if loaded {
        // -d and -P of rrul are the load's length and streams per direction.
        let d = over.duration_s.take().unwrap_or(DEFAULT_RUN_DURATION_S);
        if d < study::spec::MIN_LOADED_S {
            return Err(ResolveError::Option(format!(
                "-d {d}: the loaded phase must last at least {} s (its ramps take a fifth \
                 at each end)",
                study::spec::MIN_LOADED_S
            )));
        }
        over.load_duration_s = Some(d);
        over.load_streams = over.streams.take();
    } else if over.duration_s.is_none() && over.count.is_none() {
        over.duration_s = Some(DEFAULT_RUN_DURATION_S);
    }
    let spec = resolve(over, &Layers::default())?;
    let Some(mut cell) = study::plan::cells(&spec).into_iter().next() else {
        return Err(ResolveError::Option("the run resolved to no test".into()));
    };
    cell.payload_bytes = size;
    cell.test.payload_bytes = size;
    if let (true, Some(plan)) = (loaded, &spec.rrul) {
        let loaded = engine::LoadedSpec::new(
            cell.family,
            size,
            plan.duration_ns,
            &plan.opts,
            cell.test.socket.clone(),
        );
        loaded
            .check()
            .map_err(|e| ResolveError::Option(e.to_string()))?;
        // The parts are ordinary tests: check each as a server would, before any traffic.
        for part in loaded.parts(0) {
            wire::proto::validate_spec(&part)?;
        }
        return Ok(Single::new(spec, cell, RunSpec::Loaded(loaded)));
    }
    let test = cell.test.clone();
    Ok(Single::new(spec, cell, RunSpec::One(test)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::spec::{Bound, Direction, Rate};

    fn one(test: RunTest) -> OneTest {
        OneTest {
            test,
            family: Family::V4,
            size_bytes: None,
            traffic_seed: None,
            rate_search: false,
        }
    }

    #[test]
    fn a_run_writes_bulk_tcp_and_sends_study_sized_datagrams_and_requests() {
        let size = |k| match resolve_run(&TestOptions::default(), &one(RunTest::One(k))) {
            Ok(RunSpec::One(t)) => t.payload_bytes,
            other => panic!("{k:?}: {other:?}"),
        };
        assert_eq!(size(TestKind::TcpStream), 128 * 1024);
        for k in [TestKind::UdpStream, TestKind::TcpRr, TestKind::UdpRr] {
            assert_eq!(size(k), DEFAULT_RUN_PAYLOAD_BYTES, "{k:?}");
        }
    }

    #[test]
    fn a_run_is_one_test_with_the_run_defaults() {
        let RunSpec::One(t) = resolve_run(
            &TestOptions::default(),
            &one(RunTest::One(TestKind::TcpStream)),
        )
        .unwrap() else {
            panic!("one test")
        };
        assert_eq!(t.kind, TestKind::TcpStream);
        assert_eq!(t.family, Family::V4);
        assert_eq!(t.payload_bytes, DEFAULT_LOAD_WRITE_BYTES);
        assert_eq!(t.bound, Bound::DurationNs(10_000_000_000));
        assert_eq!(t.interval_ns, None);
        assert_eq!(t.streams, 1);
        assert_eq!(t.rr_timeout_ns, 200_000_000);
        assert_eq!(t.socket, Default::default());
    }

    #[test]
    fn run_options_reach_the_test() {
        let o = TestOptions {
            count: Some(1000),
            reverse: true,
            streams: Some(3),
            rate: Some(Rate::BitsPerSec(100_000_000)),
            interval_s: Some(0.5),
            rcvbuf_bytes: Some(1 << 20),
            ..TestOptions::default()
        };
        let mut u = one(RunTest::One(TestKind::UdpStream));
        u.size_bytes = Some(512);
        u.family = Family::V6;
        let RunSpec::One(t) = resolve_run(&o, &u).unwrap() else {
            panic!("one test")
        };
        assert_eq!(t.bound, Bound::Count(1000));
        assert_eq!(t.direction, Direction::Reverse);
        assert_eq!((t.streams, t.payload_bytes), (3, 512));
        assert_eq!(t.rate, Some(Rate::BitsPerSec(100_000_000)));
        assert_eq!(t.interval_ns, Some(500_000_000));
        assert_eq!(t.socket.rcvbuf_bytes, Some(1 << 20));
        assert_eq!(t.family, Family::V6);
    }

    #[test]
    fn a_tcp_write_larger_than_a_datagram_is_held_to_the_protocol_limit() {
        let mut t = one(RunTest::One(TestKind::TcpStream));
        t.size_bytes = Some(128 << 10);
        let RunSpec::One(s) = resolve_run(&TestOptions::default(), &t).unwrap() else {
            panic!("one test")
        };
        assert_eq!(s.payload_bytes, 128 << 10);
        let mut u = one(RunTest::One(TestKind::UdpStream));
        u.size_bytes = Some(70_000);
        let RunSpec::One(s) = resolve_run(&TestOptions::default(), &u).unwrap() else {
            panic!("one test")
        };
        // The engine's validate_spec (run by the client and the server) refuses it.
        assert!(wire::proto::validate_spec(&s).is_err());
    }

    #[test]
    fn tcp_crr_refuses_rate_parallel_streams_and_directions_with_the_reason() {
        let crr = one(RunTest::One(TestKind::TcpCrr));
        let cases = [
            (
                TestOptions {
                    rate: Some(Rate::PacketsPerSec(10)),
                    ..TestOptions::default()
                },
                "--rate does not apply to -t tcp-crr",
            ),
            (
                TestOptions {
                    streams: Some(4),
                    ..TestOptions::default()
                },
                "-P does not apply to -t tcp-crr",
            ),
            (
                TestOptions {
                    bidir: true,
                    ..TestOptions::default()
                },
                "--reverse/--bidir do not apply to -t tcp-crr",
            ),
        ];
        for (o, words) in cases {
            let e = resolve_run(&o, &crr).unwrap_err().to_string();
            assert!(e.contains(words), "{e}");
        }
        // Size, count and family reach the test.
        let o = TestOptions {
            count: Some(500),
            ..TestOptions::default()
        };
        let mut six = crr.clone();
        six.family = Family::V6;
        six.size_bytes = Some(64);
        let RunSpec::One(t) = resolve_run(&o, &six).unwrap() else {
            panic!("one test")
        };
        assert_eq!(
            (t.kind, t.family, t.payload_bytes, t.bound, t.streams),
            (TestKind::TcpCrr, Family::V6, 64, Bound::Count(500), 1)
        );
        assert_eq!(wire::proto::validate_spec(&t), Ok(()));
    }

    #[test]
    fn options_a_single_test_cannot_use_are_refused_with_the_fix() {
        let cases: [(TestOptions, RunTest, &str); 4] = [
            (
                TestOptions {
                    rate: Some(Rate::PacketsPerSec(10)),
                    ..TestOptions::default()
                },
                RunTest::One(TestKind::TcpRr),
                "udp-stream only",
            ),
            (
                TestOptions {
                    idle_s: Some(1.0),
                    ..TestOptions::default()
                },
                RunTest::One(TestKind::TcpStream),
                "-t rrul only",
            ),
            (
                TestOptions {
                    count: Some(10),
                    ..TestOptions::default()
                },
                RunTest::Loaded,
                "--count does not apply",
            ),
            (
                TestOptions {
                    flowlabel: Some(1),
                    ..TestOptions::default()
                },
                RunTest::One(TestKind::UdpStream),
                "--family 6",
            ),
        ];
        for (o, t, words) in cases {
            let e = resolve_run(&o, &one(t)).unwrap_err().to_string();
            assert!(e.contains(words), "{t:?}: {e}");
        }
    }

    #[test]
    fn a_quic_test_refuses_tcp_only_options_and_unknown_controllers() {
        for kind in [TestKind::QuicStream, TestKind::QuicRr] {
            for (o, words) in [
                (
                    TestOptions {
                        mss_bytes: Some(1000),
                        ..TestOptions::default()
                    },
                    "--mss does not apply to -t quic-",
                ),
                (
                    TestOptions {
                        nodelay: true,
                        ..TestOptions::default()
                    },
                    "--nodelay does not apply to -t quic-",
                ),
                (
                    TestOptions {
                        congestion: Some("vegas".into()),
                        ..TestOptions::default()
                    },
                    "--congestion vegas: a QUIC test's controller is one of cubic, new-reno, bbr",
                ),
            ] {
                let e = resolve_run(&o, &one(RunTest::One(kind)))
                    .unwrap_err()
                    .to_string();
                assert!(e.contains(words), "{kind}: {e}");
            }
            let bbr = TestOptions {
                congestion: Some("bbr".into()),
                ..TestOptions::default()
            };
            let RunSpec::One(s) = resolve_run(&bbr, &one(RunTest::One(kind))).unwrap() else {
                panic!("one test")
            };
            assert_eq!(s.socket.congestion.as_deref(), Some("bbr"));
        }
    }

    #[test]
    fn limits_are_the_studys_and_name_the_flag() {
        for (o, words) in [
            (
                TestOptions {
                    rr_timeout_ms: Some(0),
                    ..TestOptions::default()
                },
                "--rr-timeout-ms",
            ),
            (
                TestOptions {
                    count: Some(study::spec::MAX_COUNT_PACKETS + 1),
                    ..TestOptions::default()
                },
                "--count",
            ),
            (
                TestOptions {
                    streams: Some(1000),
                    ..TestOptions::default()
                },
                "--streams",
            ),
        ] {
            let e = resolve_run(&o, &one(RunTest::One(TestKind::UdpRr)))
                .unwrap_err()
                .to_string();
            assert!(e.contains(words), "{e}");
        }
    }

    #[test]
    fn rrul_takes_duration_and_streams_as_the_loads_and_the_shared_idle_default() {
        let o = TestOptions {
            duration_s: Some(3.0),
            streams: Some(2),
            ..TestOptions::default()
        };
        let RunSpec::Loaded(l) = resolve_run(&o, &one(RunTest::Loaded)).unwrap() else {
            panic!("loaded")
        };
        assert_eq!(l.duration_ns, 3_000_000_000);
        assert_eq!(l.streams, 2);
        assert_eq!(l.write_bytes, DEFAULT_LOAD_WRITE_BYTES);
        let idle_ns = (study::spec::DEFAULT_RRUL_IDLE_S * 1e9) as u64;
        assert_eq!(l.idle_ns, idle_ns, "run and study share one idle default");
    }

    #[test]
    fn a_study_layers_preset_file_and_options() {
        let dir = std::env::temp_dir().join(format!("runner-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.toml");
        std::fs::write(&path, "tests=['tcp-rr']\nruns=3\nduration_s=1.0\n").unwrap();
        let test = TestOptions {
            duration_s: Some(0.5),
            window_bytes: Some(65_536),
            ..TestOptions::default()
        };
        let study = StudyOptions {
            runs: Some(2),
            ..StudyOptions::default()
        };
        let layers = Layers {
            preset: Some("002"),
            spec_file: Some(&path),
            hosts: Some(&crate::Hosts::one("::1")),
            iperf3: false,
            emulated_link: false,
        };
        let s = resolve_study(&test, &study, &layers).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.tests, vec![TestKind::TcpRr], "the file over the preset");
        assert_eq!(s.sizes_bytes.len(), 10, "the preset's sizes");
        assert_eq!(s.repetition, study::Repetition::Fixed { runs: 2 });
        assert_eq!(s.bound, Bound::DurationNs(500_000_000));
        assert_eq!(s.socket.sndbuf_bytes, Some(65_536));
        assert_eq!(s.families, vec![Family::V6], "an IPv6 literal decides");
    }

    #[test]
    fn an_emulated_link_sends_udp_one_datagram_per_call() {
        let layers = Layers {
            emulated_link: true,
            ..Layers::default()
        };
        let s = resolve_study(&TestOptions::default(), &StudyOptions::default(), &layers).unwrap();
        assert_eq!(s.udp_datapath, wire::spec::UdpDatapath::PerDatagram);
        let plain = resolve_study(
            &TestOptions::default(),
            &StudyOptions::default(),
            &Layers::default(),
        )
        .unwrap();
        assert_ne!(plain.udp_datapath, wire::spec::UdpDatapath::PerDatagram);
        let gso = TestOptions {
            udp_datapath: Some(wire::spec::UdpDatapath::Gso),
            ..TestOptions::default()
        };
        let e = resolve_study(&gso, &StudyOptions::default(), &layers).unwrap_err();
        assert!(e.to_string().contains("--lab-link"), "{e}");
    }

    #[test]
    fn an_iperf3_peer_studies_streams_at_one_rate_per_datagram() {
        let layers = Layers {
            iperf3: true,
            ..Layers::default()
        };
        let s = resolve_study(&TestOptions::default(), &StudyOptions::default(), &layers).unwrap();
        assert_eq!(s.tests, vec![TestKind::TcpStream, TestKind::UdpStream]);
        assert_eq!(s.udp_method, study::UdpMethod::Fixed);
        assert_eq!(s.udp_datapath, wire::spec::UdpDatapath::PerDatagram);
        let gso = TestOptions {
            udp_datapath: Some(wire::spec::UdpDatapath::Gso),
            ..TestOptions::default()
        };
        let e = resolve_study(&gso, &StudyOptions::default(), &layers).unwrap_err();
        assert!(e.to_string().contains("per-datagram"), "{e}");
    }

    #[test]
    fn a_spec_file_is_read_within_its_limit() {
        let e = read_spec_file(Path::new("/nonexistent/spec.toml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/spec.toml"), "{e}");
        if Path::new("/dev/zero").exists() {
            let e = read_spec_file(Path::new("/dev/zero")).unwrap_err();
            assert!(e.to_string().contains("larger than"), "{e}");
        }
    }
}
