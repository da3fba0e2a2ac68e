//! The data plane both ends share: bulk sending on unidirectional streams (paced or
//! not, bounded by time or count), draining them, and the two halves of
//! request/response. Counts are of payload bytes written and read; streams are
//! reliable and read to their end, so the receiver's count equals the sender's. A sender
//! returns only once its peer has acknowledged every byte, so its path figures are
//! taken after the data arrived.

use std::time::{Duration, Instant};

use quinn::{Connection, RecvStream, SendStream};
use tokio::task::JoinSet;
use wire::spec::Bound;

use crate::figures::ns;
use crate::spec::QuicTest;
use crate::transport::stream_error;
use crate::QuicError;

/// A byte that fills every payload.
const FILL: u8 = 0x5a;

/// Whether a sender that started at `start` and made `writes` writes is done.
fn done(bound: Bound, start: Instant, writes: u64) -> bool {
    match bound {
        Bound::DurationNs(d) => start.elapsed() >= Duration::from_nanos(d),
        Bound::Count(n) => writes >= n,
    }
}

/// What one end does in a stream test.
pub(crate) struct Role {
    pub(crate) sends: bool,
    pub(crate) receives: bool,
}

/// One end's part of a stream test, sending and receiving at once as its role says;
/// returns the payload bytes it wrote, the bytes it read and its receive time.
pub(crate) async fn bulk(
    conn: &Connection,
    test: &QuicTest,
    start: Instant,
    role: Role,
) -> Result<(u64, u64, u64), QuicError> {
    let send = async {
        match role.sends {
            true => send_bulk(conn, test, start).await,
            false => Ok(0),
        }
    };
    let receive = async {
        match role.receives {
            true => receive_bulk(conn, test.streams(), start).await,
            false => Ok((0, 0)),
        }
    };
    let (sent, (received, receive_ns)) = tokio::try_join!(send, receive)?;
    Ok((sent, received, receive_ns))
}

/// Open `test.streams()` unidirectional streams and send on each until the bound;
/// returns the payload bytes written, all acknowledged by the peer.
async fn send_bulk(conn: &Connection, test: &QuicTest, start: Instant) -> Result<u64, QuicError> {
    let streams = test.streams();
    let chunk = bytes::Bytes::from(vec![FILL; test.payload_bytes as usize]);
    // Each stream's share of the rate, in bytes per second.
    let per_stream_bytes_per_s = test
        .rate_bps
        .map(|bps| bps as f64 / 8.0 / f64::from(streams.max(1)));
    let mut set = JoinSet::new();
    for _ in 0..streams {
        let send = conn.open_uni().await.map_err(|e| stream_error(conn, e))?;
        let (chunk, bound) = (chunk.clone(), test.bound);
        let conn = conn.clone();
        set.spawn(async move {
            send_one(send, chunk, bound, start, per_stream_bytes_per_s)
                .await
                .map_err(|e| stream_error(&conn, e))
        });
    }
    let mut sent = 0u64;
    while let Some(joined) = set.join_next().await {
        let bytes = joined.map_err(|e| QuicError::Connection(format!("sender task: {e}")))??;
        sent += bytes;
    }
    Ok(sent)
}

async fn send_one(
    mut send: SendStream,
    chunk: bytes::Bytes,
    bound: Bound,
    start: Instant,
    bytes_per_s: Option<f64>,
) -> Result<u64, String> {
    let (mut sent, mut writes) = (0u64, 0u64);
    while !done(bound, start, writes) {
        if let Some(rate) = bytes_per_s {
            let due = start + Duration::from_secs_f64(sent as f64 / rate);
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
                if done(bound, start, writes) {
                    break;
                }
            }
        }
        send.write_chunk(chunk.clone())
            .await
            .map_err(|e| e.to_string())?;
        sent += chunk.len() as u64;
        writes += 1;
    }
    send.finish().map_err(|e| e.to_string())?;
    // Resolves once the peer has acknowledged every byte and the end of the stream.
    stopped(&send).await?;
    Ok(sent)
}

