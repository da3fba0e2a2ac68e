//! The two JSON documents of the iperf3 protocol as pure functions: the parameters a
//! client sends (§5) and the results both sides exchange (§8). Parsing tolerates cJSON's
//! unsigned −1, unknown and extra keys; writing produces what a 3.12 peer requires.

use crate::proto::{json_i64, json_u64};
use serde_json::{json, Map, Value};

/// Transport named by the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Tcp,
    Udp,
    Sctp,
}

/// iperf3's default TCP block (`len`), 128 KiB.
pub const DEFAULT_TCP_LEN_BYTES: u32 = 131_072;
/// UDP `len` when absent: iperf3's fallback when the control MSS is unknown.
pub const DEFAULT_UDP_LEN_BYTES: u32 = 1460;
/// iperf3's default UDP rate when `bandwidth` is absent, bit/s.
pub const DEFAULT_UDP_BANDWIDTH_BPS: u64 = 1_048_576;
/// iperf3's maxima (MAX_TIME, MAX_STREAMS, MAX_BLOCKSIZE).
pub const MAX_TIME_S: i64 = 86_400;
pub const MAX_STREAMS: u32 = 128;
pub const MAX_TCP_LEN_BYTES: u32 = 1024 * 1024;
pub const MAX_UDP_LEN_BYTES: u32 = 65_507;
/// Smallest UDP datagram: header with a 64-bit counter.
pub const MIN_UDP_LEN_BYTES: u32 = 16;

/// Why a server refuses parameters, with the iperf3 error code it sends back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParamError {
    /// iperf3 error code (5 duration, 6 streams, 7/20 block size, 25 reverse+bidir,
    /// 114 unreadable parameters).
    pub code: i32,
    pub message: String,
}

impl ParamError {
    fn new(code: i32, message: String) -> ParamError {
        ParamError { code, message }
    }
}

/// The test parameters (client → server). Flags a 3.12 server sets on mere presence
/// are written only when true.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params {
    pub protocol: Protocol,
    pub omit_s: i64,
    pub time_s: i64,
    /// `-n`: bytes to send in total, 0 = unused.
    pub num_bytes: u64,
    /// `-k`: blocks to send in total, 0 = unused.
    pub blockcount: u64,
    pub parallel: u32,
    pub reverse: bool,
    pub bidirectional: bool,
    pub len_bytes: u32,
    /// bit/s per stream; `None` = key absent (UDP then means 1 Mbit/s); 0 = unlimited.
    pub bandwidth_bps: Option<u64>,
    pub pacing_timer_us: u64,
    pub window_bytes: Option<u32>,
    pub mss_bytes: Option<u32>,
    pub nodelay: bool,
    pub tos: Option<i64>,
    pub flowlabel: Option<i64>,
    pub congestion: Option<String>,
    pub title: Option<String>,
    pub get_server_output: bool,
    pub udp_counters_64bit: bool,
    pub client_version: Option<String>,
    /// iperf3's authentication token (see [`crate::auth`]); `None` = not sent.
    pub authtoken: Option<String>,
}

