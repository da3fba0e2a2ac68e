//! Inputs the fuzzers in fuzz/ found (`scripts/fuzz`), kept as regression tests named
//! after what they guard.

use dualperf_measure::{Arrival, SeqTracker};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Arrivals, `highest_seq` and `received` after recording a run of sequence numbers.
type Recorded = (Vec<Arrival>, Option<u64>, u64);

/// Record `seqs` on a worker thread; `None` if it neither finished nor panicked within
/// 5 s (the release-build symptom is an endless loop).
fn record_all(seqs: Vec<u64>) -> Option<thread::Result<Recorded>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let r = std::panic::catch_unwind(move || {
            let mut t = SeqTracker::new();
            let arrivals: Vec<Arrival> = seqs.iter().map(|&s| t.record(s)).collect();
            let c = t.counts();
            (arrivals, c.highest_seq, c.received)
        });
        let _ = tx.send(r);
    });
    rx.recv_timeout(Duration::from_secs(5)).ok()
}

/// Fuzz target `datagram_receiver` (timeout artifact): the sequence numbers of six
/// hostile datagram headers. Once `highest_seq` is within `SEQ_WINDOW` below u64::MAX,
/// a datagram with seq = u64::MAX makes `SeqTracker::clear_range` step `s` past
/// u64::MAX: "attempt to add with overflow" at seq.rs:109 (`s += 64`) in debug builds, and in
/// release `s` wraps to 0 and the loop runs ~2^58 more steps, hanging the receiver.
#[test]
fn seq_tracker_survives_fuzzed_sequence_numbers_near_u64_max() {
    let seqs = vec![
        0,
        18_446_736_377_128_157_184,
        18_446_744_073_709_551_360, // u64::MAX - 255
        18_014_398_479_417_212_928,
        u64::MAX,
        0,
    ];
    let (arrivals, highest, received) = record_all(seqs)
        .expect("SeqTracker::record hung on seq u64::MAX")
        .expect("SeqTracker::record panicked on seq u64::MAX");
    assert_eq!(arrivals[4], Arrival::InOrder);
    assert_eq!(highest, Some(u64::MAX));
    assert_eq!(received, 6);
}

/// The smallest form of the same input: two consecutive sequence numbers at the top
/// (overflow at seq.rs:112, `s += 1`).
#[test]
fn seq_tracker_accepts_u64_max_right_after_u64_max_minus_one() {
    let (arrivals, highest, received) = record_all(vec![u64::MAX - 1, u64::MAX])
        .expect("SeqTracker::record hung on seq u64::MAX")
        .expect("SeqTracker::record panicked on seq u64::MAX");
    assert_eq!(arrivals, vec![Arrival::InOrder, Arrival::InOrder]);
    assert_eq!(highest, Some(u64::MAX));
    assert_eq!(received, 2);
}
