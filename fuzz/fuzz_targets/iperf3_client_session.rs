//! iperf3 client control session (`iperf3::session::ClientSession`) fed a hostile
//! server's bytes in chunks, the application answering every event as the real client
//! does. Properties: no panic; once done it stays done.
#![no_main]

use iperf3::session::{ClientEvent, ClientSession};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split % 64) + 1;
    let cookie = [b'a'; 37];
    let mut s = ClientSession::new(&cookie, serde_json::json!({"tcp": true, "time": 1}));
    for piece in rest.chunks(chunk) {
        let was_done = s.is_done();
        let events = match s.feed(piece) {
            Ok(events) => events,
            Err(_) => return,
        };
        assert!(!was_done || events.is_empty(), "events after done");
        for ev in events {
            match ev {
                ClientEvent::TestRunning if split & 0x80 != 0 => s.test_end(),
                ClientEvent::ExchangeResults => s.send_results(&serde_json::json!({"streams": []})),
                _ => {}
            }
        }
        let _ = s.take_output();
    }
    let _ = s.feed_eof();
});
