//! Options into tests, and the errors a user sees when they cannot be: the preset, the
//! spec file and the host's address each name what is wrong.

use runner::{Layers, OneTest, ResolveError, RunSpec, RunTest, StudyOptions, TestOptions};
use wire::spec::{Family, TestKind};

fn study(layers: &Layers) -> Result<study::StudySpec, ResolveError> {
    runner::resolve_study(&TestOptions::default(), &StudyOptions::default(), layers)
}

#[test]
fn an_unknown_preset_is_named_with_where_to_find_the_others() {
    let e = study(&Layers {
        preset: Some("no-such-preset"),
        ..Layers::default()
    })
    .unwrap_err();
    assert!(matches!(e, ResolveError::Option(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("no-such-preset") && e.contains("--list-presets"),
        "{e}"
    );
}

#[test]
fn a_spec_file_that_is_missing_or_wrong_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let e = study(&Layers {
        spec_file: Some(&missing),
        ..Layers::default()
    })
    .unwrap_err();
    assert!(matches!(e, ResolveError::SpecFile { .. }), "{e:?}");
    assert!(e.to_string().contains("missing.toml"), "{e}");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "sizes = [128\n").unwrap();
    let e = study(&Layers {
        spec_file: Some(&bad),
        ..Layers::default()
    })
    .unwrap_err();
    assert!(matches!(e, ResolveError::InSpecFile { .. }), "{e:?}");
    assert!(e.to_string().contains("bad.toml"), "{e}");

    // A valid file is a layer under the options.
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "tests = ['udp-rr']\nsizes = [256]\nruns = 3\n").unwrap();
    let opts = StudyOptions {
        runs: Some(5),
        ..StudyOptions::default()
    };
    let layers = Layers {
        spec_file: Some(&good),
        ..Layers::default()
    };
    let s = runner::resolve_study(&TestOptions::default(), &opts, &layers).unwrap();
    assert_eq!(s.tests, [TestKind::UdpRr]);
    assert_eq!(s.sizes_bytes, [256]);
    assert_eq!(s.repetition, study::Repetition::Fixed { runs: 5 });
}

#[test]
fn a_host_for_one_family_alone_decides_the_family_and_both_make_both() {
    let only6 = runner::Hosts {
        host6: Some("2001:db8::7".into()),
        ..runner::Hosts::default()
    };
    let s = study(&Layers {
        hosts: Some(&only6),
        ..Layers::default()
    })
    .unwrap();
    assert_eq!(s.families, [Family::V6]);
    let opts = StudyOptions {
        families: Some(vec![4, 6]),
        ..StudyOptions::default()
    };
    let layers = Layers {
        hosts: Some(&only6),
        ..Layers::default()
    };
    let e = runner::resolve_study(&TestOptions::default(), &opts, &layers)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no IPv4 server given") && e.contains("--host4 ADDR"),
        "{e}"
    );
    let both = runner::Hosts {
        host4: Some("192.0.2.7".into()),
        host6: Some("2001:db8::7".into()),
        ..runner::Hosts::default()
    };
    let s = study(&Layers {
        hosts: Some(&both),
        ..Layers::default()
    })
    .unwrap();
    assert_eq!(s.families, [Family::V4, Family::V6]);
}

#[test]
fn an_address_decides_the_family_and_refuses_the_other() {
    let s = study(&Layers {
        hosts: Some(&runner::Hosts::one("192.0.2.7")),
        ..Layers::default()
    })
    .unwrap();
    assert_eq!(s.families, [Family::V4]);
    let opts = StudyOptions {
        families: Some(vec![4, 6]),
        ..StudyOptions::default()
    };
    let layers = Layers {
        hosts: Some(&runner::Hosts::one("::1")),
        ..Layers::default()
    };
    let e = runner::resolve_study(&TestOptions::default(), &opts, &layers)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("::1 is an IPv6 address") && e.contains("--families 6"),
        "{e}"
    );
}

#[test]
fn out_of_range_values_are_refused_by_the_study_limits() {
    let e = runner::resolve_study(
        &TestOptions {
            duration_s: Some(-1.0),
            ..TestOptions::default()
        },
        &StudyOptions::default(),
        &Layers::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("duration"), "{e}");
    let one = OneTest {
        test: RunTest::One(TestKind::TcpRr),
        family: Family::V4,
        size_bytes: None,
        traffic_seed: None,
        rate_search: false,
    };
    let e = runner::resolve_run(
        &TestOptions {
            streams: Some(0),
            ..TestOptions::default()
        },
        &one,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("streams"), "{e}");
    // The same options without the bad value make one test.
    match runner::resolve_run(&TestOptions::default(), &one).unwrap() {
        RunSpec::One(t) => assert_eq!((t.kind, t.family), (TestKind::TcpRr, Family::V4)),
        RunSpec::Loaded(l) => panic!("tcp-rr resolved to rrul: {l:?}"),
    }
}
