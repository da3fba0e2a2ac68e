//! Presets that reproduce the method of each study in `shared/seeds/` (see
//! docs/methodology.md), plus the short default study. Each preset says where it comes
//! from and what that study did, so `--list-presets` can show its source.

use crate::spec::{SizesField, SpecFile};
use wire::spec::SocketOpts;

/// A named study method.
#[derive(Debug, Clone)]
pub struct Preset {
    pub name: &'static str,
    /// Seed file the method comes from (`None` for dualperf's own default); its number
    /// ("004") also finds the preset.
    pub source: Option<&'static str>,
    /// The study as a reader knows it: title, authors and year (where the paper states
    /// it), what `--list-presets` shows (`None` for dualperf's own default).
    pub study: Option<&'static str>,
    /// What that study did, in one or two sentences.
    pub what_it_did: &'static str,
    /// What this preset runs, and what it cannot reproduce.
    pub notes: &'static str,
    /// The link the study measured over, as `dualperf model` arguments (`--link …` and
    /// the assumptions the study implies, such as `--security ccmp` for WPA2): the
    /// ceiling its results should be set against. `None` for dualperf's own default.
    pub model_args: Option<&'static str>,
    pub spec: SpecFile,
}

fn six_sizes() -> Option<SizesField> {
    Some(SizesField::List(vec![128, 384, 640, 896, 1152, 1408]))
}

/// The published studies sent one datagram per system call (Netperf UDP_STREAM, Iperf,
/// IP Traffic, D-ITG): their presets do too.
fn per_datagram() -> Option<String> {
    Some("per-datagram".to_string())
}

