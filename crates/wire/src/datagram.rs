//! The header every dualperf test datagram (UDP stream and UDP RR) starts with, as a
//! zero-copy view over a byte buffer. [`DatagramView::new_checked`] is the only way to
//! read one from untrusted bytes; it checks the length first.
//!
//! ```text
//!  0               8               16        18        20        24
//!  +---------------+---------------+---------+---------+---------+---------
//!  | seq u64       | send_time_ns  | stream  | flags   | token   | filler…
//!  +---------------+---------------+---------+---------+---------+---------
//! ```
//!
//! `send_time_ns` is the sender's clock (ns since its data phase began); receivers only
//! use differences of it (RFC 3550 jitter, RFC 5481 IPDV), so the two hosts' clocks need
//! not agree. `token` is reserved for a session token (0 when unused).

/// Bytes of the header; the smallest UDP payload a test can use.
pub const HEADER_BYTES: usize = 24;

/// Flag: this datagram is an RR response (set by the responder).
pub const FLAG_RESPONSE: u16 = 1;

/// Header fields as plain values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatagramHeader {
    pub seq: u64,
    pub send_time_ns: u64,
    pub stream_id: u16,
    pub flags: u16,
    pub token: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("datagram of {0} bytes is shorter than the {HEADER_BYTES}-byte dualperf header")]
pub struct TooShort(pub usize);

/// A view of a datagram whose length has been checked.
#[derive(Debug, Clone, Copy)]
pub struct DatagramView<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> DatagramView<T> {
    /// Wrap untrusted bytes, checking that the header fits.
    pub fn new_checked(buf: T) -> Result<DatagramView<T>, TooShort> {
        let len = buf.as_ref().len();
        if len < HEADER_BYTES {
            return Err(TooShort(len));
        }
        Ok(DatagramView { buf })
    }

    fn u64_at(&self, at: usize) -> u64 {
        let b = self.buf.as_ref();
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        u64::from_be_bytes(a)
    }
    fn u16_at(&self, at: usize) -> u16 {
        let b = self.buf.as_ref();
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    pub fn seq(&self) -> u64 {
        self.u64_at(0)
    }
    pub fn send_time_ns(&self) -> u64 {
        self.u64_at(8)
    }
    pub fn stream_id(&self) -> u16 {
        self.u16_at(16)
    }
    pub fn flags(&self) -> u16 {
        self.u16_at(18)
    }
    pub fn token(&self) -> u32 {
        let b = self.buf.as_ref();
        u32::from_be_bytes([b[20], b[21], b[22], b[23]])
    }
    /// Total datagram length (header + filler).
    pub fn len(&self) -> usize {
        self.buf.as_ref().len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn header(&self) -> DatagramHeader {
        DatagramHeader {
            seq: self.seq(),
            send_time_ns: self.send_time_ns(),
            stream_id: self.stream_id(),
            flags: self.flags(),
            token: self.token(),
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DatagramView<T> {
    pub fn set_seq(&mut self, v: u64) {
        self.buf.as_mut()[0..8].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_send_time_ns(&mut self, v: u64) {
        self.buf.as_mut()[8..16].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_stream_id(&mut self, v: u16) {
        self.buf.as_mut()[16..18].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_flags(&mut self, v: u16) {
        self.buf.as_mut()[18..20].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_token(&mut self, v: u32) {
        self.buf.as_mut()[20..24].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_header(&mut self, h: &DatagramHeader) {
        self.set_seq(h.seq);
        self.set_send_time_ns(h.send_time_ns);
        self.set_stream_id(h.stream_id);
        self.set_flags(h.flags);
        self.set_token(h.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_through_a_buffer() {
        let h = DatagramHeader {
            seq: 0x0102_0304_0506_0708,
            send_time_ns: 42,
            stream_id: 7,
            flags: FLAG_RESPONSE,
            token: 0xdead_beef,
        };
        let mut buf = [0u8; 128];
        DatagramView::new_checked(&mut buf[..])
            .unwrap()
            .set_header(&h);
        let view = DatagramView::new_checked(&buf[..]).unwrap();
        assert_eq!(view.header(), h);
        assert_eq!(view.len(), 128);
        assert_eq!(&buf[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn short_datagrams_are_rejected_before_any_read() {
        for len in 0..HEADER_BYTES {
            assert_eq!(
                DatagramView::new_checked(vec![0xffu8; len]).unwrap_err(),
                TooShort(len)
            );
        }
        assert!(DatagramView::new_checked([0u8; HEADER_BYTES]).is_ok());
    }
}
