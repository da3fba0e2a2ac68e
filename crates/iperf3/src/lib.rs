//! dualperf-iperf3: an iperf3 3.x compatible client and server.
//!
//! Protocol logic is sans-I/O: [`proto`] (state bytes, cookie, JSON framing), [`json`]
//! (parameters and results documents), [`session`] (control-channel state machines),
//! [`udp`] (datagram header, RFC 3550 jitter and iperf3's loss rule), [`outcome`]
//! (both sides' counts to dualperf metrics), [`cpu`] (process CPU as iperf3 reports
//! it), [`policy`] (the server's limits) and [`auth`] (iperf3's RSA authentication).
//! The socket layer is [`client`] and [`server`], with the data loops in [`streams`].
//!
//! Entry points: [`client::run`] and [`server::Server`].
#![forbid(unsafe_code)]

pub mod auth;
pub mod client;
pub mod cpu;
pub mod error;
pub mod json;
pub mod outcome;
pub mod policy;
pub mod proto;
pub mod server;
pub mod session;
pub mod streams;
pub mod udp;

pub use client::{run, ClientOptions};
pub use error::Iperf3Error;
pub use outcome::{DirectionResult, Iperf3Result};
pub use server::{Server, ServerOptions};