impl Params {
    /// The parameters iperf3 3.12 would send for `-t time_s` with its defaults.
    pub fn new(protocol: Protocol, time_s: i64) -> Params {
        Params {
            protocol,
            time_s,
            parallel: 1,
            len_bytes: match protocol {
                Protocol::Udp => DEFAULT_UDP_LEN_BYTES,
                _ => DEFAULT_TCP_LEN_BYTES,
            },
            pacing_timer_us: 1000,
            client_version: Some("3.12".into()),
            ..Params::default()
        }
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        let proto_key = match self.protocol {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Sctp => "sctp",
        };
        m.insert(proto_key.into(), json!(true));
        m.insert("omit".into(), json!(self.omit_s));
        m.insert("time".into(), json!(self.time_s));
        m.insert("num".into(), json!(self.num_bytes));
        m.insert("blockcount".into(), json!(self.blockcount));
        if let Some(mss) = self.mss_bytes {
            m.insert("MSS".into(), json!(mss));
        }
        if self.nodelay {
            m.insert("nodelay".into(), json!(true));
        }
        m.insert("parallel".into(), json!(self.parallel));
        if self.reverse {
            m.insert("reverse".into(), json!(true));
        }
        if self.bidirectional {
            m.insert("bidirectional".into(), json!(true));
        }
        if let Some(w) = self.window_bytes {
            m.insert("window".into(), json!(w));
        }
        m.insert("len".into(), json!(self.len_bytes));
        if let Some(b) = self.bandwidth_bps {
            m.insert("bandwidth".into(), json!(b));
        }
        m.insert("pacing_timer".into(), json!(self.pacing_timer_us));
        if let Some(t) = self.tos {
            m.insert("TOS".into(), json!(t));
        }
        if let Some(f) = self.flowlabel {
            m.insert("flowlabel".into(), json!(f));
        }
        if let Some(t) = &self.title {
            m.insert("title".into(), json!(t));
        }
        if let Some(c) = &self.congestion {
            m.insert("congestion".into(), json!(c));
        }
        if self.get_server_output {
            m.insert("get_server_output".into(), json!(1));
        }
        if self.udp_counters_64bit {
            m.insert("udp_counters_64bit".into(), json!(1));
        }
        if let Some(t) = &self.authtoken {
            m.insert("authtoken".into(), json!(t));
        }
        if let Some(v) = &self.client_version {
            m.insert("client_version".into(), json!(v));
        }
        Value::Object(m)
    }

    /// Reads parameters as a 3.12 server does: presence sets flags, missing keys keep
    /// the defaults, unknown keys are ignored. Then checks the limits iperf3 enforces.
    pub fn from_json(v: &Value) -> Result<Params, ParamError> {
        let obj = v
            .as_object()
            .ok_or_else(|| ParamError::new(114, "parameters are not a JSON object".into()))?;
        let int = |k: &str| obj.get(k).and_then(json_i64);
        let mut p = Params::new(Protocol::Tcp, 10);
        p.client_version = None;
        for (key, proto) in [
            ("tcp", Protocol::Tcp),
            ("udp", Protocol::Udp),
            ("sctp", Protocol::Sctp),
        ] {
            if obj.contains_key(key) {
                p.protocol = proto;
            }
        }
        if p.protocol == Protocol::Udp {
            p.bandwidth_bps = Some(DEFAULT_UDP_BANDWIDTH_BPS);
        }
        p.omit_s = int("omit").unwrap_or(0);
        p.time_s = int("time").unwrap_or(10);
        p.num_bytes = obj.get("num").and_then(json_u64).unwrap_or(0);
        p.blockcount = obj.get("blockcount").and_then(json_u64).unwrap_or(0);
        p.mss_bytes = int("MSS").and_then(|x| u32::try_from(x).ok());
        p.nodelay = obj.contains_key("nodelay");
        let parallel = int("parallel").unwrap_or(1);
        p.reverse = obj.contains_key("reverse");
        p.bidirectional = obj.contains_key("bidirectional");
        p.window_bytes = int("window").and_then(|x| u32::try_from(x).ok());
        let len = int("len").unwrap_or(match p.protocol {
            Protocol::Udp => i64::from(DEFAULT_UDP_LEN_BYTES),
            _ => i64::from(DEFAULT_TCP_LEN_BYTES),
        });
        if let Some(b) = obj.get("bandwidth").and_then(json_u64) {
            p.bandwidth_bps = Some(b);
        }
        p.pacing_timer_us = obj.get("pacing_timer").and_then(json_u64).unwrap_or(1000);
        p.tos = int("TOS");
        p.flowlabel = int("flowlabel");
        let string = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        p.congestion = string("congestion");
        p.title = string("title");
        p.client_version = string("client_version");
        p.authtoken = string("authtoken");
        p.get_server_output = obj.contains_key("get_server_output");
        p.udp_counters_64bit = obj.contains_key("udp_counters_64bit");

        if !(0..=MAX_TIME_S).contains(&p.time_s) || !(0..=MAX_TIME_S).contains(&p.omit_s) {
            let msg = format!(
                "test duration {} s / omit {} s out of range",
                p.time_s, p.omit_s
            );
            return Err(ParamError::new(5, msg));
        }
        p.parallel = u32::try_from(parallel)
            .ok()
            .filter(|n| (1..=MAX_STREAMS).contains(n))
            .ok_or_else(|| {
                ParamError::new(
                    6,
                    format!("parallel streams {parallel} out of range 1..={MAX_STREAMS}"),
                )
            })?;
        let (min_len, max_len, code) = match p.protocol {
            Protocol::Udp => (MIN_UDP_LEN_BYTES, MAX_UDP_LEN_BYTES, 20),
            _ => (1, MAX_TCP_LEN_BYTES, 7),
        };
        p.len_bytes = u32::try_from(len)
            .ok()
            .filter(|n| (min_len..=max_len).contains(n))
            .ok_or_else(|| {
                ParamError::new(
                    code,
                    format!("block length {len} out of range {min_len}..={max_len}"),
                )
            })?;
        if p.reverse && p.bidirectional {
            return Err(ParamError::new(
                25,
                "a test cannot be both reverse and bidirectional".into(),
            ));
        }
        Ok(p)
    }

