//! ext-headers: one connected UDP socket per datagram kind, in stream-id order: plain
//! (0), with a Destination Options header (1), with a Hop-by-Hop Options header (2)
//! (`net::pathmtu::set_ext_header`, one PadN option each). Each socket then runs the
//! request/response client, so the three kinds cross the path in the same run and
//! the server acknowledges each datagram. IPv4 has no such headers: only the plain
//! socket, and the applied setting `ext_headers` says "not applicable"; without
//! CAP_NET_RAW likewise only the plain socket, with the reason.

use crate::error::EngineError;
use crate::sockopt;
use net::pathmtu::{self, ExtHeader, PathError};
use std::net::{SocketAddr, UdpSocket};
use wire::proto::AppliedOpts;
use wire::spec::{Family, SocketOpts, TestSpec};

/// The applied setting that says which headers the datagrams carried, or why none.
pub const APPLIED_KEY: &str = "ext_headers";

/// The headers by stream id after the plain stream 0.
const HEADERS: [ExtHeader; 2] = [ExtHeader::DestOpts, ExtHeader::HopByHop];

fn connected(
    any: SocketAddr,
    server: SocketAddr,
    socket: &SocketOpts,
) -> Result<(UdpSocket, AppliedOpts), EngineError> {
    let (s, _) = net::udp_bind(any, socket)?;
    let applied = net::udp_connect(&s, server, socket)?;
    Ok((s, sockopt::to_map(&applied)))
}

/// Opens the sockets of an ext-headers run: the plain one, then (IPv6, with the
/// privilege) one per header.
pub(crate) fn open(
    spec: &TestSpec,
    any: SocketAddr,
    server: SocketAddr,
    socket: &SocketOpts,
) -> Result<(Vec<UdpSocket>, AppliedOpts), EngineError> {
    let (plain, mut applied) = connected(any, server, socket)?;
    let mut socks = vec![plain];
    if spec.family == Family::V4 {
        applied.insert(
            APPLIED_KEY.into(),
            "not applicable: IPv4 has no extension headers (plain datagrams only)".into(),
        );
        return Ok((socks, applied));
    }
    for h in HEADERS {
        let (s, _) = connected(any, server, socket)?;
        match pathmtu::set_ext_header(&s, h) {
            Ok(()) => socks.push(s),
            Err(e @ (PathError::NeedsCapNetRaw { .. } | PathError::Unsupported { .. })) => {
                applied.insert(
                    APPLIED_KEY.into(),
                    format!("unavailable: {e} (plain datagrams only)"),
                );
                socks.truncate(1);
                return Ok((socks, applied));
            }
            Err(e) => return Err(e.into()),
        }
    }
    applied.insert(
        APPLIED_KEY.into(),
        "stream 0 plain, 1 Destination Options, 2 Hop-by-Hop Options (PadN, 8 bytes each)".into(),
    );
    Ok((socks, applied))
}