/// Wait until the peer has acknowledged a finished stream's every byte; an error when it
/// stopped the stream instead.
async fn stopped(send: &SendStream) -> Result<(), String> {
    match send.stopped().await {
        Ok(None) => Ok(()),
        Ok(Some(code)) => Err(format!("the peer stopped the stream (code {code})")),
        Err(e) => Err(e.to_string()),
    }
}

/// Accept `streams` unidirectional streams and read each to its end; returns the payload
/// bytes read and the time from `start` to the last one's end.
async fn receive_bulk(
    conn: &Connection,
    streams: u16,
    start: Instant,
) -> Result<(u64, u64), QuicError> {
    let mut set = JoinSet::new();
    for _ in 0..streams {
        let recv = conn.accept_uni().await.map_err(|e| stream_error(conn, e))?;
        let conn = conn.clone();
        set.spawn(async move { drain(recv).await.map_err(|e| stream_error(&conn, e)) });
    }
    let mut received = 0u64;
    while let Some(joined) = set.join_next().await {
        received += joined.map_err(|e| QuicError::Connection(format!("receiver task: {e}")))??;
    }
    Ok((received, ns(start.elapsed())))
}

async fn drain(mut recv: RecvStream) -> Result<u64, quinn::ReadError> {
    let mut received = 0u64;
    while let Some(chunk) = recv.read_chunk(usize::MAX, false).await? {
        received += chunk.bytes.len() as u64;
    }
    Ok(received)
}

/// The client's half of request/response: exchanges on one bidirectional stream until
/// the bound, each timed into `rtts`; returns the exchanges made.
pub(crate) async fn rr_client(
    conn: &Connection,
    test: &QuicTest,
    start: Instant,
    rtts: &mut measure::latency::LatencyHistogram,
) -> Result<u64, QuicError> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| stream_error(conn, e))?;
    let request = vec![FILL; test.payload_bytes as usize];
    let mut response = vec![0u8; request.len()];
    let mut exchanges = 0u64;
    while !done(test.bound, start, exchanges) {
        let t = Instant::now();
        send.write_all(&request)
            .await
            .map_err(|e| stream_error(conn, e))?;
        recv.read_exact(&mut response)
            .await
            .map_err(|e| stream_error(conn, e))?;
        rtts.record(ns(t.elapsed()));
        exchanges += 1;
    }
    send.finish().map_err(|e| stream_error(conn, e))?;
    // The server finishes its side once it has seen ours end (with nothing more: a
    // limit of 0 bytes makes any extra byte an error).
    recv.read_to_end(0)
        .await
        .map_err(|e| stream_error(conn, e))?;
    Ok(exchanges)
}

/// The server's half: answer each request with its bytes until the client ends its
/// side; returns the requests answered.
pub(crate) async fn rr_server(conn: &Connection, payload_bytes: u32) -> Result<u64, QuicError> {
    let (mut send, mut recv) = conn.accept_bi().await.map_err(|e| stream_error(conn, e))?;
    let mut request = vec![0u8; payload_bytes as usize];
    let mut answered = 0u64;
    loop {
        match recv.read_exact(&mut request).await {
            Ok(()) => {}
            Err(quinn::ReadExactError::FinishedEarly(0)) => break,
            Err(quinn::ReadExactError::FinishedEarly(n)) => {
                return Err(QuicError::Protocol(format!(
                    "the client ended its side in the middle of a request ({n} of {payload_bytes} bytes)"
                )))
            }
            Err(quinn::ReadExactError::ReadError(e)) => return Err(stream_error(conn, e)),
        }
        send.write_all(&request)
            .await
            .map_err(|e| stream_error(conn, e))?;
        answered += 1;
    }
    send.finish().map_err(|e| stream_error(conn, e))?;
    stopped(&send).await.map_err(|e| stream_error(conn, e))?;
    Ok(answered)
}
