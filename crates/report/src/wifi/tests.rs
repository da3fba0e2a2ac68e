use super::*;
use crate::analysis::{analyse, AnalysisOptions};
use crate::dataset::{Dataset, RunOutcome, RunRow};
use model::wifi::{estimate, Assumptions, Band, Gi, Phy, Security};
use wire::metrics;
use wire::spec::{Direction, Transport};

const SIZES: [u32; 2] = [512, 1408];

/// 802.11n MCS 7, 20 MHz, 800 ns GI, 2.4 GHz, WPA2, as nl80211 reports it on the client.
fn recorded_ht(side: &str) -> Vec<(String, String, u64)> {
    [
        ("kind", "wifi"),
        ("standard", "802.11n"),
        ("band", "2.4GHz"),
        ("width_mhz", "20"),
        ("guard_interval_ns", "800"),
        ("spatial_streams", "1"),
        ("tx_mcs", "7"),
        ("tx_bitrate_kbps", "65000"),
        ("security", "wpa2"),
    ]
    .iter()
    .flat_map(|(k, v)| {
        ["before", "after"].map(|phase| (format!("{side}.link.{phase}.{k}"), v.to_string(), 5))
    })
    .collect()
}

fn ht_phy() -> Phy {
    Phy::Ht {
        mcs: 7,
        width_mhz: 20,
        gi: Gi::Long,
        band: Band::Ghz2_4,
    }
}

/// The model's own figure, bit/s.
fn model_bps(phy: &Phy, a: &Assumptions, family: Family, transport: Transport, size: u32) -> f64 {
    estimate(phy, a, family, transport, size)
        .unwrap_or_else(|e| panic!("{e}"))
        .goodput_bps
}

/// Five runs per family and size of `kind` at `share_v4` / `share_v6` of `max(family,
/// size)` (bit/s), with a little spread.
fn campaign(
    kind: TestKind,
    max: impl Fn(Family, u32) -> f64,
    share_v4: f64,
    share_v6: f64,
) -> CampaignData {
    campaign_spread(
        kind,
        max,
        share_v4,
        share_v6,
        &[1.0, 1.001, 0.999, 1.0005, 0.9995],
    )
}

/// [`campaign`] with the runs' factors around the share given.
fn campaign_spread(
    kind: TestKind,
    max: impl Fn(Family, u32) -> f64,
    share_v4: f64,
    share_v6: f64,
    wobbles: &[f64],
) -> CampaignData {
    let mut runs = Vec::new();
    for size in SIZES {
        for (family, share) in [(Family::V4, share_v4), (Family::V6, share_v6)] {
            for (i, wobble) in wobbles.iter().enumerate() {
                runs.push(RunRow {
                    family,
                    kind,
                    direction: Direction::Forward,
                    payload_bytes: size,
                    repetition: i as u32,
                    warmup: false,
                    outcome: RunOutcome::Ok,
                    metrics: [
                        (
                            metrics::THROUGHPUT_BPS.to_string(),
                            max(family, size) * share * wobble,
                        ),
                        (metrics::DURATION_S.to_string(), 2.0),
                    ]
                    .into(),
                });
            }
        }
    }
    CampaignData {
        id: 1,
        label: "wlan".into(),
        runs,
        ..Default::default()
    }
}

fn with_recorded_ht(mut c: CampaignData) -> CampaignData {
    c.link_values = recorded_ht("client");
    c.hosts.insert(
        "client".into(),
        [("iface.mtu_ipv4".to_string(), "1500".to_string())].into(),
    );
    c
}

fn recorded_assumptions() -> Assumptions {
    Assumptions {
        ampdu: RECORDED_AMPDU,
        security: Security::Ccmp,
        ..Assumptions::default()
    }
}

/// The table as plain text: each row's cells between `|`, then the note.
fn table_md(d: &Dataset) -> String {
    let a = analyse(d, AnalysisOptions::default());
    let Some(t) = wifi_table(&a, &d.campaigns) else {
        return String::new();
    };
    let mut out = String::new();
    for row in &t.rows {
        out.push_str("| ");
        for c in row {
            out.push_str(c.text());
            out.push_str(" | ");
        }
        out.push('\n');
    }
    out.push_str(t.note.as_deref().unwrap_or_default());
    out
}

