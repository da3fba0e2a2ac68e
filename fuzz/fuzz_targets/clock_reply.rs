//! Clock replies (`measure::owd`): arbitrary (t1 sent, t1 echoed, t2, t3, t4) stamps
//! through `ClockSample::check`, the accepted ones through `ClockOffset::estimate`.
//! Properties: no panic or overflow; an accepted reply echoes t1 and claims a hold
//! between 0 and the round trip; an estimate's bound is at least `MIN_UNCERTAINTY_NS`
//! and contains every offset its best exchange allows (the server's two stamps placed
//! anywhere inside the client's round trip).
#![no_main]

use libfuzzer_sys::fuzz_target;
use measure::owd::{ClockOffset, ClockSample, MIN_UNCERTAINTY_NS};

fuzz_target!(|data: &[u8]| {
    let words: Vec<u64> = data
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let mut good = Vec::new();
    let mut rejected = 0u32;
    for w in words.chunks_exact(5) {
        let (sent_t1, s) = (
            w[0],
            ClockSample { t1_ns: w[1], t2_ns: w[2], t3_ns: w[3], t4_ns: w[4] },
        );
        match s.check(sent_t1) {
            Ok(()) => {
                assert_eq!(s.t1_ns, sent_t1);
                assert!(s.t2_ns <= s.t3_ns && s.t1_ns <= s.t4_ns);
                assert!(s.t3_ns - s.t2_ns <= s.t4_ns - s.t1_ns);
                good.push(s);
            }
            Err(_) => rejected += 1,
        }
    }
    if let Ok(est) = ClockOffset::estimate(&good, rejected) {
        assert!(est.uncertainty_ns >= MIN_UNCERTAINTY_NS);
        assert_eq!(est.rejected_exchanges, rejected);
        let best = good.iter().min_by_key(|s| s.delay_ns()).copied();
        if let Some(b) = best {
            // The offsets the exchange allows: t2 − θ and t3 − θ inside [t1, t4].
            let lo = b.t3_ns as i128 - b.t4_ns as i128;
            let hi = b.t2_ns as i128 - b.t1_ns as i128;
            let (o, u) = (i128::from(est.offset_ns), i128::from(est.uncertainty_ns));
            // offset_ns is an i64 of the midpoint; where the midpoint does not fit, skip.
            if (lo + hi) / 2 == o {
                assert!(o - u <= lo + 1 && hi <= o + u + 1, "{b:?} {est:?}");
            }
        }
    }
});
