//! What a UDP receiver does with hostile datagrams (the engine's `udp::take` path):
//! `DatagramView::new_checked`, then the header's `seq` and `send_time_ns` into the
//! `measure` accumulators (RFC 4737 `SeqTracker`, RFC 3550 jitter, RFC 5481 IPDV).
//! The input is a run of 24-byte datagram headers arriving 1 µs apart. Properties: no
//! panic, no overflow, no hang; counts stay consistent; jitter is finite and ≥ 0.
#![no_main]

use libfuzzer_sys::fuzz_target;
use measure::{Arrival, Ipdv, Rfc3550Jitter, SeqTracker};
use wire::datagram::{DatagramView, HEADER_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut seq = SeqTracker::new();
    let mut jitter = Rfc3550Jitter::new();
    let mut ipdv = Ipdv::new();
    let mut fresh = 0u64;
    for (i, dg) in data.chunks(HEADER_BYTES).enumerate() {
        let Ok(v) = DatagramView::new_checked(dg) else {
            continue;
        };
        let arrival_ns = i as u64 * 1000;
        if seq.record(v.seq()) == Arrival::Duplicate {
            continue;
        }
        fresh += 1;
        jitter.record(v.send_time_ns(), arrival_ns);
        ipdv.record(v.seq(), v.send_time_ns(), arrival_ns);
    }
    let c = seq.counts();
    assert_eq!(c.received, fresh);
    assert!(c.reordered <= c.received);
    assert!(jitter.jitter_ns().is_finite() && jitter.jitter_ns() >= 0.0);
    let _ = (ipdv.p50_ns(), ipdv.p99_ns());
});