#[test]
fn a_recorded_80211n_link_gives_the_share_of_the_models_maximum_and_its_ratio() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    // IPv4 at 90 % of its maximum; IPv6 at 90 % of its own: the ratio is the model's.
    let c = with_recorded_ht(campaign(TestKind::UdpStream, max, 0.9, 0.9));
    let d = Dataset {
        campaigns: vec![c.clone()],
    };
    let WifiModel::Known(link) = campaign_wifi(&c, Direction::Forward) else {
        panic!("{:?}", campaign_wifi(&c, Direction::Forward));
    };
    assert_eq!(link.phy, phy);
    assert_eq!(link.assumptions, a);
    let analysis = analyse(&d, AnalysisOptions::default());
    let vd = &analysis.views[0];
    let points = against_model(&analysis, vd, 0, &link);
    assert_eq!(points.len(), 2);
    for p in &points {
        let m4 = max(Family::V4, p.size);
        let m6 = max(Family::V6, p.size);
        // In the view's unit (Mbit/s).
        assert!((p.max[0].clone().unwrap() - m4 * vd.view.scale).abs() < 1e-9);
        assert!((p.max[1].clone().unwrap() - m6 * vd.view.scale).abs() < 1e-9);
        for i in 0..2 {
            let share = p.pct_of_max[i].unwrap();
            assert!((share - 90.0).abs() < 1e-6, "{} {share}", p.size);
        }
        let expected = p.expected_ratio.unwrap();
        assert!((expected - m6 / m4).abs() < 1e-12);
        assert!(expected < 1.0, "IPv6 headers cost airtime: {expected}");
        let (ci, v) = p.measured.unwrap();
        assert!(ci.lo <= expected && expected <= ci.hi, "{ci:?} {expected}");
        assert_eq!(v, HeaderVerdict::Explained);
    }
    let md = table_md(&d);
    let m4 = max(Family::V4, 1408) * 1e-6;
    assert!(
        md.contains(&format!(
            "| UDP throughput | wlan | 1408 | {} | 90.0 |",
            crate::format::num(m4)
        )),
        "{md}"
    );
    assert!(md.contains("explained (prediction inside the CI)"), "{md}");
    assert!(
        md.contains("802.11n MCS 7, 1 stream, 20 MHz, 800 ns GI, 2.4 GHz, CCMP, MTU 1500 bytes, A-MPDU of up to 64 MPDUs; as the client recorded it"),
        "{md}"
    );
    let a = analyse(&d, AnalysisOptions::default());
    let s = wifi_sentences(&a, &d.campaigns);
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        s[0].0.starts_with("UDP throughput reached 90.0% (IPv4) and 90.0% (IPv6) of the 802.11 airtime model's maximum for 802.11n MCS 7"),
        "{}",
        s[0].0
    );
    assert!(
        s[0].0
            .contains("inside the measured ratio's 95% CI at 512 and 1408 bytes"),
        "{}",
        s[0].0
    );
}

#[test]
fn an_ipv6_gap_wider_than_the_model_is_below_and_a_measurement_beyond_it_is_above() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Tcp, z);
    let c = with_recorded_ht(campaign(TestKind::TcpStream, max, 0.9, 0.8));
    let md = table_md(&Dataset { campaigns: vec![c] });
    assert!(md.contains("below the prediction"), "{md}");
    // 5 % above the maximum (A-MSDU, say, which the model does not assume).
    let c = with_recorded_ht(campaign(TestKind::TcpStream, max, 1.05, 1.05));
    let md = table_md(&Dataset { campaigns: vec![c] });
    assert!(md.contains("above the model's maximum"), "{md}");
    assert!(md.contains("| 105.0 |"), "{md}");
    // Said apart, not as a share reached.
    let d = Dataset {
        campaigns: vec![with_recorded_ht(campaign(
            TestKind::TcpStream,
            max,
            1.05,
            1.05,
        ))],
    };
    let s = wifi_sentences(&analyse(&d, AnalysisOptions::default()), &d.campaigns);
    assert!(
        s[0].0.contains("reached – (IPv4) and – (IPv6)"),
        "{}",
        s[0].0
    );
    assert!(
        s[0].0
            .contains("At 512 and 1408 bytes the measurement exceeds the model's maximum"),
        "{}",
        s[0].0
    );
}

