//! Test support that the integration tests of several crates share (a dev-dependency
//! only, never shipped): a free port for a test's server ([`free_port`]) and a
//! throwaway PostgreSQL cluster ([`pg::Cluster`]). Each test crate keeps the helpers
//! only it needs in its own `tests/` folder.
#![forbid(unsafe_code)]

pub mod pg;
mod port;

pub use port::free_port;
