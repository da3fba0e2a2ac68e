//! dualperf-iperf3: an iperf3 3.x compatible client and server.
//!
//! Protocol logic is sans-I/O: [`proto`] (state bytes, cookie, JSON framing), [`json`]
//! (parameters and results documents), [`session`] (control-channel state machines),
//! [`udp`] (datagram header, RFC 3550 jitter and iperf3's loss rule). The socket layer is
//! [`client`] and [`server`], with the data loops in [`streams`].

pub mod error;
pub mod json;
pub mod proto;
pub mod session;

pub use error::Iperf3Error;
pub mod cpu;
pub mod server;
pub mod streams;
pub mod udp;