#[test]
fn an_emulated_lab_link_is_set_against_its_own_model_and_says_what_it_leaves_out() {
    let phy = Phy::Ofdm {
        rate_mbps: 54,
        erp: true,
    };
    let a = Assumptions::default();
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    let mut c = campaign(TestKind::UdpStream, max, 0.97, 0.97);
    c.hosts.insert(
        "lab".into(),
        [
            ("lab.emulated_link", "802.11g:54"),
            ("lab.emulation_overhead_bytes", "1155"),
            ("lab.rate_bps", "54000000"),
            ("lab.burst_bytes", "65536"),
            ("lab.mtu_bytes", "1500"),
            (
                "lab.shaping",
                "tbf rate 54Mbit burst 65536 latency 50ms overhead 1155 on egress of …",
            ),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into(),
    );
    let WifiModel::Known(link) = campaign_wifi(&c, Direction::Reverse) else {
        panic!("{:?}", campaign_wifi(&c, Direction::Reverse));
    };
    assert_eq!((link.phy, link.assumptions), (phy, a));
    // The shaper's ceiling counts each datagram as tbf does on a veth: payload + 8 UDP
    // + 20 IPv4 + 14 Ethernet (model's TbfVeth frame) + the 1155-byte overhead.
    for size in [64u32, 1400] {
        // (1400 B: the shaper is the higher, 29.11 against the model's 29.05 Mbit/s.)
        let shaper = 54e6 * f64::from(size) / f64::from(size + 8 + 20 + 14 + 1155);
        let model = max(Family::V4, size);
        let got = link.ceiling_bps(Family::V4, TestKind::UdpStream, size, None);
        assert_eq!(
            got,
            Some(model.max(shaper)),
            "{size} B: model {model}, shaper {shaper}"
        );
    }
    let d = Dataset { campaigns: vec![c] };
    let md = table_md(&d);
    assert!(md.contains("| 97.0 |"), "{md}");
    assert!(
        md.contains("emulated by the lab (tbf at 54 Mbit/s plus 1155 bytes per packet), which leaves out collisions, retries, rate adaptation"),
        "{md}"
    );
    let an = analyse(&d, AnalysisOptions::default());
    let s = wifi_sentences(&an, &d.campaigns);
    assert!(
        s[0].0
            .contains("The emulated link leaves out collisions, retries, rate adaptation"),
        "{}",
        s[0].0
    );
    // An HT emulation must say how it aggregated; a lab whose shaping failed emulated nothing.
    let mut lab = d.campaigns[0].hosts["lab"].clone();
    lab.insert(
        "lab.emulated_link".into(),
        "802.11n:mcs=7,width=20,gi=long".into(),
    );
    let mut c = d.campaigns[0].clone();
    c.hosts.insert("lab".into(), lab.clone());
    assert!(
        matches!(campaign_wifi(&c, Direction::Forward), WifiModel::Unavailable(w) if w.contains("A-MPDU")),
    );
    lab.insert("lab.emulated_ampdu".into(), "16".into());
    c.hosts.insert("lab".into(), lab.clone());
    assert!(
        matches!(campaign_wifi(&c, Direction::Forward), WifiModel::Known(l) if l.assumptions.ampdu == 16)
    );
    lab.insert(
        "lab.shaping".into(),
        "requested but unavailable (no tbf in this kernel)".into(),
    );
    c.hosts.insert("lab".into(), lab);
    assert!(
        matches!(campaign_wifi(&c, Direction::Forward), WifiModel::Unavailable(w) if w.contains("not applied"))
    );
}

#[test]
fn what_cannot_be_given_is_unavailable_with_the_reason() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    let base = with_recorded_ht(campaign(TestKind::UdpStream, max, 0.9, 0.9));
    let unavailable = |c: &CampaignData, dir| match campaign_wifi(c, dir) {
        WifiModel::Unavailable(why) => why,
        other => panic!("{other:?}"),
    };
    // Windows: no MCS, streams, GI or width.
    let mut win = base.clone();
    win.link_values.retain(|(k, _, _)| {
        ![
            "tx_mcs",
            "spatial_streams",
            "guard_interval_ns",
            "width_mhz",
        ]
        .iter()
        .any(|f| k.ends_with(f))
    });
    win.link_values.push((
        "client.link.before.unavailable".into(),
        "width_mhz, guard_interval_ns, spatial_streams, tx_mcs: not reported by the Native Wifi API; noise_dbm: not reported".into(),
        5,
    ));
    assert_eq!(
        unavailable(&win, Direction::Forward),
        "the client's tx_mcs is not recorded (not reported by the Native Wifi API)"
    );
    let md = table_md(&Dataset {
        campaigns: vec![win],
    });
    assert!(
        md.contains("unavailable: the client's tx_mcs is not recorded (not reported by the Native Wifi API)"),
        "{md}"
    );
    // Rate adaptation under the campaign.
    let mut moved = base.clone();
    moved
        .link_values
        .push(("client.link.after.tx_mcs".into(), "5".into(), 2));
    assert_eq!(
        unavailable(&moved, Direction::Forward),
        "the client's tx_mcs changed during the campaign (5, 7): no one model applies"
    );
    // A recorded rate that is not the one of the recorded MCS.
    let mut odd = base.clone();
    for (k, v, _) in &mut odd.link_values {
        if k.ends_with("tx_bitrate_kbps") {
            *v = "72200".into();
        }
    }
    assert!(unavailable(&odd, Direction::Forward).contains("72.2 Mbit/s, is not the 65.0 Mbit/s"));
    // A recorded rate that is not a number: the side and the field are named.
    let mut garbled = base.clone();
    for (k, v, _) in &mut garbled.link_values {
        if k.ends_with("tx_bitrate_kbps") {
            *v = "65k".into();
        }
    }
    assert_eq!(
        unavailable(&garbled, Direction::Forward),
        "the client's recorded tx_bitrate_kbps \"65k\" is not a number"
    );
    // The server sent (reverse) from a wired host to the Wi-Fi client.
    let mut rev = base.clone();
    rev.link_values
        .push(("server.link.before.kind".into(), "wired".into(), 5));
    assert!(unavailable(&rev, Direction::Reverse)
        .contains("from the server (wired) to the Wi-Fi client"));
    assert!(unavailable(&rev, Direction::Bidir).contains("two senders"));
    // TKIP is not in the model.
    let mut tkip = base.clone();
    for (k, v, _) in &mut tkip.link_values {
        if k.ends_with("security") {
            *v = "wpa".into();
        }
    }
    assert!(unavailable(&tkip, Direction::Forward).contains("security wpa is not in the model"));
    // No MTU recorded: none assumed.
    let mut no_mtu = base;
    no_mtu.hosts.clear();
    assert!(unavailable(&no_mtu, Direction::Forward).contains("MTU is not recorded"));
}

