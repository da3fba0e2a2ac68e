//! dualperf's wire layer: what a test is ([`spec`]), what a run reports ([`metrics`]),
//! and (to come) the versioned control protocol, the datagram header view and the
//! sans-I/O client/server session state machines.
//!
//! This crate does no I/O, spawns no threads and reads no clock: callers pass `now`.

pub mod metrics;
pub mod spec;
