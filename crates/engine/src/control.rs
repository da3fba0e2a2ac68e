//! The control connection as blocking I/O around the sans-I/O codec: whole frames out,
//! whole messages in, every read bounded by a timeout so a silent peer never blocks.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use wire::proto::{encode_frame, FrameDecoder, Msg, WireError};

pub(crate) enum RecvError {
    /// The bytes are not a valid control stream.
    Wire(WireError),
    /// The peer closed the connection.
    Closed,
    Io(io::Error),
}

pub(crate) struct ControlConn {
    stream: TcpStream,
    decoder: FrameDecoder,
    version: u16,
}

impl ControlConn {
    pub(crate) fn new(stream: TcpStream, version: u16) -> ControlConn {
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        ControlConn {
            stream,
            decoder: FrameDecoder::new(version),
            version,
        }
    }

    /// Largest message body accepted from now on (see `FrameDecoder::set_max_body_bytes`).
    pub(crate) fn set_max_body_bytes(&mut self, n: usize) {
        self.decoder.set_max_body_bytes(n);
    }

    pub(crate) fn send(&mut self, msg: &Msg) -> io::Result<()> {
        self.stream.write_all(&encode_frame(msg, self.version))
    }

    /// The next message, waiting at most until `deadline`; `Ok(None)` on timeout.
    pub(crate) fn recv_until(&mut self, deadline: Instant) -> Result<Option<Msg>, RecvError> {
        loop {
            match self.decoder.next_msg() {
                Ok(Some(m)) => return Ok(Some(m)),
                Ok(None) => {}
                Err(e) => return Err(RecvError::Wire(e)),
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let wait = (deadline - now).max(Duration::from_millis(1));
            self.stream
                .set_read_timeout(Some(wait))
                .map_err(RecvError::Io)?;
            let mut buf = [0u8; 4096];
            let want = self.decoder.wanted_bytes().min(buf.len());
            match self.stream.read(&mut buf[..want]) {
                Ok(0) => return Err(RecvError::Closed),
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(RecvError::Io(e)),
            }
        }
    }

    /// Close politely: send FIN after everything written, then read and discard what
    /// the peer still sends (briefly), so that closing with unread input does not turn
    /// into a reset that could destroy our last reply before the peer reads it.
    pub(crate) fn close(self) {
        let mut s = self.stream;
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        let deadline = Instant::now() + Duration::from_millis(200);
        let mut buf = [0u8; 4096];
        while Instant::now() < deadline {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}
