//! `dualperf export`'s rows: tidy long-format CSV (the `csv` crate) or JSON, one row
//! per run and metric (or per run, interval sample and metric), with the cell's axes,
//! the settings it asked for, what each side applied and the campaign's hosts, written
//! as they are read from the store (memory stays bounded at any number of runs).

use std::io::Write;
use store::{RunStatus, Store, StoreError};

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// JSON (an array of row objects) instead of CSV.
    pub json: bool,
    /// Only these campaigns; empty: all.
    pub campaigns: Vec<i64>,
    pub include_warmup: bool,
    /// Failed attempts too (one row each, metric empty, with the reason).
    pub include_failed: bool,
    /// The per-interval samples instead of the runs' metrics.
    pub intervals: bool,
    /// CSV text cells exactly as stored (by default made safe for spreadsheets).
    pub raw_text: bool,
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    pub rows: usize,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no campaign {0} in the database")]
    NoCampaign(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing failed (a closed pipe, a full disk).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Encode(String),
}

/// One tidy row: a run's metric with its cell's axes, the settings the cell asked for
/// (empty where the study left the OS default) and the campaign's hosts, so that
/// `df.groupby([...])` needs no join. Column order is the field order.
#[derive(serde::Serialize, Clone)]
struct Row<'a> {
    campaign_id: i64,
    campaign_label: &'a str,
    run_id: i64,
    family: u8,
    test: &'static str,
    transport: String,
    payload_bytes: u32,
    direction: &'static str,
    repetition: u32,
    warmup: bool,
    status: &'static str,
    failure_reason: &'a str,
    started_unix_ns: i64,
    metric: &'a str,
    value: Option<f64>,
    unit: &'static str,
    // The cell's settings, flat (the csv crate writes no nested or flattened fields).
    client_os: &'a str,
    server_os: &'a str,
    run_duration_s: Option<f64>,
    run_count: Option<u64>,
    streams: Option<u16>,
    rate_bps: Option<u64>,
    rate_pps: Option<u64>,
    sndbuf_bytes: Option<u32>,
    rcvbuf_bytes: Option<u32>,
    nodelay: Option<bool>,
    mss_bytes: Option<u32>,
    tos: Option<u8>,
    flowlabel: Option<u32>,
    congestion: Option<&'a str>,
    dont_fragment: Option<bool>,
    // What the run applied (as the kernel read it back), per side; the UDP datapath is
    // the calls that ran (e.g. linux:sendmmsg/recvmmsg+gso).
    client_sndbuf_applied: Option<&'a str>,
    client_rcvbuf_applied: Option<&'a str>,
    server_sndbuf_applied: Option<&'a str>,
    server_rcvbuf_applied: Option<&'a str>,
    client_udp_datapath: Option<&'a str>,
    server_udp_datapath: Option<&'a str>,
}

/// What a cell asked for and where it ran (export columns after `unit`).
#[derive(Default, Clone)]
struct Settings {
    client_os: String,
    server_os: String,
    run_duration_s: Option<f64>,
    run_count: Option<u64>,
    streams: Option<u16>,
    rate_bps: Option<u64>,
    rate_pps: Option<u64>,
    sndbuf_bytes: Option<u32>,
    rcvbuf_bytes: Option<u32>,
    nodelay: Option<bool>,
    mss_bytes: Option<u32>,
    tos: Option<u8>,
    flowlabel: Option<u32>,
    congestion: Option<String>,
    dont_fragment: Option<bool>,
}

