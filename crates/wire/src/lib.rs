//! dualperf's wire layer: what a test is ([`spec`]), what a run reports ([`metrics`]),
//! the versioned control protocol ([`proto`]), the datagram header view ([`datagram`])
//! and the sans-I/O client/server session state machines ([`session`]); and the host
//! readings `net` takes from the OS, as numbers with their text parsers and differences
//! ([`cpu`], [`snmp`]); text made safe for each output format ([`text`] for a terminal,
//! [`escape`] for Markdown, CSV, HTML and SVG).
//!
//! This crate does no I/O, spawns no threads and reads no clock: callers pass `now`.
#![forbid(unsafe_code)]

pub mod auth;
pub mod bounds;
pub mod cpu;
pub mod datagram;
pub mod escape;
pub mod metric_table;
pub mod metrics;
pub mod plausible;
pub mod proto;
pub mod quantity;
pub mod session;
pub mod snmp;
pub mod spec;
pub mod text;
pub mod traffic;
