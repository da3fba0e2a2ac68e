//! iperf3 control-channel decoders (`iperf3::proto` / `iperf3::json`): the 4-byte
//! length-prefixed JSON frame, the state byte, and the parameters / results documents
//! built from whatever JSON a peer sends. Properties: no panic; a decoded frame never
//! claims more bytes than it was given or than the limit allows.
#![no_main]

use iperf3::json::{Params, Results};
use iperf3::proto::{decode_json_frame, json_i64, json_u64, State};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    if let Some(state) = State::from_byte(first) {
        assert_eq!(State::from_byte(state.byte()), Some(state));
    }
    let max_len = 1u32 << (first % 24);
    if let Ok(Some((value, used))) = decode_json_frame(rest, max_len) {
        assert!(used <= rest.len() && used <= 4 + max_len as usize);
        let _ = Params::from_json(&value);
        let _ = Results::from_json(&value);
        let _ = json_i64(&value);
        let _ = json_u64(&value);
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(rest) {
        if let Ok(p) = Params::from_json(&value) {
            let _ = p.total_streams();
            let _ = Params::from_json(&p.to_json());
        }
        if let Ok(r) = Results::from_json(&value) {
            let again = Results::from_json(&r.to_json());
            assert!(again.is_ok(), "our own results JSON was refused: {again:?}");
        }
    }
});