    /// Number of data streams on the wire (twice `parallel` with --bidir).
    pub fn total_streams(&self) -> u32 {
        if self.bidirectional {
            self.parallel * 2
        } else {
            self.parallel
        }
    }
}

/// iperf3's stream ids in connection order: 1, 3, 4, 5, … (2 is skipped).
pub fn stream_id(index: usize) -> i64 {
    if index == 0 {
        1
    } else {
        index as i64 + 2
    }
}

/// One stream's entry in a results document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamResult {
    pub id: i64,
    /// Sent bytes if this side sends on the stream, else received bytes.
    pub bytes: u64,
    /// −1 unless a TCP sender with tcp_info.
    pub retransmits: i64,
    /// Receiver: RFC 3550 jitter in seconds; sender: 0.
    pub jitter_s: f64,
    /// Receiver: net lost datagrams; sender: 0.
    pub errors: i64,
    /// Sender: datagrams sent; receiver: highest sequence seen; TCP: 0.
    pub packets: i64,
    pub start_time_s: f64,
    pub end_time_s: f64,
}

/// A whole results document (§8).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    pub cpu_util_total: f64,
    pub cpu_util_user: f64,
    pub cpu_util_system: f64,
    /// −1 receive-only, 1 TCP sender with tcp_info, else 0.
    pub sender_has_retransmits: i64,
    pub congestion_used: Option<String>,
    pub streams: Vec<StreamResult>,
    /// Keys we do not model (`server_output_text`, newer versions' additions).
    pub extra: Map<String, Value>,
}

impl Results {
    pub fn to_json(&self) -> Value {
        let streams: Vec<Value> = self
            .streams
            .iter()
            .map(|s| {
                json!({
                    "id": s.id, "bytes": s.bytes, "retransmits": s.retransmits,
                    "jitter": s.jitter_s, "errors": s.errors, "packets": s.packets,
                    "start_time": s.start_time_s, "end_time": s.end_time_s,
                })
            })
            .collect();
        let mut m = self.extra.clone();
        m.insert("cpu_util_total".into(), json!(self.cpu_util_total));
        m.insert("cpu_util_user".into(), json!(self.cpu_util_user));
        m.insert("cpu_util_system".into(), json!(self.cpu_util_system));
        m.insert(
            "sender_has_retransmits".into(),
            json!(self.sender_has_retransmits),
        );
        if let Some(c) = &self.congestion_used {
            m.insert("congestion_used".into(), json!(c));
        }
        m.insert("streams".into(), Value::Array(streams));
        Value::Object(m)
    }

