//! dualperf-engine: the measurement loops on real sockets, the server and the client.
//!
//! - [`run_client`] runs one test against a server and returns a [`RunResult`]
//!   (both sides merged; [`RunResult::metrics`] flattens it to `wire::metrics` names).
//! - [`run_rate_search`] runs a udp-stream test as an RFC 2544 throughput search (the
//!   highest rate whose loss stays within a threshold).
//! - [`run_loaded`] measures latency under load: paced RTT probes idle, then beside
//!   saturating TCP streams (one test group on the server).
//! - [`start_server`] / [`run_server`] serve tests; [`EmbeddedServer`] is an in-process
//!   server on loopback for runs with no remote host.
//! - Results leave only through the [`Recorder`] trait and return values: the engine
//!   never prints.
#![forbid(unsafe_code)]

mod client;
mod control;
mod cpu;
mod crr;
mod data;
mod error;
mod ext;
mod loaded;
mod plan;
mod pmtu;
mod quic_hook;
mod result;
mod search;
mod server;
mod server_ctx;
mod server_session;
mod sockopt;
mod tcp;
mod tcp_model;
mod udp;

pub use client::{run_client, ClientConfig};
pub use crr::TIME_WAIT_KEY as TCP_CRR_TIME_WAIT_KEY;
pub use data::DROP_EVERY_ENV;
pub use error::EngineError;
pub use ext::APPLIED_KEY as EXT_HEADERS_APPLIED_KEY;
pub use loaded::{
    run_loaded, LoadedPart, LoadedResult, LoadedSpec, PartIntervals, Probes, MIN_LOADED_NS,
    RPM_REFERENCE,
};
pub use pmtu::{MtuSearch, PmtuReport, SizeFate, TooBigSignal};
pub use quic_hook::{QuicEndpoint, QuicHook, QuicRun, NO_QUIC};
pub use result::{
    framing_bytes, NoOneWayDelay, OneWayDelay, PathFraming, RunResult, SearchOutcome, StreamRow,
    WindowRow, MIN_RATE_DATAGRAMS, RESULT_SCHEMA_VERSION, STARVED_BELOW_FAIR_SHARE_PCT,
};
pub use search::{run_rate_search, Bisection, RateSearch};
pub use server::{default_binds, run_server, start_server, EmbeddedServer, ServerHandle};
pub use server_ctx::{
    Admission, AdmissionGuard, AdmitError, ServerConfig, SessionFailure, TestLog, TestLogFn,
    DEFAULT_PORT,
};
pub use server_session::CLOCK_SHIFT_ENV;
pub use wire::proto::{IntervalSample, SideStats};
pub use wire::session::Limits;
pub use wire::spec::{LoadDirection, LoadedOpts};

/// Receives results as a run produces them (per-interval samples of this side).
pub trait Recorder {
    fn on_interval(&mut self, sample: &IntervalSample) {
        let _ = sample;
    }
}

/// A recorder that keeps nothing.
pub struct NullRecorder;

impl Recorder for NullRecorder {}

/// A recorder that keeps every interval sample.
#[derive(Debug, Default)]
pub struct VecRecorder {
    pub samples: Vec<IntervalSample>,
}

impl Recorder for VecRecorder {
    fn on_interval(&mut self, sample: &IntervalSample) {
        self.samples.push(*sample);
    }
}

/// A fresh nonce from the OS random source (getrandom(2)), for the PSK handshake.
pub(crate) fn os_nonce() -> Result<wire::auth::Nonce, EngineError> {
    let mut n = [0u8; wire::auth::NONCE_BYTES];
    getrandom::fill(&mut n).map_err(|e| {
        EngineError::io(
            "cannot read random bytes from the OS for the authentication nonce",
            std::io::Error::other(e.to_string()),
        )
    })?;
    Ok(wire::auth::Nonce(n))
}

/// What binds a test's data streams to its control session: the bytes every TCP data
/// connection starts with, and `token` whose low 32 bits tag every datagram.
#[derive(Debug, Clone)]
pub(crate) struct DataBinding {
    pub prefix: Vec<u8>,
    pub token: u64,
}

impl DataBinding {
    /// No key: the random token of `accept`, 8 bytes big-endian on TCP.
    pub(crate) fn keyless(token: u64) -> DataBinding {
        DataBinding {
            prefix: token.to_be_bytes().to_vec(),
            token,
        }
    }

    /// Authenticated: the 16-byte session token (never sent on the control connection)
    /// on TCP; its `datagram_tag` in every datagram.
    pub(crate) fn keyed(t: &wire::auth::SessionToken) -> DataBinding {
        let b = t.0;
        let high = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
        DataBinding {
            prefix: b.to_vec(),
            token: (u64::from(high) << 32) | u64::from(t.datagram_tag()),
        }
    }

    /// Constant-time check of the first bytes of a data connection.
    pub(crate) fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.prefix.len()
            && bytes
                .iter()
                .zip(&self.prefix)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// A fresh 64-bit session token (not cryptographic: it keeps strays out, no more).
pub(crate) fn random_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod binding_tests {
    use super::*;

    #[test]
    fn keyed_binding_tags_datagrams_with_the_session_tokens_tag() {
        let t = wire::auth::SessionToken([0xab; 16]);
        let mut u = t;
        u.0[15] ^= 1;
        let b = DataBinding::keyed(&t);
        assert_eq!(b.token as u32, t.datagram_tag());
        assert!(b.matches(&t.0));
        assert!(!b.matches(&u.0), "last byte differs");
        assert!(!b.matches(&t.0[..8]), "short prefix");
        let k = DataBinding::keyless(0x0102_0304_0506_0708);
        assert!(k.matches(&[1, 2, 3, 4, 5, 6, 7, 8]));
        assert_ne!(os_nonce().unwrap(), os_nonce().unwrap());
    }
}