impl Settings {
    fn of(spec: Option<&wire::spec::TestSpec>, client_os: &str, server_os: &str) -> Settings {
        use wire::spec::{Bound, Rate};
        let mut s = Settings {
            client_os: client_os.to_string(),
            server_os: server_os.to_string(),
            ..Settings::default()
        };
        let Some(t) = spec else { return s };
        match t.bound {
            Bound::DurationNs(ns) => s.run_duration_s = Some(ns as f64 / 1e9),
            Bound::Count(n) => s.run_count = Some(n),
        }
        s.streams = Some(t.streams);
        match t.rate {
            Some(Rate::BitsPerSec(b)) => s.rate_bps = Some(b),
            Some(Rate::PacketsPerSec(p)) => s.rate_pps = Some(p),
            None => {}
        }
        let o = &t.socket;
        s.sndbuf_bytes = o.sndbuf_bytes;
        s.rcvbuf_bytes = o.rcvbuf_bytes;
        s.nodelay = Some(o.nodelay);
        s.mss_bytes = o.mss_bytes;
        s.tos = o.tos;
        s.flowlabel = o.flowlabel;
        s.congestion = o.congestion.clone();
        s.dont_fragment = Some(o.dont_fragment);
        s
    }
}

/// One row of `export --intervals`: a run's interval sample of one metric.
#[derive(serde::Serialize)]
struct IntervalRow<'a> {
    campaign_id: i64,
    campaign_label: &'a str,
    run_id: i64,
    family: u8,
    test: &'static str,
    payload_bytes: u32,
    direction: &'static str,
    repetition: u32,
    warmup: bool,
    interval_index: usize,
    start_ns: i64,
    end_ns: i64,
    metric: &'a str,
    value: Option<f64>,
    unit: &'static str,
}

/// CSV columns of the run export, in order (the header is written even with no rows).
const CSV_COLUMNS: &[&str] = &[
    "campaign_id",
    "campaign_label",
    "run_id",
    "family",
    "test",
    "transport",
    "payload_bytes",
    "direction",
    "repetition",
    "warmup",
    "status",
    "failure_reason",
    "started_unix_ns",
    "metric",
    "value",
    "unit",
    "client_os",
    "server_os",
    "run_duration_s",
    "run_count",
    "streams",
    "rate_bps",
    "rate_pps",
    "sndbuf_bytes",
    "rcvbuf_bytes",
    "nodelay",
    "mss_bytes",
    "tos",
    "flowlabel",
    "congestion",
    "dont_fragment",
    "client_sndbuf_applied",
    "client_rcvbuf_applied",
    "server_sndbuf_applied",
    "server_rcvbuf_applied",
    "client_udp_datapath",
    "server_udp_datapath",
];

/// CSV columns of `export --intervals`.
const INTERVAL_COLUMNS: &[&str] = &[
    "campaign_id",
    "campaign_label",
    "run_id",
    "family",
    "test",
    "payload_bytes",
    "direction",
    "repetition",
    "warmup",
    "interval_index",
    "start_ns",
    "end_ns",
    "metric",
    "value",
    "unit",
];

/// A csv error, with an I/O error kept as one (so `export | head` is recognised).
fn csv_error(e: csv::Error) -> ExportError {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => ExportError::Io(io),
        other => ExportError::Encode(format!("writing CSV: {other:?}")),
    }
}

/// Writes rows as a JSON array or as CSV (the `csv` crate: quoting, no header of its
/// own — ours is written first, so an empty export still has one).
enum Sink<W: Write> {
    Json {
        out: W,
        first: bool,
    },
    /// `raw`: text cells as stored, else made safe for spreadsheets.
    Csv {
        w: Box<csv::Writer<W>>,
        raw: bool,
    },
}

impl<W: Write> Sink<W> {
    fn new(json: bool, raw: bool, mut out: W, columns: &[&str]) -> Result<Sink<W>, ExportError> {
        if json {
            out.write_all(b"[")?;
            return Ok(Sink::Json { out, first: true });
        }
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        w.write_record(columns).map_err(csv_error)?;
        Ok(Sink::Csv {
            w: Box::new(w),
            raw,
        })
    }
    fn row(&mut self, row: &impl serde::Serialize) -> Result<(), ExportError> {
        match self {
            Sink::Json { out, first } => {
                if !*first {
                    out.write_all(b",")?;
                }
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut *out, row).map_err(|e| match e.io_error_kind() {
                    // An I/O error stays one, so a closed pipe is recognised.
                    Some(kind) => ExportError::Io(std::io::Error::from(kind)),
                    None => ExportError::Encode(e.to_string()),
                })?;
                *first = false;
            }
            Sink::Csv { w, raw: true } => w.serialize(row).map_err(csv_error)?,
            Sink::Csv { w, raw: false } => {
                w.serialize(wire::escape::CsvSafe(row)).map_err(csv_error)?
            }
        }
        Ok(())
    }
    fn finish(self) -> Result<(), ExportError> {
        match self {
            Sink::Json { mut out, .. } => {
                out.write_all(b"\n]\n")?;
                out.flush()?;
            }
            Sink::Csv { mut w, .. } => w.flush()?,
        }
        Ok(())
    }
}