    /// Parses a peer's results; requires what a 3.12 peer requires, keeps extra keys.
    pub fn from_json(v: &Value) -> Result<Results, ResultsError> {
        let obj = v.as_object().ok_or(ResultsError::NotAnObject)?;
        let num = |k: &'static str| -> Result<f64, ResultsError> {
            obj.get(k)
                .and_then(Value::as_f64)
                .ok_or(ResultsError::Missing(k))
        };
        let mut r = Results {
            cpu_util_total: num("cpu_util_total")?,
            cpu_util_user: num("cpu_util_user")?,
            cpu_util_system: num("cpu_util_system")?,
            sender_has_retransmits: obj
                .get("sender_has_retransmits")
                .and_then(json_i64)
                .ok_or(ResultsError::Missing("sender_has_retransmits"))?,
            congestion_used: obj
                .get("congestion_used")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Results::default()
        };
        let streams = obj
            .get("streams")
            .and_then(Value::as_array)
            .ok_or(ResultsError::NoStreams)?;
        for s in streams {
            r.streams.push(parse_stream(s)?);
        }
        const MODELLED: [&str; 6] = [
            "cpu_util_total",
            "cpu_util_user",
            "cpu_util_system",
            "sender_has_retransmits",
            "congestion_used",
            "streams",
        ];
        for (k, val) in obj {
            if !MODELLED.contains(&k.as_str()) {
                r.extra.insert(k.clone(), val.clone());
            }
        }
        Ok(r)
    }

    pub fn stream(&self, id: i64) -> Option<&StreamResult> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// Why a peer's results document cannot be used (the client reports it as a protocol
