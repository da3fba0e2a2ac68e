//! Std-only pieces the platforms share: a monotonic clock from `Instant`, the wall
//! clock from `SystemTime`, and the one-datagram-per-call UDP receive loop. Nothing here
//! calls the OS directly; the platform modules use what they have no better version of.

#![cfg_attr(target_os = "linux", allow(dead_code))]

use crate::sys::datagram::{Meta, RecvBatch};
use std::io;
use std::net::UdpSocket;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// Monotonic ns since the first call in this process (std's monotonic clock:
/// QueryPerformanceCounter on Windows, mach_absolute_time / CLOCK_MONOTONIC elsewhere).
pub(crate) fn now_ns() -> u64 {
    // +1 so that no reading is 0, which callers may use as "unset".
    u64::try_from(origin().elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// Wall-clock ns since the Unix epoch.
pub(crate) fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Sleep until [`now_ns`] reaches `deadline_ns` (std's sleep: a high-resolution waitable
/// timer on Windows 10 1803+, nanosleep elsewhere).
pub(crate) fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
    loop {
        let now = now_ns();
        if now >= deadline_ns {
            return Ok(());
        }
        std::thread::sleep(Duration::from_nanos(deadline_ns - now));
    }
}

/// Where receive calls block (Windows, the BSDs): `ready` is the wait for readability
/// (`Ok(false)`: timed out), then `recv` takes what is queued.
pub(crate) fn when_readable(
    ready: io::Result<bool>,
    recv: impl FnOnce() -> io::Result<usize>,
) -> io::Result<usize> {
    if ready? {
        recv()
    } else {
        Ok(0)
    }
}

/// Receive one datagram per `recv_from` until the batch is full or `ready` says nothing
/// more is queued (`ready` is only asked before the second and later datagrams: the
/// caller has waited for the first). A datagram longer than its buffer is cut and
/// flagged: Windows reports it as WSAEMSGSIZE, other systems fill the buffer exactly,
/// which is flagged too (a datagram of exactly the buffer's size reads as cut).
pub(crate) fn recv_each(
    sock: &UdpSocket,
    batch: &mut RecvBatch,
    mut ready: impl FnMut() -> io::Result<bool>,
    is_message_too_long: impl Fn(&io::Error) -> bool,
) -> io::Result<usize> {
    for i in 0..batch.bufs.len() {
        if i > 0 && !ready()? {
            break;
        }
        let buf = &mut batch.bufs[i];
        let cap = buf.len();
        match sock.recv_from(buf) {
            Ok((n, src)) => batch.metas.push(Meta {
                buf: i,
                offset: 0,
                len: n.min(cap),
                src,
                rx_ns: None,
                truncated: n >= cap && cap < crate::sys::datagram::MAX_DATAGRAM_BYTES,
            }),
            Err(e) if is_message_too_long(&e) => {
                // The sender's address is lost with the error; the socket is connected
                // in every use that reaches here, so the peer is its address.
                if let Ok(src) = sock.peer_addr() {
                    batch.metas.push(Meta {
                        buf: i,
                        offset: 0,
                        len: cap,
                        src,
                        rx_ns: None,
                        truncated: true,
                    });
                }
            }
            Err(e) => {
                return match e.kind() {
                    io::ErrorKind::WouldBlock
                    | io::ErrorKind::Interrupted
                    | io::ErrorKind::TimedOut => Ok(batch.metas.len()),
                    _ if !batch.metas.is_empty() => Ok(batch.metas.len()),
                    _ => Err(e),
                };
            }
        }
    }
    Ok(batch.metas.len())
}

/// Zero-copy sending where the OS has no MSG_ZEROCOPY: refused, naming the OS. The
/// sending calls are never reached (enabling fails first) and fail the same way.
pub(crate) mod zerocopy_unsupported {
    use crate::error::NetError;
    use crate::sys::Completions;
    use std::io;
    use std::net::TcpStream;
    use std::time::Duration;

    pub(crate) fn check_supported() -> Result<(), NetError> {
        Err(crate::sys::unsupported_here(
            "zero-copy sending (MSG_ZEROCOPY)",
            ": it needs Linux 4.14 or later; drop --zerocopy",
        ))
    }

    pub(crate) fn enable(_sock: &TcpStream) -> Result<(), NetError> {
        check_supported()
    }

    fn refused() -> io::Error {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "zero-copy sending is Linux only",
        )
    }

    pub(crate) fn send(_sock: &TcpStream, _buf: &[u8]) -> io::Result<usize> {
        Err(refused())
    }

    pub(crate) fn wait_error_queue(_sock: &TcpStream, _wait: Duration) -> io::Result<bool> {
        Err(refused())
    }

    pub(crate) fn read_completions(_sock: &TcpStream) -> io::Result<Completions> {
        Err(refused())
    }

    pub(crate) fn memory_file(_bytes: &[u8]) -> io::Result<std::fs::File> {
        Err(refused())
    }

    pub(crate) fn sendfile(
        _sock: &TcpStream,
        _file: &std::fs::File,
        _offset: usize,
        _len: usize,
    ) -> io::Result<usize> {
        Err(refused())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_clock_advances_and_sleeps() {
        let t0 = now_ns();
        assert!(t0 > 0);
        sleep_until_ns(t0 + 2_000_000).unwrap();
        let t1 = now_ns();
        assert!(t1 >= t0 + 2_000_000, "slept {} ns", t1 - t0);
        sleep_until_ns(t0).unwrap();
        let w = wall_ns();
        assert!(w > 1_577_836_800_000_000_000);
    }

    /// Where the OS has no MSG_ZEROCOPY, asking for zero-copy sending is refused with a
    /// message that names the OS and says what to do, before any socket is touched.
    #[test]
    fn zero_copy_is_refused_by_name_where_the_os_lacks_it() {
        let err = zerocopy_unsupported::check_supported()
            .unwrap_err()
            .to_string();
        assert!(err.contains("MSG_ZEROCOPY"), "{err}");
        assert!(err.contains(crate::sys::os_name()), "{err}");
        assert!(err.contains("drop --zerocopy"), "{err}");
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert!(zerocopy_unsupported::enable(&s).is_err());
        let e = zerocopy_unsupported::send(&s, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(zerocopy_unsupported::memory_file(b"x").is_err());
    }
}
