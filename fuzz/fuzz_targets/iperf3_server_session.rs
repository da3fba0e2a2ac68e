//! iperf3 server control session (`iperf3::session::ServerSession`) fed a hostile
//! client's bytes in chunks, the application answering every event as the real server
//! does. Properties: no panic; once done it stays done; after an error the caller
//! closes, so feeding stops there.
#![no_main]

use iperf3::json::Results;
use iperf3::session::{ServerEvent, ServerSession};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split % 64) + 1;
    let mut s = ServerSession::new();
    for piece in rest.chunks(chunk) {
        let was_done = s.is_done();
        let events = match s.feed(piece) {
            Ok(events) => events,
            Err(_) => return,
        };
        assert!(!was_done || events.is_empty(), "events after done");
        for ev in events {
            match ev {
                ServerEvent::Params(_) => {
                    s.create_streams();
                    s.start();
                }
                ServerEvent::TestEnd => s.exchange_results(),
                ServerEvent::ClientResults(_) => s.send_results(&Results::default()),
                ServerEvent::Cookie(_) | ServerEvent::ClientTerminate | ServerEvent::Done => {}
            }
        }
        let _ = s.take_output();
    }
    let _ = s.feed_eof();
});