/// error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsError {
    #[error("results are not a JSON object")]
    NotAnObject,
    #[error("results lack '{0}'")]
    Missing(&'static str),
    #[error("results lack the 'streams' array")]
    NoStreams,
    #[error("a stream result is not an object")]
    StreamNotAnObject,
    #[error("stream lacks '{0}'")]
    StreamMissing(&'static str),
    /// The byte count as the peer wrote it.
    #[error("implausible result: stream reports bytes = {0} (must be a count ≥ 0 below 2^63)")]
    StreamBytes(String),
}

fn parse_stream(s: &Value) -> Result<StreamResult, ResultsError> {
    let obj = s.as_object().ok_or(ResultsError::StreamNotAnObject)?;
    let int = |k: &'static str| {
        obj.get(k)
            .and_then(json_i64)
            .ok_or(ResultsError::StreamMissing(k))
    };
    let float = |k: &str| obj.get(k).and_then(Value::as_f64);
    Ok(StreamResult {
        id: int("id")?,
        bytes: match obj.get("bytes") {
            None => return Err(ResultsError::StreamMissing("bytes")),
            // 2^64−1 and other counts over 2^63 are a negative number printed by cJSON.
            Some(v) => json_u64(v).ok_or_else(|| ResultsError::StreamBytes(v.to_string()))?,
        },
        retransmits: int("retransmits")?,
        jitter_s: float("jitter").ok_or(ResultsError::StreamMissing("jitter"))?,
        errors: int("errors")?,
        packets: int("packets")?,
        start_time_s: float("start_time").unwrap_or(0.0),
        end_time_s: float("end_time").unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP_PARAMS: &str = r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#;
    const UDP_PARAMS: &str = r#"{"udp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":128,"bandwidth":10000000,"pacing_timer":1000,"client_version":"3.12"}"#;
    const UDP_CLIENT_RESULTS: &str = r#"{"cpu_util_total":1.48366263105903,"cpu_util_user":0,"cpu_util_system":1.4835627480220663,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":124928,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":976,"start_time":0,"end_time":1.000067}]}"#;
    const UDP_SERVER_RESULTS: &str = r#"{"cpu_util_total":1.22514685664292,"cpu_util_user":0.1,"cpu_util_system":1.1,"sender_has_retransmits":18446744073709551615,"server_output_text":"hello","streams":[{"id":1,"bytes":124928,"retransmits":18446744073709551615,"jitter":1.6054353239707313e-05,"errors":0,"packets":976,"start_time":0,"end_time":1.000114}]}"#;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn captured_3_12_params_parse() {
        let tcp = Params::from_json(&parse(TCP_PARAMS)).unwrap();
        assert_eq!(tcp.protocol, Protocol::Tcp);
        assert_eq!((tcp.time_s, tcp.parallel, tcp.len_bytes), (2, 1, 131_072));
        assert!(!tcp.reverse && !tcp.udp_counters_64bit);
        assert_eq!(tcp.client_version.as_deref(), Some("3.12"));
        let udp = Params::from_json(&parse(UDP_PARAMS)).unwrap();
        assert_eq!((udp.protocol, udp.len_bytes), (Protocol::Udp, 128));
        assert_eq!(udp.bandwidth_bps, Some(10_000_000));
    }

    #[test]
    fn our_params_match_what_3_12_writes() {
        let mut p = Params::new(Protocol::Tcp, 2);
        assert_eq!(p.to_json(), parse(TCP_PARAMS));
        p.protocol = Protocol::Udp;
        p.len_bytes = 128;
        p.bandwidth_bps = Some(10_000_000);
        assert_eq!(p.to_json(), parse(UDP_PARAMS));
        p.reverse = true;
        p.udp_counters_64bit = true;
        let back = Params::from_json(&p.to_json()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn presence_sets_flags_and_missing_keys_keep_defaults() {
        let p = Params::from_json(&parse(
            r#"{"udp":true,"reverse":false,"udp_counters_64bit":0}"#,
        ))
        .unwrap();
        assert!(
            p.reverse,
            "3.12 sets a flag on presence, whatever the value"
        );
        assert!(p.udp_counters_64bit);
        assert_eq!(p.time_s, 10);
        assert_eq!(p.bandwidth_bps, Some(DEFAULT_UDP_BANDWIDTH_BPS));
        assert_eq!(p.parallel, 1);
        // The minimal document of §5 is accepted.
        let min = r#"{"udp":true,"time":1,"parallel":1,"len":128,"bandwidth":1000000,"gso":1}"#;
        assert_eq!(
            Params::from_json(&parse(min)).unwrap().bandwidth_bps,
            Some(1_000_000)
        );
    }

    #[test]
    fn out_of_range_params_are_refused() {
        for bad in [
            r#"{"tcp":true,"parallel":0}"#,
            r#"{"tcp":true,"parallel":129}"#,
            r#"{"udp":true,"len":8}"#,
            r#"{"tcp":true,"len":18446744073709551615}"#,
            r#"{"tcp":true,"time":999999}"#,
            r#"{"tcp":true,"reverse":true,"bidirectional":true}"#,
            r#"[1,2]"#,
        ] {
            assert!(Params::from_json(&parse(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn captured_results_parse_with_unsigned_minus_one() {
        let c = Results::from_json(&parse(UDP_CLIENT_RESULTS)).unwrap();
        assert_eq!(c.streams[0].retransmits, -1);
        assert_eq!(c.streams[0].packets, 976);
        let s = Results::from_json(&parse(UDP_SERVER_RESULTS)).unwrap();
        assert_eq!(s.sender_has_retransmits, -1);
        assert!((s.stream(1).unwrap().jitter_s - 1.6054e-5).abs() < 1e-8);
        assert_eq!(
            s.extra.get("server_output_text"),
            Some(&Value::from("hello"))
        );
        // Round trip keeps the extra key and the numbers.
        assert_eq!(Results::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn results_missing_required_keys_are_errors() {
        let no_cpu = r#"{"sender_has_retransmits":0,"streams":[]}"#;
        assert!(Results::from_json(&parse(no_cpu)).is_err());
        let no_bytes = r#"{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{"id":1,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}"#;
        let e = Results::from_json(&parse(no_bytes)).unwrap_err();
        assert_eq!(e.to_string(), "stream lacks 'bytes'");
    }

    #[test]
    fn stream_ids_skip_two() {
        let ids: Vec<i64> = (0..4).map(stream_id).collect();
        assert_eq!(ids, vec![1, 3, 4, 5]);
    }
}
