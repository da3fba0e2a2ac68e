//! `dualperf run --lab p2p|client-server`: one test in a temporary network-namespace
//! lab, which the runner's target builds (with a `dualperf server` in its server
//! namespace) and removes. Here: the lab removed on Ctrl-C / SIGTERM too (a handler
//! removes every lab of this process and exits with 130; the main thread never exits on
//! its own while that runs), and the lab's description under a text result.

use super::say;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `f` (which builds, uses and removes a lab) with the Ctrl-C handler that removes
/// the lab; an interrupted `f` waits for the handler to finish and exit.
pub(super) fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    crate::interrupt::remove_labs_and_exit()?;
    let out = f();
    // Interrupted: the handler is removing the lab and will exit(130); wait for it.
    while crate::interrupt::INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    out
}

/// The lab's description lines under a text result.
pub(super) fn say_lab(md: &BTreeMap<String, String>) {
    for (k, v) in md {
        say(&format!("  {k:<34} {v}"));
    }
    say("  (the lab was removed)");
}

/// The 802.11 link a lab emulated (`lab.emulated_link`), as the model reads it.
pub(super) fn emulated_link(md: &BTreeMap<String, String>) -> Option<model::wifi::Phy> {
    match model::link::parse(md.get("lab.emulated_link")?) {
        Ok(model::Link::Wifi(phy)) => Some(phy),
        _ => None,
    }
}

/// Beside a result over an emulated 802.11 link: the link, the model's ceiling for this
/// family, transport and payload (the one airtime model, `model::wifi::estimate`, under
/// the assumptions the lab's emulation was sized with), and what the emulation does not
/// charge, so a TCP result above the ceiling reads as what it is.
pub(super) fn emulated_context(
    phy: &model::wifi::Phy,
    lab: Option<&BTreeMap<String, String>>,
    s: &wire::spec::TestSpec,
) -> String {
    let link = model::Link::Wifi(*phy).to_string();
    let get = |k: &str| {
        lab.and_then(|m| m.get(k))
            .and_then(|v| v.parse::<u32>().ok())
    };
    let a = model::wifi::Assumptions {
        mtu_bytes: get("lab.mtu_bytes").unwrap_or(1500),
        ampdu: get("lab.emulated_ampdu").unwrap_or(1),
        ..model::wifi::Assumptions::default()
    };
    let transport = s.kind.transport();
    let mut out = format!(
        "  {:<34} {link}, tbf-shaped veths in the lab (a model of the link, not a radio)\n",
        "emulated link"
    );
    let command = format!(
        "dualperf model --link {link} --transport {} --sizes {}",
        transport.to_string().to_lowercase(),
        s.payload_bytes
    );
    match model::wifi::estimate(phy, &a, s.family, transport, s.payload_bytes) {
        Ok(e) => out.push_str(&format!(
            "  {:<34} {:.2} Mbit/s goodput for {} {} {} B ({command})\n",
            "the link model's ceiling",
            e.goodput_bps / 1e6,
            s.family,
            transport,
            s.payload_bytes
        )),
        Err(e) => out.push_str(&format!(
            "  {:<34} unavailable: {e}\n",
            "the link model's ceiling"
        )),
    }
    let not_charged = if transport == wire::spec::Transport::Tcp {
        "the airtime of TCP's acks: each direction is shaped on its own, so the acks do not \
         take airtime from the data as on one shared medium, and TCP can pass the ceiling"
            .to_string()
    } else {
        model::wifi::emulation::LEAVES_OUT.to_string()
    };
    out.push_str(&format!(
        "  {:<34} {not_charged}\n",
        "not charged by the emulation"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emulated_wifi_result_is_set_beside_the_models_ceiling_and_what_tbf_leaves_out() {
        let lab: BTreeMap<String, String> = [
            ("lab.emulated_link", "802.11g:54"),
            ("lab.mtu_bytes", "1500"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let phy = emulated_link(&lab).expect("802.11g is an emulated 802.11 link");
        let mut spec = wire::spec::TestSpec::new(
            wire::spec::TestKind::TcpStream,
            wire::spec::Family::V6,
            1408,
        );
        spec.payload_bytes = 1408;
        let t = emulated_context(&phy, Some(&lab), &spec);
        // The model's own number for this link, family, transport and size.
        let want = model::wifi::estimate(
            &phy,
            &model::wifi::Assumptions::default(),
            wire::spec::Family::V6,
            wire::spec::Transport::Tcp,
            1408,
        )
        .unwrap()
        .goodput_bps;
        assert!(
            t.contains(&format!(
                "{:.2} Mbit/s goodput for IPv6 TCP 1408 B (dualperf model --link 802.11g:54 \
                 --transport tcp --sizes 1408)",
                want / 1e6
            )),
            "{t}"
        );
        assert!(t.contains("802.11g:54, tbf-shaped veths in the lab"), "{t}");
        assert!(t.contains("the airtime of TCP's acks"), "{t}");
        // No emulated 802.11 link: nothing to add.
        assert!(emulated_link(&BTreeMap::new()).is_none());
    }
}
