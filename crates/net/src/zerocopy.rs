//! Zero-copy TCP sending (Linux MSG_ZEROCOPY, as iperf3's `-Z`): the kernel pins the
//! sender's pages instead of copying them into the socket buffer, and tells the sender
//! on the socket's error queue when it has let go of them. Each completion names a range
//! of send calls and says whether the kernel copied after all
//! (SO_EE_CODE_ZEROCOPY_COPIED: on loopback and veth it always does, since the receiving
//! socket may not hold the sender's pages).
//!
//! [`ZeroCopy`] counts the sends still waiting for their completion and never lets more
//! than its bound wait: at the bound it reads completions (waiting for them) before
//! sending more, so the memory the kernel keeps pinned is bounded.
//!
//! [`SendFile`] is the other way (iperf3's `-Z`): the bytes sit in a memory-backed file
//! and sendfile(2) hands its pages to the socket, so nothing is copied on the sending
//! side, on loopback too. Every other OS refuses both with a message that names the OS
//! ([`check_supported`]).

use crate::error::NetError;
use crate::sys;
use serde::{Deserialize, Serialize};
use std::io;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Sends that may wait for their completion at once (default of [`ZeroCopy::enable`]).
/// With 128 KiB writes that is 16 MiB pinned at most, four times Linux's largest default
/// send buffer (net.ipv4.tcp_wmem's 4 MiB), so the bound does not hold back the sender.
pub const DEFAULT_MAX_OUTSTANDING: u64 = 128;

/// What the completions said, over one socket's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZeroCopyStats {
    /// Send calls made with MSG_ZEROCOPY that sent bytes.
    pub sends: u64,
    /// Of those, the ones whose completion was read.
    pub completed: u64,
    /// Of the completed ones, those the kernel copied after all.
    pub copied: u64,
    /// The most sends that waited for their completion at one time.
    pub peak_outstanding: u64,
}

impl ZeroCopyStats {
    /// Sum of two sockets' counts (the peak is the larger one's: they ran side by side).
    pub fn plus(&self, o: &ZeroCopyStats) -> ZeroCopyStats {
        ZeroCopyStats {
            sends: self.sends.saturating_add(o.sends),
            completed: self.completed.saturating_add(o.completed),
            copied: self.copied.saturating_add(o.copied),
            peak_outstanding: self.peak_outstanding.max(o.peak_outstanding),
        }
    }

    /// Whether the kernel avoided the copy, in words: `none copied`, `all copied`, or
    /// `N of M copied`; `no completions` when none was read.
    pub fn kernel_copied(&self) -> String {
        match (self.completed, self.copied) {
            (0, _) => "no completions".into(),
            (n, 0) => format!("none copied ({n} completed)"),
            (n, c) if c == n => format!("all copied ({n} completed)"),
            (n, c) => format!("{c} of {n} copied"),
        }
    }
}

/// Whether this OS can send with MSG_ZEROCOPY; the error says why not and what to do.
pub fn check_supported() -> Result<(), NetError> {
    sys::zerocopy::check_supported()
}

/// One socket's zero-copy sender state.
#[derive(Debug)]
pub struct ZeroCopy {
    max_outstanding: u64,
    stats: ZeroCopyStats,
}

impl ZeroCopy {
    /// Turn SO_ZEROCOPY on for `sock` (before its first send); at most `max_outstanding`
    /// (at least 1) sends wait for their completion at once.
    pub fn enable(sock: &TcpStream, max_outstanding: u64) -> Result<ZeroCopy, NetError> {
        sys::zerocopy::enable(sock)?;
        Ok(ZeroCopy {
            max_outstanding: max_outstanding.max(1),
            stats: ZeroCopyStats::default(),
        })
    }

    /// Sends still waiting for their completion.
    pub fn outstanding(&self) -> u64 {
        self.stats.sends.saturating_sub(self.stats.completed)
    }

    pub fn stats(&self) -> ZeroCopyStats {
        self.stats
    }

