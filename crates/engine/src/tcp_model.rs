//! TCP sender of a D-ITG-style traffic model: messages whose sizes and gaps are drawn
//! from the model's distributions (seeded; stream `i` draws its own sequences, the same
//! as a UDP model's stream `i`), each written whole at its scheduled time. The schedule
//! is absolute (the sum of the drawn gaps from the data phase's start), so a late write
//! never shifts what follows; how late each message left is recorded
//! (`schedule_late_*_us` in applied). TCP keeps no message boundaries: the receiver is
//! the bulk receiver ([`crate::tcp::recv`]), and the figures are bytes (exact) and
//! messages written; a message that waits behind a full socket buffer counts as late.
//! Without a gap distribution, messages follow the rate (`-b`), or go back to back.

use crate::data::{note_schedule_late, Outcome, SendBound, Shared, POLL};
use crate::tcp::{pattern, write_full};
use measure::traffic::Sampler;
use measure::LatencyHistogram;
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
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
    net::fine_timer_slack();
    let stream = u64::from(stream_id);
    // The same stream numbering as the UDP model sender: gaps 2i, sizes 2i + 1.
    let sampler = |d: Result<Option<wire::traffic::Dist>, String>, which: u64| {
        d?.map(|d| Sampler::new(d, model.seed, 2 * stream + which))
            .transpose()
    };
    let (mut gaps, mut sizes) = match (sampler(model.idt_dist(), 0), sampler(model.size_dist(), 1))
    {
        (Ok(g), Ok(s)) => (g, s),
        (Err(e), _) | (_, Err(e)) => {
            o.errors.push(format!("traffic model: {e}"));
            return o;
        }
    };
    let fixed_gap_ns = pps.map(|p| 1e9 / p);
    let max_len = sizes
        .as_ref()
        .map_or(payload_bytes, |_| MAX_MODEL_MESSAGE)
        .max(1);
    let buf = pattern(max_len);
    let start = shared.data_start();
    let mut sched_ns = 0.0_f64;
    let mut late = LatencyHistogram::new();
    loop {
        let due = start + Duration::from_nanos(sched_ns as u64);
        if bound.done(o.sent_packets, Instant::now().max(due)) || shared.aborted() {
            break;
        }
        if gaps.is_some() || fixed_gap_ns.is_some() {
            crate::udp::wait_until(due);
            late.record(Instant::now().saturating_duration_since(due).as_nanos() as u64);
        }
        let len = match sizes.as_mut() {
            Some(d) => (d.sample().round() as usize).clamp(1, max_len),
            None => payload_bytes.max(1),
        };
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
        sched_ns += match (gaps.as_mut(), fixed_gap_ns) {
            (Some(g), _) => g.sample(),
            (None, Some(f)) => f,
            (None, None) => 0.0,
        };
    }
    o.last_send_ns = shared.ns_since_go(Instant::now());
    let _ = s.shutdown(Shutdown::Write);
    o.io.insert("traffic_model".into(), model.to_string());
    note_schedule_late(&late, &mut o);
    o.streams.push(StreamStats {
        stream_id,
        sent_bytes: o.sent_bytes,
        sent_packets: o.sent_packets,
        ..StreamStats::default()
    });
    o
}
