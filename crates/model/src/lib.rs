//! dualperf-model: pure link arithmetic. Header sizes and the framing of loopback,
//! Ethernet and tbf-shaped veth ([`overhead`]), the one framing model that `run`,
//! `report`, labs and `dualperf model` share. No I/O, no clock.
#![forbid(unsafe_code)]

pub mod overhead;

pub use overhead::{header_share_of_gap, LinkModel, OverheadModel, WireCost};
