//! `dualperf model`: the theoretical maximum goodput of a link per payload size, family
//! and transport, and where the line time or airtime goes. The arithmetic lives in the
//! `model` crate; this module parses the flags and prints.

use anyhow::Context;
use clap::{Args, ValueEnum};
use model::wifi::{self, Access, AckRate, Assumptions, Backoff, Phy, Preamble, Security, TcpAcks};
use model::{Link, OverheadModel};
use serde::Serialize;
use std::process::ExitCode;
use wire::spec::{Family, TestKind, Transport};

const LIMITS: &str = "one saturated sender; no collisions, retries, rate adaptation, \
                      RTS/CTS, beacons or other traffic: an upper bound, not a prediction";

#[derive(Args, Debug)]
pub struct ModelArgs {
    /// The link: loopback, ethernet[:RATE], tbf:RATE, 802.11a:RATE, 802.11b:RATE,
    /// 802.11g:RATE (Mbit/s), 802.11n:mcs=M,width=20|40,gi=long|short[,nss=N][,band=2.4|5],
    /// 802.11ac:mcs=M,nss=N,width=20|40|80|160,gi=long|short,
    /// 802.11ax:mcs=M,nss=N,width=20|40|80|160,gi=0.8|1.6|3.2[,band=2.4|5|6].
    #[arg(long, value_name = "LINK", value_parser = crate::args::LinkParser)]
    link: Link,
    /// Payload sizes in bytes (UDP datagram payload; TCP write size), comma-separated.
    #[arg(
        long,
        value_name = "BYTES,...",
        value_delimiter = ',',
        value_parser = crate::args::parse_bytes_u32,
        default_value = "128,256,512,1024,1408"
    )]
    sizes: Vec<u32>,
    /// UDP datagrams, or bulk TCP (full-MSS segments whatever the write size).
    #[arg(long, value_enum, default_value_t = TransportArg::Udp)]
    transport: TransportArg,
    /// IP version(s).
    #[arg(long, value_enum, default_value_t = FamilyArg::Both)]
    family: FamilyArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// IP MTU in bytes (default 1500; loopback 65536).
    #[arg(long, value_name = "BYTES")]
    mtu: Option<u32>,
    /// 802.11: 8 bytes of LLC/SNAP per MSDU.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    llc_snap: OnOff,
    /// 802.11: ACK / Block Ack at the highest mandatory rate not above the data rate
    /// (basic, as the standard requires) or at the data rate.
    #[arg(long, value_enum, default_value_t = AckRateArg::Basic)]
    ack_rate: AckRateArg,
    /// 802.11b PLCP preamble.
    #[arg(long, value_enum, default_value_t = PreambleArg::Long)]
    preamble: PreambleArg,
    /// 802.11: mean backoff of CWmin/2 slots per access, or none.
    #[arg(long, value_enum, default_value_t = BackoffArg::Mean)]
    backoff: BackoffArg,
    /// 802.11 channel access: dcf (DIFS) or an EDCA access category [default: dcf for
    /// 802.11a/b/g, be for 802.11n/ac/ax].
    #[arg(long, value_enum)]
    access: Option<AccessArg>,
    /// 802.11n/ac/ax: MPDUs per A-MPDU (answered by a Block Ack).
    #[arg(long, value_name = "N", default_value_t = 1)]
    ampdu: u32,
    /// 802.11n/ac/ax: fill each MPDU with as many MSDUs as an A-MSDU holds.
    #[arg(long)]
    amsdu: bool,
    /// 802.11: link encryption (CCMP adds 16 bytes per MPDU, GCMP 24).
    #[arg(long, value_enum, default_value_t = SecurityArg::Open)]
    security: SecurityArg,
    /// TCP: the receiver acknowledges every segment or every second one (delayed ACK).
    #[arg(long, value_enum, default_value_t = TcpAcksArg::Every)]
    tcp_acks: TcpAcksArg,
    /// TCP timestamp option (12 bytes per segment, on by default in Linux).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    tcp_timestamps: OnOff,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum TransportArg {
    Udp,
    Tcp,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum FamilyArg {
    #[value(name = "4")]
    V4,
    #[value(name = "6")]
    V6,
    Both,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum OnOff {
    On,
    Off,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum AckRateArg {
    Basic,
    Data,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum PreambleArg {
    Long,
    Short,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum BackoffArg {
    Mean,
    None,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum AccessArg {
    Dcf,
    Bk,
    Be,
    Vi,
    Vo,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum SecurityArg {
    Open,
    Ccmp,
    Gcmp,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum TcpAcksArg {
    Every,
    Delayed,
}

impl ModelArgs {
    fn assumptions(&self) -> Assumptions {
        Assumptions {
            llc_snap: self.llc_snap == OnOff::On,
            ack_rate: match self.ack_rate {
                AckRateArg::Basic => AckRate::Basic,
                AckRateArg::Data => AckRate::Data,
            },
            backoff: match self.backoff {
                BackoffArg::Mean => Backoff::Mean,
                BackoffArg::None => Backoff::None,
            },
            access: self.access.map(|a| match a {
                AccessArg::Dcf => Access::Dcf,
                AccessArg::Bk => Access::Bk,
                AccessArg::Be => Access::Be,
                AccessArg::Vi => Access::Vi,
                AccessArg::Vo => Access::Vo,
            }),
            ampdu: self.ampdu,
            amsdu: self.amsdu,
            security: match self.security {
                SecurityArg::Open => Security::Open,
                SecurityArg::Ccmp => Security::Ccmp,
                SecurityArg::Gcmp => Security::Gcmp,
            },
            tcp_acks: match self.tcp_acks {
                TcpAcksArg::Every => TcpAcks::Every,
                TcpAcksArg::Delayed => TcpAcks::Delayed,
            },
            tcp_timestamps: self.tcp_timestamps == OnOff::On,
            mtu_bytes: self.mtu.unwrap_or(1500),
        }
    }

    fn families(&self) -> Vec<Family> {
        match self.family {
            FamilyArg::V4 => vec![Family::V4],
            FamilyArg::V6 => vec![Family::V6],
            FamilyArg::Both => vec![Family::V4, Family::V6],
        }
    }

    fn transport(&self) -> Transport {
        match self.transport {
            TransportArg::Udp => Transport::Udp,
            TransportArg::Tcp => Transport::Tcp,
        }
    }
}

/// One row: a payload size and family on the link.
#[derive(Serialize, Debug)]
struct Row {
    payload_bytes: u32,
    family: Family,
    /// None when the link has no rate (loopback, ethernet without one).
    goodput_bps: Option<f64>,
    /// Payload share of the line time or airtime.
    payload_share: f64,
    payloads_per_s: Option<f64>,
    /// Shares of the line time or airtime, summing to 1.
    #[serde(serialize_with = "as_map")]
    airtime_shares: Vec<(&'static str, f64)>,
    /// 802.11 only: the model's whole answer (airtime in ns per channel access).
    #[serde(skip_serializing_if = "Option::is_none")]
    wifi: Option<wifi::Estimate>,
}

#[derive(Serialize, Debug)]
struct Report {
    link: String,
    description: String,
    rate_bps: Option<f64>,
    transport: Transport,
    #[serde(serialize_with = "as_map")]
    assumptions: Vec<(&'static str, String)>,
    limits: String,
    rows: Vec<Row>,
}

/// Pairs as a JSON object, in their order.
fn as_map<S: serde::Serializer, T: Serialize>(
    pairs: &[(&'static str, T)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

pub fn main(args: ModelArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(!args.sizes.is_empty(), "--sizes needs at least one size");
    if let Some(mtu) = args.mtu {
        anyhow::ensure!(
            (576..=65_536).contains(&mtu),
            "--mtu {mtu} is outside 576..65536 bytes"
        );
    }
    let report = build(&args)?;
    if args.json {
        let text = serde_json::to_string_pretty(&report).context("writing JSON")?;
        outln!("{text}")?;
    } else {
        print_table(&report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn build(args: &ModelArgs) -> anyhow::Result<Report> {
    let transport = args.transport();
    // A UDP payload is one datagram: beyond the family's maximum no link carries it
    // (IP fragmentation, which the framing models count, stops at 65535 bytes).
    if transport == Transport::Udp {
        for &size in &args.sizes {
            for family in args.families() {
                let max_bytes = family.max_udp_payload_bytes();
                if size > max_bytes {
                    return Err(wire::proto::TestSpecError::PayloadTooLarge {
                        payload_bytes: size,
                        family,
                        max_bytes,
                    })
                    .context("--sizes");
                }
            }
        }
    }
    let mut link = args.link;
    if let Link::Wifi(Phy::Dsss { preamble, .. }) = &mut link {
        *preamble = match args.preamble {
            PreambleArg::Long => Preamble::Long,
            PreambleArg::Short => Preamble::Short,
        };
    }
    let mut rows = Vec::new();
    let (description, rate_bps, assumptions) = match link {
        Link::Wifi(phy) => {
            let a = args.assumptions();
            for &size in &args.sizes {
                for family in args.families() {
                    let e =
                        wifi::estimate(&phy, &a, family, transport, size).with_context(|| {
                            format!("{size}-byte payload over IPv{}", family_digit(family))
                        })?;
                    rows.push(wifi_row(family, e));
                }
            }
            (
                phy.describe(),
                Some(phy.data_rate_bps()),
                wifi_assumptions(&phy, &a, transport),
            )
        }
        Link::Loopback => overhead_rows(args, OverheadModel::loopback(), None, &mut rows),
        Link::Ethernet { rate_bps } => {
            overhead_rows(args, OverheadModel::ethernet(), rate_bps, &mut rows)
        }
        Link::Tbf { rate_bps } => {
            overhead_rows(args, OverheadModel::tbf_veth(), Some(rate_bps), &mut rows)
        }
    };
    Ok(Report {
        link: link.to_string(),
        description,
        rate_bps,
        transport,
        assumptions,
        limits: match link {
            Link::Wifi(_) => LIMITS.to_string(),
            _ => {
                "framing only: the link's own line rate, no queueing, loss or CPU limit".to_string()
            }
        },
        rows,
    })
}

type Described = (String, Option<f64>, Vec<(&'static str, String)>);

/// Rows of the framing models (loopback, Ethernet, tbf): line bytes, no airtime.
fn overhead_rows(
    args: &ModelArgs,
    mut m: OverheadModel,
    rate: Option<u64>,
    rows: &mut Vec<Row>,
) -> Described {
    let transport = args.transport();
    if let Some(mtu) = args.mtu {
        m.mtu_bytes = mtu;
    }
    let kind = match transport {
        Transport::Udp => TestKind::UdpStream,
        Transport::Tcp => TestKind::TcpStream,
    };
    let rate_f = rate.map(|r| r as f64);
    for &size in &args.sizes {
        for family in args.families() {
            let c = m.cost(family, kind, size);
            rows.push(Row {
                payload_bytes: size,
                family,
                goodput_bps: rate_f.map(|r| c.max_goodput_bps(r)),
                payload_share: c.efficiency(),
                payloads_per_s: rate_f.map(|r| c.payloads_per_s(r)),
                airtime_shares: vec![
                    ("payload", c.efficiency()),
                    ("headers and framing", 1.0 - c.efficiency()),
                ],
                wifi: None,
            });
        }
    }
    let mut assumptions = vec![
        ("link model", m.link.name().to_string()),
        ("MTU", format!("{} bytes", m.mtu_bytes)),
    ];
    if transport == Transport::Tcp {
        assumptions.push((
            "TCP",
            format!(
                "bulk, full-MSS segments with the 12-byte timestamp option (MSS {} / {} bytes \
                 over IPv4 / IPv6)",
                m.mss_bytes(Family::V4),
                m.mss_bytes(Family::V6)
            ),
        ));
    }
    (m.link.name().to_string(), rate_f, assumptions)
}

fn family_digit(f: Family) -> &'static str {
    match f {
        Family::V4 => "4",
        Family::V6 => "6",
    }
}

fn wifi_row(family: Family, e: wifi::Estimate) -> Row {
    let b = e.airtime;
    let total = b.total_ns();
    Row {
        payload_bytes: e.payload_bytes,
        family,
        goodput_bps: Some(e.goodput_bps),
        payload_share: b.payload_ns / total,
        payloads_per_s: Some(e.payloads_per_s),
        airtime_shares: vec![
            ("contention", b.contention_ns / total),
            ("preamble and headers", b.preamble_headers_ns / total),
            ("payload", b.payload_ns / total),
            ("SIFS and ACK", b.sifs_ack_ns / total),
            ("TCP acks", b.tcp_acks_ns / total),
        ],
        wifi: Some(e),
    }
}

fn wifi_assumptions(
    phy: &Phy,
    a: &Assumptions,
    transport: Transport,
) -> Vec<(&'static str, String)> {
    let on = |b: bool| if b { "on" } else { "off" }.to_string();
    let ack_phy = wifi::airtime::control_response_phy(phy, a.ack_rate);
    let mut out = vec![
        ("access", a.access_for(phy).name().to_string()),
        (
            "backoff",
            match a.backoff {
                Backoff::Mean => "mean, CWmin/2 slots".to_string(),
                Backoff::None => "none".to_string(),
            },
        ),
        (
            "ACK rate",
            match a.ack_rate {
                AckRate::Basic => format!(
                    "basic, {} Mbit/s",
                    ack_phy
                        .kernel_rate_100kbps()
                        .map_or(0.0, |r| f64::from(r) / 10.0)
                ),
                AckRate::Data => "the data rate".to_string(),
            },
        ),
        ("LLC/SNAP", on(a.llc_snap)),
        (
            "security",
            match a.security {
                Security::Open => "open".to_string(),
                Security::Ccmp => "CCMP, 16 bytes per MPDU".to_string(),
                Security::Gcmp => "GCMP, 24 bytes per MPDU".to_string(),
            },
        ),
        (
            "A-MPDU",
            match (a.ampdu, phy) {
                (1, Phy::Vht { .. } | Phy::He { .. }) => {
                    "one MPDU (a VHT/HE PPDU always carries an A-MPDU)".to_string()
                }
                (1, _) => "none".to_string(),
                (n, _) => format!("up to {n} MPDUs, Block Ack"),
            },
        ),
        ("A-MSDU", on(a.amsdu)),
        ("MTU", format!("{} bytes", a.mtu_bytes)),
    ];
    if matches!(phy, Phy::Dsss { .. }) {
        out.push((
            "preamble",
            match phy {
                Phy::Dsss {
                    preamble: Preamble::Short,
                    rate_100kbps,
                } if *rate_100kbps > 10 => "short",
                _ => "long",
            }
            .to_string(),
        ));
    }
    if transport == Transport::Tcp {
        out.push((
            "TCP",
            format!(
                "bulk, full-MSS segments; timestamps {}; acks {}",
                on(a.tcp_timestamps),
                match a.tcp_acks {
                    TcpAcks::Every => "every segment",
                    TcpAcks::Delayed => "every second segment",
                }
            ),
        ));
    }
    if let Some(kernel) = phy.kernel_rate_100kbps() {
        out.push((
            "rate as iw prints it",
            format!("{:.1} MBit/s", f64::from(kernel) / 10.0),
        ));
    }
    out
}

fn mbit(bps: f64) -> String {
    format!("{:.2}", bps / 1e6)
}

fn print_table(r: &Report) -> anyhow::Result<()> {
    outln!("link: {} ({})", r.link, r.description)?;
    if let Some(rate) = r.rate_bps {
        outln!("rate: {}", wire::quantity::display_bit_rate(rate))?;
    }
    outln!("transport: {}", r.transport)?;
    for (k, v) in &r.assumptions {
        outln!("{k}: {v}")?;
    }
    outln!()?;
    let share_names: Vec<&str> = r
        .rows
        .first()
        .map(|row| row.airtime_shares.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default();
    let mut header = format!(
        "{:>7} {:>4} {:>14} {:>10} {:>12}",
        "size", "IP", "goodput Mbit/s", "% of rate", "payloads/s"
    );
    for n in &share_names {
        header.push_str(&format!(
            " {:>w$}",
            format!("% {n}"),
            w = n.len().max(7) + 2
        ));
    }
    outln!("{header}")?;
    for row in &r.rows {
        let goodput = row.goodput_bps.map(mbit).unwrap_or_else(|| "-".to_string());
        let pct_rate = match (row.goodput_bps, r.rate_bps) {
            (Some(g), Some(rate)) if rate > 0.0 => format!("{:.1}", g / rate * 100.0),
            _ => "-".to_string(),
        };
        let pps = row
            .payloads_per_s
            .map(|p| format!("{p:.0}"))
            .unwrap_or_else(|| "-".to_string());
        let mut line = format!(
            "{:>7} {:>4} {goodput:>14} {pct_rate:>10} {pps:>12}",
            row.payload_bytes,
            format!("v{}", family_digit(row.family))
        );
        for (n, share) in &row.airtime_shares {
            line.push_str(&format!(" {:>w$.1}", share * 100.0, w = n.len().max(7) + 2));
        }
        outln!("{line}")?;
    }
    if let Some(capped) = r
        .rows
        .iter()
        .filter_map(|row| row.wifi.as_ref())
        .find_map(|e| {
            e.aggregation_capped_by
                .as_ref()
                .map(|c| (e.mpdus_per_access, c))
        })
    {
        outln!()?;
        outln!("A-MPDU capped at {} MPDUs by {}", capped.0, capped.1)?;
    }
    outln!()?;
    outln!("model limits: {}", r.limits)?;
    Ok(())
}