#[test]
fn without_an_80211_link_there_is_no_section() {
    let max = |_, _| 1e9;
    let mut lo = campaign(TestKind::UdpStream, max, 0.9, 0.9);
    assert!(table_md(&Dataset {
        campaigns: vec![lo.clone()]
    })
    .is_empty());
    lo.link_values = ["before", "after"]
        .iter()
        .map(|p| (format!("client.link.{p}.kind"), "loopback".to_string(), 5))
        .collect();
    assert!(matches!(
        campaign_wifi(&lo, Direction::Forward),
        WifiModel::NotWifi(_)
    ));
    assert!(table_md(&Dataset {
        campaigns: vec![lo.clone()]
    })
    .is_empty());
    // Beside a Wi-Fi campaign, the loopback one says why it has no comparison.
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let mut w = with_recorded_ht(campaign(
        TestKind::UdpStream,
        |f, z| model_bps(&phy, &a, f, Transport::Udp, z),
        0.9,
        0.9,
    ));
    w.id = 2;
    w.label = "wlan2".into();
    lo.label = "lo".into();
    let md = table_md(&Dataset {
        campaigns: vec![lo, w],
    });
    assert!(
        md.contains("no 802.11 link: the client's link was loopback"),
        "{md}"
    );
    assert!(md.contains("| UDP throughput | wlan2 | 512 |"), "{md}");
}

#[test]
fn streams_at_their_offered_load_are_not_set_against_the_model() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let mut c = with_recorded_ht(campaign(
        TestKind::UdpStream,
        |f, z| model_bps(&phy, &a, f, Transport::Udp, z),
        0.5,
        0.5,
    ));
    c.offered_load.insert(
        TestKind::UdpStream,
        "its udp-stream runs were sent at a fixed rate (10 Mbit/s), so their throughput is the load it offered".into(),
    );
    let md = table_md(&Dataset { campaigns: vec![c] });
    assert!(
        md.contains("unavailable: its udp-stream runs were sent at a fixed rate"),
        "{md}"
    );
    assert!(!md.contains("| 50.0 |"), "{md}");
}

