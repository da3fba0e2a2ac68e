//! dualperf-model: pure link arithmetic. Header sizes and the framing of loopback,
//! Ethernet and tbf-shaped veth ([`overhead`]), the one framing model that `run`,
//! `report`, labs and `dualperf model` share; the 802.11 airtime model and MCS rates
//! ([`wifi`]); the link names users type ([`link`]). No I/O, no clock.
#![forbid(unsafe_code)]

pub mod link;
pub mod overhead;
pub mod wifi;

pub use link::{Link, LinkError};
pub use overhead::{header_share_of_gap, tcp_header_bytes, LinkModel, OverheadModel, WireCost};