/// Writes the rows `args` ask for from `store` to `out`.
pub fn export<W: Write>(
    store: &Store,
    args: &ExportOptions,
    out: W,
) -> Result<Exported, ExportError> {
    let camps = store.campaigns()?;
    if let Some(id) = args
        .campaigns
        .iter()
        .find(|id| !camps.iter().any(|c| c.id == **id))
    {
        return Err(ExportError::NoCampaign(*id));
    }
    let columns = if args.intervals {
        INTERVAL_COLUMNS
    } else {
        CSV_COLUMNS
    };
    let mut sink = Sink::new(args.json, args.raw_text, out, columns)?;
    let mut rows = 0usize;
    for c in camps
        .iter()
        .filter(|c| args.campaigns.is_empty() || args.campaigns.contains(&c.id))
    {
        let os_of = |role: &str| {
            c.hosts
                .iter()
                .find(|h| h.role == role)
                .and_then(|h| h.metadata.get("os.pretty_name"))
                .cloned()
                .unwrap_or_default()
        };
        let (client_os, server_os) = (os_of("client"), os_of("server"));
        // The settings each cell asked for, by its axes (unique within a campaign).
        let mut by_axes = std::collections::HashMap::new();
        for cell in store.cells(c.id)? {
            let spec = serde_json::from_str::<wire::spec::TestSpec>(&cell.spec_json).ok();
            let key = (cell.family, cell.kind, cell.payload_bytes, cell.direction);
            by_axes.insert(key, Settings::of(spec.as_ref(), &client_os, &server_os));
        }
        let unknown = Settings::of(None, &client_os, &server_os);
        // A chunk of runs at a time, each written as it is read: memory stays bounded
        // at any number of runs.
        let mut chunks = store.run_chunks(c.id)?;
        while let Some(chunk) = chunks.next_chunk()? {
            for d in chunk {
                let r = d.run;
                let ap = |key: &str| d.applied.get(key).map(String::as_str);
                if (r.warmup && !args.include_warmup) || (!r.status.is_ok() && !args.include_failed)
                {
                    continue;
                }
                if args.intervals {
                    for (i, sample) in store.samples(r.id)?.iter().enumerate() {
                        for (name, value) in &sample.metrics {
                            sink.row(&IntervalRow {
                                campaign_id: c.id,
                                campaign_label: &c.label,
                                run_id: r.id,
                                family: r.family.number(),
                                test: r.kind.name(),
                                payload_bytes: r.payload_bytes,
                                direction: store::direction_text(r.direction),
                                repetition: r.repetition,
                                warmup: r.warmup,
                                interval_index: i,
                                start_ns: sample.start_ns,
                                end_ns: sample.end_ns,
                                metric: name,
                                value: value.is_finite().then_some(*value),
                                unit: wire::metrics::unit_of(name),
                            })?;
                            rows += 1;
                        }
                    }
                    continue;
                }
                let (status, reason) = match &r.status {
                    RunStatus::Ok => ("ok", ""),
                    RunStatus::Failed { reason } => ("failed", reason.as_str()),
                };
                let settings = by_axes
                    .get(&(r.family, r.kind, r.payload_bytes, r.direction))
                    .unwrap_or(&unknown);
                let base = Row {
                    campaign_id: c.id,
                    campaign_label: &c.label,
                    run_id: r.id,
                    family: r.family.number(),
                    test: r.kind.name(),
                    transport: r.kind.transport().to_string(),
                    payload_bytes: r.payload_bytes,
                    direction: store::direction_text(r.direction),
                    repetition: r.repetition,
                    warmup: r.warmup,
                    status,
                    failure_reason: reason,
                    started_unix_ns: r.started_unix_ns,
                    metric: "",
                    value: None,
                    unit: "",
                    client_os: &settings.client_os,
                    server_os: &settings.server_os,
                    run_duration_s: settings.run_duration_s,
                    run_count: settings.run_count,
                    streams: settings.streams,
                    rate_bps: settings.rate_bps,
                    rate_pps: settings.rate_pps,
                    sndbuf_bytes: settings.sndbuf_bytes,
                    rcvbuf_bytes: settings.rcvbuf_bytes,
                    nodelay: settings.nodelay,
                    mss_bytes: settings.mss_bytes,
                    tos: settings.tos,
                    flowlabel: settings.flowlabel,
                    congestion: settings.congestion.as_deref(),
                    dont_fragment: settings.dont_fragment,
                    client_sndbuf_applied: ap("client.sndbuf_bytes"),
                    client_rcvbuf_applied: ap("client.rcvbuf_bytes"),
                    server_sndbuf_applied: ap("server.sndbuf_bytes"),
                    server_rcvbuf_applied: ap("server.rcvbuf_bytes"),
                    client_udp_datapath: ap("client.udp_datapath_calls"),
                    server_udp_datapath: ap("server.udp_datapath_calls"),
                };
                if r.metrics.is_empty() {
                    sink.row(&base)?;
                    rows += 1;
                }
                for (name, value) in &r.metrics {
                    sink.row(&Row {
                        metric: name,
                        value: value.is_finite().then_some(*value),
                        unit: wire::metrics::unit_of(name),
                        ..base.clone()
                    })?;
                    rows += 1;
                }
            }
        }
    }
    sink.finish()?;
    Ok(Exported { rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV header written first is the one the csv crate derives from each row
    /// type, column for column.
    #[test]
    fn csv_columns_are_the_row_fields_in_order() {
        let s = Settings::of(None, "A", "B");
        let row = Row {
            campaign_id: 1,
            campaign_label: "x",
            run_id: 1,
            family: 4,
            test: "tcp-rr",
            transport: "TCP".into(),
            payload_bytes: 1,
            direction: "forward",
            repetition: 0,
            warmup: false,
            status: "ok",
            failure_reason: "",
            started_unix_ns: 0,
            metric: "m",
            value: Some(1.0),
            unit: "",
            client_os: &s.client_os,
            server_os: &s.server_os,
            run_duration_s: None,
            run_count: None,
            streams: None,
            rate_bps: None,
            rate_pps: None,
            sndbuf_bytes: None,
            rcvbuf_bytes: None,
            nodelay: None,
            mss_bytes: None,
            tos: None,
            flowlabel: None,
            congestion: None,
            dont_fragment: None,
            client_sndbuf_applied: None,
            client_rcvbuf_applied: None,
            server_sndbuf_applied: None,
            server_rcvbuf_applied: None,
            client_udp_datapath: None,
            server_udp_datapath: None,
        };
        let header = |r: &dyn erased::Ser| {
            let mut w = csv::Writer::from_writer(Vec::new());
            r.ser(&mut w);
            let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
            text.lines().next().unwrap().to_string()
        };
        assert_eq!(header(&row), CSV_COLUMNS.join(","));
        let iv = IntervalRow {
            campaign_id: 1,
            campaign_label: "x",
            run_id: 1,
            family: 6,
            test: "tcp-stream",
            payload_bytes: 1,
            direction: "forward",
            repetition: 0,
            warmup: false,
            interval_index: 0,
            start_ns: 0,
            end_ns: 1,
            metric: "m",
            value: None,
            unit: "",
        };
        assert_eq!(header(&iv), INTERVAL_COLUMNS.join(","));
    }

    mod erased {
        pub trait Ser {
            fn ser(&self, w: &mut csv::Writer<Vec<u8>>);
        }
        impl<T: serde::Serialize> Ser for T {
            fn ser(&self, w: &mut csv::Writer<Vec<u8>>) {
                w.serialize(self).expect("serialize a row");
            }
        }
    }
}