/// A lab rate stored as NaN or infinite is not quoted ("tbf at NaN bit/s"): the link is
/// still the emulated one, its rate left out.
#[test]
fn a_lab_rate_that_is_no_finite_number_is_not_quoted() {
    let phy = Phy::Ofdm {
        rate_mbps: 54,
        erp: true,
    };
    let a = Assumptions::default();
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    for bad in ["NaN", "inf", "-inf", "-54000000", "1e999"] {
        let mut c = campaign(TestKind::UdpStream, max, 0.97, 0.97);
        c.hosts.insert(
            "lab".into(),
            [
                ("lab.emulated_link", "802.11g:54"),
                ("lab.emulation_overhead_bytes", "1155"),
                ("lab.rate_bps", bad),
                ("lab.mtu_bytes", "1500"),
                ("lab.shaping", "tbf rate 54Mbit"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
        );
        let WifiModel::Known(link) = campaign_wifi(&c, Direction::Forward) else {
            panic!("{bad}: {:?}", campaign_wifi(&c, Direction::Forward));
        };
        let text = link.text();
        assert!(!text.contains("tbf at"), "{bad}: {text}");
        let md = table_md(&Dataset { campaigns: vec![c] });
        assert!(
            !md.contains("NaN") && !md.contains("inf ") && !md.contains("tbf at"),
            "{bad}: {md}"
        );
    }
}

/// A recorded transmit rate of NaN passed the 1 % check (every comparison with NaN is
/// false) and an infinite or absurd one was quoted in full; each is now refused by name.
#[test]
fn a_recorded_rate_that_is_no_finite_number_is_refused() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    let base = with_recorded_ht(campaign(TestKind::UdpStream, max, 0.9, 0.9));
    for bad in ["NaN", "inf", "-65000", "1e300"] {
        let mut c = base.clone();
        for (k, v, _) in &mut c.link_values {
            if k.ends_with("tx_bitrate_kbps") {
                *v = bad.into();
            }
        }
        match campaign_wifi(&c, Direction::Forward) {
            WifiModel::Unavailable(why) => assert_eq!(
                why,
                format!("the client's recorded tx_bitrate_kbps \"{bad}\" is not a number"),
            ),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

/// A recorded value of 100 KB (link state from the OS or an imported database) is
/// quoted cut to 80 characters, in every reason that quotes one.
#[test]
fn a_huge_recorded_value_is_quoted_cut() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    let base = with_recorded_ht(campaign(TestKind::UdpStream, max, 0.9, 0.9));
    let huge = "x".repeat(100_000);
    for field in [
        "standard",
        "band",
        "security",
        "tx_bitrate_kbps",
        "tx_mcs",
        "kind",
    ] {
        let mut c = base.clone();
        for (k, v, _) in &mut c.link_values {
            if k.ends_with(&format!(".{field}")) && k.contains(".before.") {
                *v = huge.clone();
            }
        }
        let why = match campaign_wifi(&c, Direction::Forward) {
            WifiModel::Unavailable(w) | WifiModel::NotWifi(w) => w,
            other => panic!("{field}: {other:?}"),
        };
        assert!(
            why.contains("xxxx…"),
            "{field}: {}",
            &why[..why.len().min(300)]
        );
        assert!(why.len() < 400, "{field}: {} bytes", why.len());
        let md = table_md(&Dataset { campaigns: vec![c] });
        assert!(
            md.len() < 20_000,
            "{field}: the table is {} bytes",
            md.len()
        );
    }
    // A lab's emulated link or shaping text of 100 KB.
    let mut c = base;
    c.hosts.insert(
        "lab".into(),
        [
            ("lab.emulated_link", format!("802.11g:{huge}")),
            ("lab.shaping", "tbf".to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into(),
    );
    let WifiModel::Unavailable(why) = campaign_wifi(&c, Direction::Forward) else {
        panic!()
    };
    assert!(why.len() < 600, "{} bytes", why.len());
}

#[test]
fn a_ratio_whose_gap_is_not_significant_is_not_explained_but_ns() {
    let (phy, a) = (ht_phy(), recorded_assumptions());
    let max = |f, z| model_bps(&phy, &a, f, Transport::Udp, z);
    // Runs spread ±30 %: the model's ratio lies inside the measured ratio's CI, but so
    // does 1, and IPv4 and IPv6 do not differ significantly: nothing to explain.
    let c = with_recorded_ht(campaign_spread(
        TestKind::UdpStream,
        max,
        0.6,
        0.6,
        &[1.0, 1.3, 0.7, 1.15, 0.85],
    ));
    let d = Dataset {
        campaigns: vec![c.clone()],
    };
    let WifiModel::Known(link) = campaign_wifi(&c, Direction::Forward) else {
        panic!("{:?}", campaign_wifi(&c, Direction::Forward));
    };
    let analysis = analyse(&d, AnalysisOptions::default());
    let points = against_model(&analysis, &analysis.views[0], 0, &link);
    assert_eq!(points.len(), 2);
    for p in &points {
        let (ci, v) = p.measured.unwrap();
        let expected = p.expected_ratio.unwrap();
        assert!(ci.lo <= expected && expected <= ci.hi, "{ci:?} {expected}");
        assert!(ci.lo <= 1.0 && 1.0 <= ci.hi, "{ci:?}");
        assert_eq!(v, HeaderVerdict::NoGap, "{}", p.size);
    }
    let md = table_md(&d);
    assert!(md.contains("n.s. (no significant gap to explain)"), "{md}");
    assert!(!md.contains("explained (prediction inside the CI)"), "{md}");
}
