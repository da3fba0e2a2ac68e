//! The views a report can hold: each metric it draws against packet size, per
//! transport, with its name, unit and the test kinds that supply it.

use wire::metric_table;
use wire::metrics;
use wire::spec::{Direction, TestKind, Transport};

/// One figure / table family: a metric of one transport against packet size.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// File-name slug, e.g. `tcp-throughput`.
    pub id: String,
    pub transport: Transport,
    pub kind: TestKind,
    pub direction: Direction,
    /// Metric name from `wire::metrics`.
    pub metric: &'static str,
    /// Lower-case quantity for sentences: "throughput", "RTT", …
    pub quantity: &'static str,
    /// Display unit after `scale`: "Mbit/s", "ms", "%".
    pub unit: &'static str,
    /// Raw metric value × scale = displayed value.
    pub scale: f64,
    /// Latency-like: Mann-Whitney U is the primary test.
    pub rank_test: bool,
    pub higher_is_better: bool,
    /// Set when the method itself bounds this metric (udp-stream loss under an RFC 2544
    /// search): why its values are a criterion, not a finding. Such a view is shown but
    /// not compared.
    pub criterion: Option<String>,
    /// For CPU: the systems measured with client and server on one host, in words
    /// ("one host: client and server together", or naming the systems when only some
    /// were); part of the title so no reader takes it for one end's CPU.
    pub host_note: Option<String>,
    /// The systems `host_note` is true of (every system when it names none).
    pub host_note_on: Vec<String>,
}

impl View {
    /// "TCP throughput", "UDP RTT (reverse)".
    pub fn title(&self) -> String {
        let dir = match self.direction {
            Direction::Forward => "",
            Direction::Reverse => " (reverse)",
            Direction::Bidir => " (bidirectional)",
        };
        let note = self
            .host_note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        format!("{} {}{}{note}", self.transport, self.quantity, dir)
    }

    /// The title in a sentence about one system: its own qualifier only ("(one process:
    /// client and built-in server together)" where that is true of it, none where not),
    /// so no sentence about one system carries another's.
    pub fn title_on(&self, system: &str) -> String {
        let mut view = self.clone();
        view.host_note = self
            .host_note
            .as_deref()
            .filter(|_| self.host_note_on.iter().any(|s| s == system))
            .map(|n| match (n.split_once(" for "), n.rsplit_once(':')) {
                // "one process for A, B: client and …" → "one process: client and …"
                (Some((head, _)), Some((_, tail))) => format!("{head}:{tail}"),
                _ => n.to_string(),
            });
        view.title()
    }

    /// Name of the primary significance test.
    pub fn test_name(&self) -> &'static str {
        if self.rank_test {
            "Mann-Whitney U"
        } else {
            "Welch's t-test"
        }
    }
}

/// A view's metric and where it comes from; its name and unit are the metric table's
/// ([`view_quantity`], [`view_unit`]).
pub(super) struct ViewDef {
    pub(super) metric: &'static str,
    /// The quantity's words where the metric's own ([`view_quantity`]) would name two
    /// views alike: QUIC's goodput is a UDP goodput "over QUIC".
    pub(super) quantity: Option<&'static str>,
    pub(super) transport: Transport,
    pub(super) kinds: &'static [TestKind],
    /// Latency-like: Mann-Whitney U is the primary test.
    pub(super) rank_test: bool,
}

use TestKind::{QuicRr, QuicStream, Rrul, TcpCrr, TcpRr, TcpStream, UdpRr, UdpStream};

