//! Test support that the integration tests of several crates share (a dev-dependency
//! only, never shipped): a free port for a test's server ([`free_port`]), a
//! throwaway PostgreSQL cluster ([`pg::Cluster`]), a FIFO ([`make_fifo`]) and an
//! always-busy iperf3 server ([`busy_iperf3_server`]). Each test crate keeps the helpers
//! only it needs in its own `tests/` folder.
#![forbid(unsafe_code)]

mod busy;
pub mod pg;
mod port;

pub use busy::busy_iperf3_server;
pub use port::free_port;

/// A FIFO (named pipe) at `path`, made by the `mkfifo` tool.
pub fn make_fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}
