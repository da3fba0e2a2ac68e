//! dualperf-engine: the measurement loops on real sockets, the server and the client.
//!
//! - [`run_client`] runs one test against a server and returns a [`RunResult`]
//!   (both sides merged; [`RunResult::metrics`] flattens it to `wire::metrics` names).
//! - [`start_server`] / [`run_server`] serve tests; [`EmbeddedServer`] is an in-process
//!   server on loopback for runs with no remote host.
//! - Results leave only through the [`Recorder`] trait and return values: the engine
//!   never prints.

mod client;
mod control;
mod cpu;
mod data;
mod error;
mod plan;
mod result;
mod server;
mod server_session;
mod sockopt;
mod tcp;
mod udp;

pub use client::{run_client, ClientConfig};
pub use data::DROP_EVERY_ENV;
pub use error::EngineError;
pub use result::{framing_bytes, RunResult, RESULT_SCHEMA_VERSION};
pub use server::{
    default_binds, run_server, start_server, EmbeddedServer, ServerConfig, ServerHandle, TestLog,
    TestLogFn, DEFAULT_PORT,
};
pub use wire::proto::{IntervalSample, SideStats};
pub use wire::session::Limits;

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