/// The figures the studies publish, in display order. For each, the first test kind
/// with data supplies the metric (RTT from request/response tests when there are any).
pub(super) const VIEW_DEFS: &[ViewDef] = &[
    ViewDef {
        metric: metrics::THROUGHPUT_BPS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpStream],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::THROUGHPUT_BPS,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpStream],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::RTT_MEAN_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpRr, TcpStream],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::RTT_MEAN_NS,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpRr, UdpStream],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::JITTER_RFC3550_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::JITTER_RFC3550_NS,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::LOSS_PCT,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        rank_test: false,
    },
    // Two different CPU figures, never one for the other: the host's busy time (all
    // cores, every process's load included) and the dualperf client process's own
    // (user + system, % of one core).
    ViewDef {
        metric: metrics::CPU_LOCAL_PCT,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::PROC_LOCAL_PCT,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        rank_test: false,
    },
    // Two different CPU figures, never one for the other: the host's busy time (all
    // cores, every process's load included) and the dualperf client process's own
    // (user + system, % of one core).
    ViewDef {
        metric: metrics::CPU_LOCAL_PCT,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::PROC_LOCAL_PCT,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        rank_test: false,
    },
    // Latency under load (rrul): the probes' median RTT beside the load, its
    // responsiveness, and the load's goodput per direction.
    ViewDef {
        metric: metrics::LOADED_TCP_RTT_P50_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::LOADED_UDP_RTT_P50_NS,
        quantity: None,
        transport: Transport::Udp,
        kinds: &[Rrul],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::RPM_LOADED,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::UPLOAD_BPS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::DOWNLOAD_BPS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        rank_test: false,
    },
    // Connection setup (tcp-crr): the rate and the connect-time percentiles, tested as
    // RTT is (Welch and the rank test).
    ViewDef {
        metric: metrics::CONNECTIONS_PER_S,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpCrr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::CONNECT_TIME_P50_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpCrr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::CONNECT_TIME_P90_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpCrr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::CONNECT_TIME_P99_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpCrr],
        rank_test: true,
    },
    ViewDef {
        metric: metrics::TRANSACTION_TIME_MEAN_NS,
        quantity: None,
        transport: Transport::Tcp,
        kinds: &[TcpCrr],
        rank_test: true,
    },
    // QUIC runs over UDP: its views read "UDP … over QUIC".
    ViewDef {
        metric: metrics::THROUGHPUT_BPS,
        quantity: Some("goodput over QUIC"),
        transport: Transport::Udp,
        kinds: &[QuicStream],
        rank_test: false,
    },
    ViewDef {
        metric: metrics::RTT_MEAN_NS,
        quantity: Some("RTT over QUIC"),
        transport: Transport::Udp,
        kinds: &[QuicRr],
        rank_test: true,
    },
];

/// The report's short name of a view's metric ([`wire::metric_table`]'s `quantity`):
/// sentences, axes and the figure's file name use it.
pub(super) fn view_quantity(metric: &'static str) -> &'static str {
    metric_table::info(metric)
        .and_then(|i| i.quantity)
        .unwrap_or(metric)
}

/// A view's quantity: its own words, else its metric's ([`view_quantity`]).
pub(super) fn def_quantity(def: &ViewDef) -> &'static str {
    def.quantity.unwrap_or_else(|| view_quantity(def.metric))
}

/// The unit a view shows its metric in, and the factor from the metric's own unit:
/// rates in Mbit/s, times in ms (µs when every value is below 1 ms: [`view_data`]).
pub(super) fn view_unit(metric: &str) -> (&'static str, f64) {
    match metrics::unit_of(metric) {
        "bit/s" => ("Mbit/s", 1e-6),
        "ns" => ("ms", 1e-6),
        unit => (
            metric_table::info(metric).map_or(unit, |i| i.unit_words()),
            1.0,
        ),
    }
}

pub(super) fn view_id(def: &ViewDef, dir: Direction) -> String {
    let transport = match def.transport {
        Transport::Tcp => "tcp",
        Transport::Udp => "udp",
    };
    let suffix = match dir {
        Direction::Forward => "",
        Direction::Reverse => "-reverse",
        Direction::Bidir => "-bidir",
    };
    // "RTT under load (p50 of probes)" → "rtt-under-load-p50-of-probes".
    let slug = def_quantity(def)
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("{transport}-{slug}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view's name and unit are the metric table's: every metric drawn has its short
    /// name there, and is shown in a reader's unit, not the stored one.
    #[test]
    fn every_view_takes_its_name_and_unit_from_the_metric_table() {
        for def in VIEW_DEFS {
            let info = metric_table::info(def.metric);
            assert!(
                info.and_then(|i| i.quantity).is_some(),
                "{} has no quantity in the metric table",
                def.metric
            );
            let (unit, scale) = view_unit(def.metric);
            assert!(
                !["bit/s", "ns", ""].contains(&unit),
                "{}: {unit}",
                def.metric
            );
            assert!(scale > 0.0);
        }
        assert_eq!(view_unit(metrics::PROC_LOCAL_PCT), ("% of one core", 1.0));
        assert_eq!(view_unit(metrics::RTT_MEAN_NS), ("ms", 1e-6));
        assert_eq!(view_unit(metrics::UPLOAD_BPS), ("Mbit/s", 1e-6));
        assert_eq!(
            view_quantity(metrics::LOADED_UDP_RTT_P50_NS),
            "RTT under load (p50 of probes)"
        );
    }
}
