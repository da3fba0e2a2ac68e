//! The link grammar: every link kind, and errors that name the field and its values.

use super::*;

#[test]
fn every_kind_parses_and_prints_back() {
    let cases = [
        ("loopback", Link::Loopback),
        ("ethernet", Link::Ethernet { rate_bps: None }),
        (
            "ethernet:1G",
            Link::Ethernet {
                rate_bps: Some(1_000_000_000),
            },
        ),
        (
            "tbf:100mbit",
            Link::Tbf {
                rate_bps: 100_000_000,
            },
        ),
        (
            "802.11b:5.5",
            Link::Wifi(Phy::Dsss {
                rate_100kbps: 55,
                preamble: Preamble::Long,
            }),
        ),
        (
            "802.11a:54",
            Link::Wifi(Phy::Ofdm {
                rate_mbps: 54,
                erp: false,
            }),
        ),
        (
            "802.11g:54M",
            Link::Wifi(Phy::Ofdm {
                rate_mbps: 54,
                erp: true,
            }),
        ),
        (
            "802.11n:mcs=7,width=20,gi=long,nss=2,band=2.4",
            Link::Wifi(Phy::Ht {
                mcs: 15,
                width_mhz: 20,
                gi: Gi::Long,
                band: Band::Ghz2_4,
            }),
        ),
        (
            "802.11ac:mcs=9,nss=2,width=80,gi=short",
            Link::Wifi(Phy::Vht {
                mcs: 9,
                nss: 2,
                width_mhz: 80,
                gi: Gi::Short,
            }),
        ),
        (
            "802.11ax:mcs=11,nss=2,width=80,gi=0.8",
            Link::Wifi(Phy::He {
                mcs: 11,
                nss: 2,
                width_mhz: 80,
                gi: HeGi::Us0_8,
                band: Band::Ghz5,
            }),
        ),
    ];
    for (text, want) in cases {
        let got = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(got, want, "{text}");
        if let Link::Wifi(phy) = got {
            assert!(phy.is_valid(), "{text}");
        }
        let again = parse(&got.to_string()).unwrap_or_else(|e| panic!("{got}: {e}"));
        assert_eq!(again, got, "{text} → {got}");
    }
}

fn error(text: &str) -> String {
    match parse(text) {
        Ok(link) => panic!("{text} parsed as {link:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_the_field_and_the_allowed_values() {
    let e = error("802.11g:55");
    assert!(
        e.contains("RATE '55'") && e.contains("6, 9, 12, 18, 24, 36, 48 or 54"),
        "{e}"
    );
    let e = error("802.11b:54");
    assert!(e.contains("1, 2, 5.5 or 11"), "{e}");
    let e = error("802.11n:mcs=7,width=80,gi=long");
    assert!(e.contains("width '80'") && e.contains("20 or 40"), "{e}");
    let e = error("802.11n:mcs=7,width=20");
    assert!(
        e.contains("gi= is missing") && e.contains("long (800 ns) or short"),
        "{e}"
    );
    let e = error("802.11ac:mcs=10,nss=1,width=80,gi=long");
    assert!(e.contains("mcs '10'") && e.contains("0 to 9"), "{e}");
    let e = error("802.11ac:mcs=9,nss=1,width=20,gi=long");
    assert!(e.contains("not a VHT rate"), "{e}");
    let e = error("802.11ax:mcs=11,nss=2,width=80,gi=0.4");
    assert!(
        e.contains("gi '0.4'") && e.contains("0.8, 1.6 or 3.2"),
        "{e}"
    );
    let e = error("802.11ax:mcs=1,nss=1,width=80,gi=0.8,band=2.4");
    assert!(e.contains("2.4 GHz band"), "{e}");
    let e = error("802.11n:mcs=7,width=20,gi=long,speed=9");
    assert!(
        e.contains("unknown field 'speed'") && e.contains("mcs, width, gi, nss, band"),
        "{e}"
    );
    let e = error("802.11n:mcs=9,nss=1,width=20,gi=long");
    assert!(e.contains("already means 2 streams"), "{e}");
    let e = error("802.11n:mcs=7,mcs=6,width=20,gi=long");
    assert!(e.contains("given twice"), "{e}");
    let e = error("wifi");
    assert!(
        e.contains("unknown link 'wifi'") && e.contains("802.11ac"),
        "{e}"
    );
    let e = error("tbf");
    assert!(e.contains("RATE= is missing"), "{e}");
    let e = error("tbf:100mbps");
    assert!(e.contains("RATE '100mbps'") && e.contains("100mbit"), "{e}");
}

#[test]
fn hostile_input_is_an_error_not_a_panic() {
    let long = "9".repeat(10_000);
    let nul = "802.11n:mcs=7\0,width=20,gi=long";
    let refused = [
        "",
        ":",
        "802.11n:",
        "802.11n:mcs=",
        "802.11n:mcs=999999999999,width=20,gi=long",
        "802.11n:=,=,=",
        "802.11b:1e300",
        "802.11b:-5",
        "802.11b:NaN",
        "802.11g:inf",
        "802.11g:0",
        "tbf:0",
        "ethernet:",
        "802.11ac:mcs=9,nss=9,width=80,gi=long",
        "802.11ax:mcs=11,nss=0,width=80,gi=0.8",
        nul,
        long.as_str(),
    ];
    for text in refused {
        assert!(parse(text).is_err(), "{text:?} parsed");
    }
    let tail = format!("802.11g:{long}");
    assert!(parse(&tail).is_err());
}

/// An ESC (or any control) in a link is quoted visibly escaped, not dropped from the
/// quote nor sent to the terminal.
#[test]
fn a_control_character_is_quoted_visibly_escaped() {
    for (text, quoted) in [
        ("tbf:\x1b[31m", "RATE '\\u{1b}[31m'"),
        ("\x1b]0;title\x07", "unknown link '\\u{1b}]0;title\\u{7}'"),
        ("802.11g:5\r4", "RATE '5\\u{d}4'"),
        ("802.11n:mcs=7,wi\x1bdth=20", "unknown field 'wi\\u{1b}dth'"),
    ] {
        let e = error(text);
        assert!(e.contains(quoted), "{text:?}: {e}");
        assert!(!e.chars().any(char::is_control), "{text:?}: {e:?}");
    }
}
