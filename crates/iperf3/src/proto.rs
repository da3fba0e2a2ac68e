//! iperf3 3.x control-channel vocabulary (see docs/iperf3-protocol.md §2–§5): state
//! bytes, the 37-byte cookie, and the length-prefixed JSON framing. Pure: no I/O.

use serde_json::Value;

/// Length of the cookie including its trailing NUL.
pub const COOKIE_LEN: usize = 37;
/// Cookie alphabet (base32 as iperf3 uses it).
const COOKIE_CHARS: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Largest parameter JSON we accept (3.18+ refuses more than 8192 bytes; we allow 64 KiB).
pub const MAX_PARAMS_JSON_BYTES: u32 = 64 * 1024;
/// Largest results JSON we accept (results with `server_output_text` can be large).
pub const MAX_RESULTS_JSON_BYTES: u32 = 16 * 1024 * 1024;

/// The one-byte control messages (§3). Values are the signed byte on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    TestStart,
    TestRunning,
    TestEnd,
    ParamExchange,
    CreateStreams,
    ServerTerminate,
    ClientTerminate,
    ExchangeResults,
    DisplayResults,
    IperfDone,
    AccessDenied,
    ServerError,
}

impl State {
    pub fn byte(self) -> u8 {
        match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => 0xff,
            State::ServerError => 0xfe,
        }
    }

    /// The state a byte names; `None` for values iperf3 never sends (3, 5–8, 15, …).
    pub fn from_byte(b: u8) -> Option<State> {
        Some(match b {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            0xff => State::AccessDenied,
            0xfe => State::ServerError,
            _ => return None,
        })
    }
}

/// Builds a cookie from 36 random bytes: each byte modulo 32 picks a character, then NUL.
pub fn make_cookie(random: &[u8; COOKIE_LEN - 1]) -> [u8; COOKIE_LEN] {
    let mut cookie = [0u8; COOKIE_LEN];
    for (dst, r) in cookie.iter_mut().zip(random.iter()) {
        *dst = COOKIE_CHARS[usize::from(*r % 32)];
    }
    cookie
}

/// Compares two cookies the way iperf3 does: as C strings (up to the first NUL).
pub fn cookies_match(a: &[u8], b: &[u8]) -> bool {
    fn c_str(x: &[u8]) -> &[u8] {
        match x.iter().position(|&c| c == 0) {
            Some(n) => &x[..n],
            None => x,
        }
    }
    c_str(a) == c_str(b)
}

/// Frames a JSON value: 4-byte big-endian length, then compact JSON.
pub fn encode_json(value: &Value) -> Vec<u8> {
    let body = value.to_string().into_bytes();
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Why a JSON frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("JSON length {len} bytes exceeds the limit of {max} bytes")]
    TooLong { len: u32, max: u32 },
    #[error("invalid JSON: {0}")]
    BadJson(String),
}

/// Tries to take one JSON frame from the front of `buf`. `Ok(None)` = need more bytes;
/// `Ok(Some((value, consumed)))` on success. The length is checked before anything
/// is allocated.
pub fn decode_json_frame(buf: &[u8], max_len: u32) -> Result<Option<(Value, usize)>, FrameError> {
    let Some(len_bytes) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
    if len > max_len {
        return Err(FrameError::TooLong { len, max: max_len });
    }
    let end = 4 + len as usize;
    let Some(body) = buf.get(4..end) else {
        return Ok(None);
    };
    let value: Value =
        serde_json::from_slice(body).map_err(|e| FrameError::BadJson(e.to_string()))?;
    Ok(Some((value, end)))
}

/// Reads an integer the way iperf's cJSON writes it: integral numbers are printed as
/// unsigned 64-bit, so 18446744073709551615 means −1. Floats are truncated.
pub fn json_i64(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        Some(i)
    } else if let Some(u) = v.as_u64() {
        Some(u as i64) // two's complement wrap is exactly cJSON's quirk
    } else {
        v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)
    }
}

/// A non-negative count (bytes, packets); negative or missing values become `None`.
pub fn json_u64(v: &Value) -> Option<u64> {
    if let Some(u) = v.as_u64() {
        if u > i64::MAX as u64 {
            return None; // a cJSON-printed negative number
        }
        Some(u)
    } else {
        v.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_bytes_round_trip() {
        for b in 0..=255u8 {
            if let Some(s) = State::from_byte(b) {
                assert_eq!(s.byte(), b);
            }
        }
        assert_eq!(State::from_byte(3), None);
        assert_eq!(State::from_byte(0xfe), Some(State::ServerError));
    }

    #[test]
    fn cookie_uses_iperf3_alphabet_and_ends_in_nul() {
        let mut random = [0u8; 36];
        for (i, r) in random.iter_mut().enumerate() {
            *r = (i * 7 + 200) as u8;
        }
        let cookie = make_cookie(&random);
        assert_eq!(cookie[36], 0);
        assert!(cookie[..36].iter().all(|c| COOKIE_CHARS.contains(c)));
        assert_eq!(cookie[0], COOKIE_CHARS[200 % 32]);
        assert!(cookies_match(&cookie, &cookie));
        let mut other = cookie;
        other[5] = if other[5] == b'a' { b'b' } else { b'a' };
        assert!(!cookies_match(&cookie, &other));
    }

    #[test]
    fn frames_round_trip_and_wait_for_more_bytes() {
        let v = json!({"tcp": true, "time": 2});
        let framed = encode_json(&v);
        assert_eq!(&framed[..4], &((framed.len() - 4) as u32).to_be_bytes());
        for cut in 0..framed.len() {
            assert_eq!(decode_json_frame(&framed[..cut], 1000), Ok(None));
        }
        let mut more = framed.clone();
        more.push(0x0e);
        let (back, used) = decode_json_frame(&more, 1000).unwrap().unwrap();
        assert_eq!(back, v);
        assert_eq!(used, framed.len());
    }

    #[test]
    fn http_request_as_length_is_refused_before_allocating() {
        // §9.4: "-Age" read as a length of about 760 MB.
        let err = decode_json_frame(b"-Agent: curl", MAX_PARAMS_JSON_BYTES).unwrap_err();
        assert!(matches!(err, FrameError::TooLong { .. }));
        let bad = [0, 0, 0, 3, b'{', b'x', b'}'];
        assert!(matches!(
            decode_json_frame(&bad, 100),
            Err(FrameError::BadJson(_))
        ));
    }

    #[test]
    fn cjson_minus_one_reads_as_minus_one() {
        let v: Value =
            serde_json::from_str(r#"{"r":18446744073709551615,"b":124928,"f":1.5}"#).unwrap();
        assert_eq!(json_i64(&v["r"]), Some(-1));
        assert_eq!(json_u64(&v["r"]), None);
        assert_eq!(json_u64(&v["b"]), Some(124_928));
        assert_eq!(json_i64(&v["f"]), Some(1));
        assert_eq!(json_i64(&v["missing"]), None);
    }
}
