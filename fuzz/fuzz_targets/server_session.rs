//! The sans-I/O control server session (`wire::session::ServerSession`) driven by a
//! script of operations decoded from the input: raw bytes from the peer, well-framed
//! JSON bodies from the peer, time passing, and every application call (accept, reject,
//! started, sender_done, result). Bytes go through the real `FrameDecoder`.
//! Properties: no panic; once Done/Failed the state never changes; a deadline is armed
//! in every live state and none after the end; at most one `Failed` event; every
//! message the server queues re-decodes; a session fed nothing but time ends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use wire::proto::{
    encode_frame, ErrorCode, FrameDecoder, SideStats, FRAME_MAGIC, PROTOCOL_VERSION,
};
use wire::session::{Limits, ServerEvent, ServerSession, ServerState};

struct Script<'a>(&'a [u8]);

impl<'a> Script<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
}

fn frame(version: u16, body: &[u8]) -> Vec<u8> {
    let mut out = FRAME_MAGIC.to_vec();
    out.extend(version.to_be_bytes());
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
    out
}

fn is_end(s: ServerState) -> bool {
    matches!(s, ServerState::Done | ServerState::Failed)
}

fuzz_target!(|data: &[u8]| {
    let t0 = Instant::now();
    let mut now = t0;
    let limits = Limits {
        handshake: Duration::from_secs(5),
        run_slack: Duration::from_secs(10),
        count_run_max: Duration::from_secs(3600),
    };
    let mut s = ServerSession::new(now, BTreeMap::new(), limits);
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let mut failed_events = 0u32;
    let mut closed_input = false;
    let mut script = Script(data);
    while let Some(op) = script.byte() {
        let before = s.state();
        match op % 10 {
            0 | 1 if !closed_input => {
                let n = usize::from(script.byte().unwrap_or(0));
                let body = script.bytes(n);
                if op % 10 == 0 {
                    dec.push(body);
                } else {
                    dec.push(&frame(PROTOCOL_VERSION, body));
                }
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
                now += Duration::from_millis(u64::from(script.byte().unwrap_or(0)) * 100);
                s.handle_timeout(now);
            }
            3 => {
                let port =
                    u16::from_be_bytes([script.byte().unwrap_or(0), script.byte().unwrap_or(0)]);
                s.accept(now, port, u64::from(op));
            }
            4 => s.reject(ErrorCode::Busy, "server busy"),
            5 => s.started(now),
            6 => s.sender_done(u64::from(op), 1000),
            7 => s.result(SideStats::default()),
            8 if !closed_input => {
                let version = u16::from(script.byte().unwrap_or(0));
                dec.push(&frame(version, b"{\"type\":\"hello\"}"));
            }
            _ => {}
        }
        if is_end(before) {
            assert_eq!(s.state(), before, "state changed after the session ended");
        }
        drain(&mut s, &mut failed_events);
        assert_eq!(
            s.poll_timeout().is_some(),
            !is_end(s.state()),
            "{:?}",
            s.state()
        );
        if let Some(d) = s.poll_timeout() {
            assert!(d >= t0);
        }
    }
    // A peer that goes quiet is dropped: one timer expiry ends any live session.
    if let Some(deadline) = s.poll_timeout() {
        s.handle_timeout(deadline);
        drain(&mut s, &mut failed_events);
        assert!(
            is_end(s.state()),
            "still {:?} after its deadline",
            s.state()
        );
    }
    assert!(s.is_closed());
});

fn drain(s: &mut ServerSession, failed_events: &mut u32) {
    while let Some(msg) = s.poll_msg() {
        let bytes = encode_frame(&msg, PROTOCOL_VERSION);
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        dec.push(&bytes);
        assert!(
            matches!(dec.next_msg(), Ok(Some(_))),
            "server sent an undecodable {}",
            msg.name()
        );
    }
    while let Some(ev) = s.poll_event() {
        if let ServerEvent::Failed(_) = ev {
            *failed_events += 1;
            assert_eq!(*failed_events, 1, "two Failed events");
            assert_eq!(s.state(), ServerState::Failed);
        }
    }
}
