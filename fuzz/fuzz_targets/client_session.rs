//! The sans-I/O control client session (`wire::session::ClientSession`), as the server
//! target but from the other end: a hostile server's bytes and frames, time passing,
//! and the client application's calls (connected, finish, abort). Properties: no panic;
//! the end state is final; a deadline is armed in every live state; at most one
//! `Failed` event; a client whose server goes quiet always ends at its deadline.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use wire::proto::{encode_frame, FrameDecoder, SideStats, FRAME_MAGIC, PROTOCOL_VERSION};
use wire::session::{ClientEvent, ClientSession, ClientState, Limits};
use wire::spec::{Bound, Family, TestKind, TestSpec};

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = FRAME_MAGIC.to_vec();
    out.extend(PROTOCOL_VERSION.to_be_bytes());
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
    out
}

fn is_end(s: ClientState) -> bool {
    matches!(s, ClientState::Done | ClientState::Failed)
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, mut rest)) = data.split_first() else {
        return;
    };
    let mut spec = TestSpec::new(TestKind::ALL[usize::from(kind % 4)], Family::V6, 1200);
    spec.bound = if kind & 0x10 == 0 {
        Bound::DurationNs(u64::from(kind) * 10_000_000 + 1)
    } else {
        Bound::Count(u64::from(kind) + 1)
    };
    let mut now = Instant::now();
    let mut s = ClientSession::new(now, spec, BTreeMap::new(), Limits::default());
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let mut failed = 0u32;
    let mut closed_input = false;
    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        let before = s.state();
        let arg = rest.first().copied().unwrap_or(0);
        match op % 7 {
            0 | 1 if !closed_input => {
                let n = usize::from(arg).min(rest.len().saturating_sub(1));
                let body = &rest[1.min(rest.len())..1.min(rest.len()) + n];
                if op % 7 == 0 {
                    dec.push(body);
                } else {
                    dec.push(&frame(body));
                }
                rest = &rest[(1 + n).min(rest.len())..];
                loop {
                    match dec.next_msg() {
                        Ok(Some(msg)) => s.handle_msg(now, msg),
                        Ok(None) => break,
                        Err(e) => {
                            s.handle_decode_error(e);
                            closed_input = true;
                            break;
                        }
                    }
                }
            }
            2 => {
                now += Duration::from_millis(u64::from(arg) * 100);
                s.handle_timeout(now);
            }
            3 => s.connected(now, Some(u16::from(arg) + 1024)),
            4 => s.finish(now, SideStats::default()),
            5 => s.abort("local failure"),
            _ => {}
        }
        if is_end(before) {
            assert_eq!(s.state(), before, "state changed after the session ended");
        }
        drain(&mut s, &mut failed);
        assert_eq!(
            s.poll_timeout().is_some(),
            !is_end(s.state()),
            "{:?}",
            s.state()
        );
    }
    if let Some(deadline) = s.poll_timeout() {
        s.handle_timeout(deadline);
        drain(&mut s, &mut failed);
        assert!(
            is_end(s.state()),
            "still {:?} after its deadline",
            s.state()
        );
    }
});

fn drain(s: &mut ClientSession, failed: &mut u32) {
    while let Some(msg) = s.poll_msg() {
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        dec.push(&encode_frame(&msg, PROTOCOL_VERSION));
        assert!(
            matches!(dec.next_msg(), Ok(Some(_))),
            "client sent an undecodable {}",
            msg.name()
        );
    }
    while let Some(ev) = s.poll_event() {
        if let ClientEvent::Failed(_) = ev {
            *failed += 1;
            assert_eq!(*failed, 1, "two Failed events");
            assert_eq!(s.state(), ClientState::Failed);
        }
    }
}
