//! TCP sender of a D-ITG-style traffic model: messages whose sizes and gaps follow the
//! model's [`ModelSchedule`] (the same schedule, seeds and late-send record as the UDP
//! model sender), each written whole at its due time. TCP keeps no message boundaries:
//! the receiver is the bulk receiver ([`crate::tcp::recv`]), and the figures are bytes
//! (exact) and messages written; a message that waits behind a full socket buffer
//! counts as late.

use crate::data::{ModelSchedule, Outcome, SendBound, Shared, POLL};
use crate::tcp::{pattern, write_full};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Instant;
use wire::proto::StreamStats;
use wire::traffic::TrafficModel;

/// Largest message a size distribution may draw (the UDP limit, so one model means the
/// same sizes over either transport).
pub(crate) const MAX_MODEL_MESSAGE: usize = crate::udp::MAX_MODEL_PAYLOAD;

/// Write messages of drawn sizes at drawn times until the bound, then half-close.
pub(crate) fn send(
    mut s: TcpStream,
    stream_id: u16,
    payload_bytes: usize,
    model: &TrafficModel,
    pps: Option<f64>,
    bound: SendBound,
    shared: Arc<Shared>,
) -> Outcome {
    let mut o = Outcome::default();
    let _ = s.set_write_timeout(Some(POLL));
    let lens = (1, MAX_MODEL_MESSAGE);
    let flow = (stream_id, payload_bytes, pps);
    let Some(mut schedule) = ModelSchedule::start(model, flow, lens, &shared, &mut o) else {
        return o;
    };
    let buf = pattern(schedule.max_len());
    while let Some(len) = schedule.next(&bound, o.sent_packets, &shared) {
        match write_full(&mut s, &buf[..len], &shared) {
            Ok(true) => {
                o.sent_packets += 1;
                o.sent_bytes += len as u64;
                shared.add_sent(len as u64, 1);
            }
            Ok(false) => break,
            Err(e) => {
                o.errors
                    .push(format!("tcp send on stream {stream_id}: {e}"));
                break;
            }
        }
    }
    o.last_send_ns = shared.ns_since_go(Instant::now());
    let _ = s.shutdown(Shutdown::Write);
    o.io.insert("traffic_model".into(), model.to_string());
    schedule.note(&mut o);
    o.streams.push(StreamStats {
        stream_id,
        sent_bytes: o.sent_bytes,
        sent_packets: o.sent_packets,
        ..StreamStats::default()
    });
    o
}
