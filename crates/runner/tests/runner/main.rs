//! Integration tests of dualperf's application layer, driving the runner library as the
//! binary does, without the binary: the campaign lifecycle through the fake executor
//! (no sockets), option resolution and its errors, the embedded target on loopback, and
//! the export of stored runs, and loading a report's dataset from the store.
//! One test binary; `support` holds what the modules share.

// The library as the binary names it.
extern crate dualperf_runner as runner;

mod export;
mod lifecycle;
mod monitor;
mod report_data;
mod resolve;
mod single;
mod support;
mod target;
