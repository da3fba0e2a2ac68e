//! Control-frame decoder (`wire::proto`): arbitrary bytes pushed in chunks of 1–64
//! bytes (the first input byte picks the size) through `FrameDecoder`, plus
//! `FrameHeader::new_checked` and `decode_body` on the raw input. Properties: no panic;
//! `wanted_bytes() >= 1`; the buffer never holds more than one frame plus one chunk;
//! every accepted message re-encodes to a frame that decodes to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::proto::{
    decode_body, encode_frame, validate_spec, FrameDecoder, FrameHeader, Msg, FRAME_HEADER_BYTES,
    MAX_BODY_BYTES, PROTOCOL_VERSION,
};

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    if let Ok(h) = FrameHeader::new_checked(rest, PROTOCOL_VERSION) {
        assert!(h.body_bytes <= MAX_BODY_BYTES);
    }
    if let Ok(msg) = decode_body(rest) {
        check_round_trip(&msg);
    }
    let chunk = usize::from(split % 64) + 1;
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    'feed: for piece in rest.chunks(chunk) {
        dec.push(piece);
        assert!(dec.wanted_bytes() >= 1);
        loop {
            match dec.next_msg() {
                Ok(Some(msg)) => check_round_trip(&msg),
                Ok(None) => break,
                // The caller closes the connection on any decode error.
                Err(_) => break 'feed,
            }
        }
        assert!(dec.pending_bytes() <= FRAME_HEADER_BYTES + MAX_BODY_BYTES + chunk);
    }
});

fn check_round_trip(msg: &Msg) {
    if let Msg::Request { spec, .. } = msg {
        let _ = validate_spec(spec);
    }
    let frame = encode_frame(msg, PROTOCOL_VERSION);
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    dec.push(&frame);
    match dec.next_msg() {
        Ok(Some(again)) => {
            // Compare encodings, not values, so NaN-free floats compare exactly as sent.
            assert_eq!(
                encode_frame(&again, PROTOCOL_VERSION),
                frame,
                "a decoded '{}' message changed after re-encoding",
                msg.name()
            );
        }
        other => panic!("our own '{}' frame did not decode: {other:?}", msg.name()),
    }
}
