//! Test support that the integration tests of several crates share (a dev-dependency
//! only, never shipped): a free port for a test's server ([`free_port`]), a
//! throwaway PostgreSQL cluster ([`pg::Cluster`]) and a FIFO ([`make_fifo`]). Each test crate keeps the helpers
//! only it needs in its own `tests/` folder.
#![forbid(unsafe_code)]

pub mod pg;
mod port;

pub use port::free_port;

/// A FIFO (named pipe) at `path`, made by the `mkfifo` tool.
pub fn make_fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}