    /// Send from `buf` without copying: like `write`, the count of bytes taken. At the
    /// bound of outstanding sends it first waits up to `wait` for completions and, if
    /// none came, returns `WouldBlock` without sending. The kernel's own refusal to pin
    /// more (ENOBUFS: the socket's option memory, net.core.optmem_max, is full of
    /// pending notifications) is handled the same way. `buf` must stay unchanged until
    /// its send's completion has been read (the engine sends one constant pattern).
    pub fn send(&mut self, sock: &TcpStream, buf: &[u8], wait: Duration) -> io::Result<usize> {
        if self.outstanding() >= self.max_outstanding {
            self.complete(sock, wait)?;
            if self.outstanding() >= self.max_outstanding {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        match sys::zerocopy::send(sock, buf) {
            Ok(0) => Ok(0),
            Ok(n) => {
                self.stats.sends += 1;
                self.stats.peak_outstanding = self.stats.peak_outstanding.max(self.outstanding());
                Ok(n)
            }
            Err(e) if crate::is_no_buffer_space(&e) => {
                self.complete(sock, wait)?;
                Err(io::ErrorKind::WouldBlock.into())
            }
            Err(e) => Err(e),
        }
    }

    /// Read the completions that have arrived, waiting up to `wait` for the first one if
    /// none has; returns how many sends completed.
    pub fn complete(&mut self, sock: &TcpStream, wait: Duration) -> io::Result<u64> {
        let mut got = sys::zerocopy::read_completions(sock)?;
        if got.sends == 0 && self.outstanding() > 0 && sys::zerocopy::wait_error_queue(sock, wait)?
        {
            got = sys::zerocopy::read_completions(sock)?;
        }
        // A completion can only name sends that were made: a count beyond them is not
        // believed (it would make the outstanding count wrap).
        let sends = got.sends.min(self.outstanding());
        self.stats.completed += sends;
        self.stats.copied += got.copied.min(sends);
        Ok(sends)
    }

    /// Read completions until none is outstanding or `within` has passed (the last sends
    /// complete once the peer has acknowledged their bytes). True when all were read.
    pub fn drain(&mut self, sock: &TcpStream, within: Duration) -> io::Result<bool> {
        let deadline = Instant::now() + within;
        while self.outstanding() > 0 {
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            self.complete(sock, (deadline - now).min(Duration::from_millis(20)))?;
        }
        Ok(true)
    }
}

/// Sending from a memory-backed file with sendfile(2): the file holds one write's bytes
/// and each call sends from an offset in it.
#[derive(Debug)]
pub struct SendFile {
    file: std::fs::File,
    len: usize,
    calls: u64,
}

impl SendFile {
    /// A memory file holding `bytes` (one write's worth).
    pub fn new(bytes: &[u8]) -> Result<SendFile, NetError> {
        sys::zerocopy::check_supported()?;
        let file = sys::zerocopy::memory_file(bytes)
            .map_err(|e| NetError::io("creating the memory file for sendfile (memfd_create)", e))?;
        Ok(SendFile {
            file,
            len: bytes.len(),
            calls: 0,
        })
    }

    /// Send the file's bytes from `offset` to its end (or what the socket takes of them),
    /// like `write`.
    pub fn send(&mut self, sock: &TcpStream, offset: usize) -> io::Result<usize> {
        let left = self.len.saturating_sub(offset);
        let n = sys::zerocopy::sendfile(sock, &self.file, offset, left)?;
        if n > 0 {
            self.calls += 1;
        }
        Ok(n)
    }

    /// sendfile calls that sent bytes.
    pub fn calls(&self) -> u64 {
        self.calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::Completions;

    #[test]
    fn completion_ranges_count_inclusively_and_across_the_id_wrap() {
        let mut c = Completions::default();
        c.add_range(0, 0, false);
        c.add_range(1, 10, true);
        c.add_range(u32::MAX - 1, 1, true);
        assert_eq!(c.sends, 1 + 10 + 4);
        assert_eq!(c.copied, 10 + 4);
    }

    #[test]
    fn the_copied_summary_says_how_many_were_copied() {
        let s = |completed, copied| ZeroCopyStats {
            sends: completed,
            completed,
            copied,
            peak_outstanding: 1,
        };
        assert_eq!(s(0, 0).kernel_copied(), "no completions");
        assert_eq!(s(5, 0).kernel_copied(), "none copied (5 completed)");
        assert_eq!(s(5, 5).kernel_copied(), "all copied (5 completed)");
        assert_eq!(s(5, 2).kernel_copied(), "2 of 5 copied");
        let sum = s(5, 2).plus(&ZeroCopyStats {
            peak_outstanding: 7,
            ..s(3, 3)
        });
        assert_eq!((sum.sends, sum.completed, sum.copied), (8, 8, 5));
        assert_eq!(sum.peak_outstanding, 7);
    }
}