fn strings(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

/// Every preset, the default first.
pub fn all() -> Vec<Preset> {
    let all_tests = strings(&["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"]);
    vec![
        Preset {
            name: "default",
            source: None,
            study: None,
            what_it_did: "dualperf's main job: a quick IPv4-vs-IPv6 sweep of the four core tests.",
            notes: "6 sizes (128..1408/256) x 4 tests x IPv4/IPv6, interleaved, runs of 0.5 s \
                    repeated until the 95% interval of throughput / transaction rate, RTT and \
                    CPU is within 20% of the mean (5 to 20 runs per cell); udp-stream as RFC \
                    2544 throughput (loss <= 0.1%); a few minutes on loopback (the plan prints its estimate).",
            model_args: None,
            spec: SpecFile::default(),
        },
        Preset {
            name: "sweep6-40x60s",
            source: Some("000_20bdd31d528de7e3.txt"),
            study: Some("\"Performance Analysis of Some Operating Systems in Wireless 802.11n Networks\", S. S. Kolahi and P. Li, International Journal of Computing and Network Technology, 2016"),
            what_it_did: "802.11n peer-peer, Win XP / Win 7 / Fedora 12 with Netperf 2.4.5: TCP and \
                          UDP throughput and RTT at 128, 384, 640, 896, 1152, 1408 bytes, 40 runs of \
                          ~60 s each, mean and standard deviation; TCP window 64 KB, UDP socket \
                          buffer 8 KB.",
            notes: "6 sizes x 4 tests x 2 families x 40 runs of 60 s; TCP socket \
                    buffers 64 KB, UDP socket buffers 8 KB.",
            model_args: Some("--link 802.11n:mcs=15,width=40,gi=short,band=2.4 --ampdu 64"),
            spec: SpecFile {
                sizes: six_sizes(),
                tests: all_tests.clone(),
                duration_s: Some(60.0),
                runs: Some(40),
                socket: Some(SocketOpts {
                    sndbuf_bytes: Some(65_536),
                    rcvbuf_bytes: Some(65_536),
                    ..SocketOpts::default()
                }),
                udp_socket: Some(SocketOpts {
                    sndbuf_bytes: Some(8_192),
                    rcvbuf_bytes: Some(8_192),
                    ..SocketOpts::default()
                }),
                udp_datapath: per_datagram(),
                // The papers quote a difference over the IPv4 value.
                percent_of: Some("first".into()),
                ..SpecFile::default()
            },
        },
        Preset {
            name: "confidence95-cpu",
            source: Some("001_f2bb8168b0473743.txt"),
            study: Some("\"Evaluating IPv6 in Peer-to-Peer 802.11n Wireless LANs\", S. S. Kolahi and P. Li, IEEE Internet Computing, 2011 (as the 802.11ac study below cites it; the copy kept has no title page)"),
            what_it_did: "802.11n peer-peer with WPA2, Win XP / Win 7 / Fedora 12 with Netperf: TCP \
                          and UDP throughput, RTT and sender CPU at 128..1408 step 256, each test \
                          repeated until the 95% confidence interval was reached (about 40 runs) \
                          of ~60 s.",
            notes: "Repeat each cell until the 95% Student-t interval of every counted metric \
                    (throughput or transaction rate, RTT, CPU) is within 5% of its \
                    mean (5 to 40 runs of 60 s; 5 is the fewest with which a Holm-corrected \
                    rank test can be significant at 6 sizes); the width was not stated, 5% is netperf's \
                    -I default.",
            model_args: Some("--link 802.11n:mcs=15,width=40,gi=short,band=2.4 --ampdu 64 --security ccmp"),
            spec: SpecFile {
                sizes: Some(SizesField::Text("128..1408/256".into())),
                tests: all_tests.clone(),
                duration_s: Some(60.0),
                confidence: Some(95.0),
                ci_width: Some(5.0),
                min_runs: Some(5),
                max_runs: Some(40),
                udp_datapath: per_datagram(),
                // The papers quote a difference over the IPv4 value.
                percent_of: Some("first".into()),
                ..SpecFile::default()
            },
        },
        Preset {
            name: "sweep10-10x1min",
            source: Some("002_b5125daabdc2f503.txt"),
            study: Some("\"Performance Comparison of IPv6 in 802.11ac WLAN in Windows and Linux Environment\", P. A. Tuifaiga, P. A. Ram and S. S. Kolahi (year not stated; it cites work of 2019)"),
            what_it_did: "802.11ac peer-peer and client-server, Windows 10 / Server and Ubuntu with \
                          D-ITG and Netperf: TCP and UDP throughput, RTT and CPU at ten sizes \
                          (128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1408), 10 runs of \
                          1 min, runs inside the 95% CI averaged.",
            notes: "10 sizes x 4 tests x 2 families x 10 runs of 60 s; the \
                    report's 95% interval takes the place of their trimming.",
            model_args: Some("--link 802.11ac:mcs=9,nss=3,width=80,gi=short --ampdu 64"),
            spec: SpecFile {
                sizes: Some(SizesField::List(vec![
                    128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1408,
                ])),
                tests: all_tests.clone(),
                duration_s: Some(60.0),
                runs: Some(10),
                udp_datapath: per_datagram(),
                // The papers quote a difference over the IPv4 value.
                percent_of: Some("first".into()),
                ..SpecFile::default()
            },
        },
        Preset {
            name: "million-packets-40x",
            source: Some("003_543c528aff639d92.txt"),
            study: Some("\"Performance Comparison of IPv4 and IPv6 using Windows XP and Windows 7 over Gigabit Ethernet LAN\", P. Jain and S. Singh (year not stated; it cites work of 2011)"),
            what_it_did: "Gigabit Ethernet crossover, Win XP / Win 7 with IP Traffic - Test & \
                          Measure: TCP and UDP throughput from 128 to 1408 bytes, 40 runs of \
                          1,000,000 packets each.",
            notes: "TCP and UDP stream only, 6 sizes x 2 families x 40 runs of 1,000,000 packets \
                    (sends); the paper does not list its intermediate sizes, the 256-byte step \
                    of the other studies is used.",
            model_args: Some("--link ethernet:1G"),
            spec: SpecFile {
                sizes: six_sizes(),
                tests: strings(&["tcp-stream", "udp-stream"]),
                count: Some(1_000_000),
                runs: Some(40),
                udp_datapath: per_datagram(),
                // The papers quote a difference over the IPv4 value.
                percent_of: Some("first".into()),
                ..SpecFile::default()
            },
        },
        Preset {
            name: "udp-jitter-10x1M",
            source: Some("004_4ac0fc035d9624fa.txt"),
            study: Some("\"UDP-IPv6 Performance in Peer-to-Peer Gigabit Ethernet using Modern Windows and Linux Systems\", B. K. Soorty and N. I. Sarkar (year not stated; it cites work of 2013)"),
            what_it_did: "Gigabit Ethernet peer-peer, Win 7 - Server 2008 and Ubuntu - RHEL 5.5 with \
                          IP Traffic and a modified Iperf: UDP only, throughput, RTT, jitter at the \
                          receiver and client CPU, 6 sizes, 10 runs of 1,000,000 packets, accepted \
                          when the standard deviation was under 10%.",
            notes: "udp-stream (throughput, RFC 3550 jitter, CPU) and udp-rr (RTT), 6 sizes x 2 \
                    families x 10 runs of 1,000,000 packets; the report shows the coefficient \
                    of variation to check their 10% criterion.",
            model_args: Some("--link ethernet:1G"),
            spec: SpecFile {
                sizes: six_sizes(),
                tests: strings(&["udp-stream", "udp-rr"]),
                count: Some(1_000_000),
                // "A standard deviation of less than 10% was implemented".
                cv_target_pct: Some(10.0),
                runs: Some(10),
                udp_datapath: per_datagram(),
                // The papers quote a difference over the IPv4 value.
                percent_of: Some("first".into()),
                ..SpecFile::default()
            },
        },
    ]
}

/// The preset with this name (or its seed number, "000".."004").
pub fn find(name: &str) -> Option<Preset> {
    let n = name.trim();
    all().into_iter().find(|p| {
        p.name == n
            || p.source
                .map(|s| s.split('_').next() == Some(n))
                .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Repetition;
    use wire::spec::Bound;

    #[test]
    fn every_preset_resolves_and_matches_its_seed_method() {
        for p in all() {
            let spec = p
                .spec
                .resolve(1)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(!spec.sizes_bytes.is_empty(), "{}", p.name);
            // The seed presets' reports quote differences over the IPv4 value, as the
            // papers do (seed 004, Table II: 438.68 vs 411.83 is 6.1 %).
            let want_pct = p.source.map(|_| "first".to_string());
            assert_eq!(spec.percent_of, want_pct, "{}", p.name);
            let want_cv = (p.name == "udp-jitter-10x1M").then_some(10.0);
            assert_eq!(spec.cv_target_pct, want_cv, "{}", p.name);
            // The published studies sent one datagram per call; the default does not.
            let want = if p.source.is_some() {
                wire::spec::UdpDatapath::PerDatagram
            } else {
                wire::spec::UdpDatapath::Auto
            };
            assert_eq!(spec.udp_datapath, want, "{}", p.name);
        }
        let s = find("001").unwrap().spec.resolve(1).unwrap();
        assert_eq!(s.sizes_bytes, vec![128, 384, 640, 896, 1152, 1408]);
        assert!(matches!(
            s.repetition,
            Repetition::Confidence { level_pct, max_runs: 40, .. } if level_pct == 95.0
        ));
        let s = find("002").unwrap().spec.resolve(1).unwrap();
        assert_eq!(s.sizes_bytes.len(), 10);
        assert_eq!(s.repetition, Repetition::Fixed { runs: 10 });
        let s = find("udp-jitter-10x1M").unwrap().spec.resolve(1).unwrap();
        assert!(s.tests.iter().all(|t| t.is_udp()));
        assert_eq!(s.bound, Bound::Count(1_000_000));
        let s = find("000").unwrap().spec.resolve(1).unwrap();
        assert_eq!(s.socket.sndbuf_bytes, Some(65_536));
        assert_eq!(s.udp_socket.unwrap().rcvbuf_bytes, Some(8_192));
        assert!(find("nope").is_none());
    }
}
