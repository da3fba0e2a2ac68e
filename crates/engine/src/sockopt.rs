//! Applying the user's [`SocketOpts`] to a data socket and reading back what the kernel
//! actually applied (Linux doubles SO_SNDBUF/SO_RCVBUF, clamps them to its limits, and
//! may refuse a congestion-control module). A refused option is reported, not fatal.

use socket2::SockRef;
use wire::proto::AppliedOpts;
use wire::spec::{Family, SocketOpts, Transport};

/// Apply `opts` to `sock` (any std socket) and return what the kernel reports.
pub(crate) fn apply<'s, S>(
    sock: &'s S,
    opts: &SocketOpts,
    family: Family,
    transport: Transport,
) -> AppliedOpts
where
    SockRef<'s>: From<&'s S>,
{
    let s = SockRef::from(sock);
    let mut out = AppliedOpts::new();
    let mut note = |k: &str, r: std::io::Result<()>| {
        if let Err(e) = r {
            out.insert(format!("{k}_error"), e.to_string());
        }
    };
    if let Some(b) = opts.sndbuf_bytes {
        note("sndbuf", s.set_send_buffer_size(b as usize));
    }
    if let Some(b) = opts.rcvbuf_bytes {
        note("rcvbuf", s.set_recv_buffer_size(b as usize));
    }
    if let Some(tos) = opts.tos {
        let r = match family {
            Family::V4 => s.set_tos_v4(u32::from(tos)),
            Family::V6 => s.set_tclass_v6(u32::from(tos)),
        };
        note("tos", r);
    }
    if transport == Transport::Tcp {
        if opts.nodelay {
            note("nodelay", s.set_tcp_nodelay(true));
        }
        if let Some(mss) = opts.mss_bytes {
            note("mss", s.set_tcp_mss(mss));
        }
        if let Some(cc) = &opts.congestion {
            note("congestion", s.set_tcp_congestion(cc.as_bytes()));
        }
    }
    if opts.dont_fragment {
        note("dont_fragment", net_extra::set_dont_fragment(&s, family));
    }
    if opts.flowlabel.is_some() {
        out.insert(
            "flowlabel_error".into(),
            "setting an IPv6 flow label is not supported yet".into(),
        );
    }
    read_back(&s, family, transport, &mut out);
    out
}

fn read_back(s: &SockRef<'_>, family: Family, transport: Transport, out: &mut AppliedOpts) {
    if let Ok(v) = s.send_buffer_size() {
        out.insert("sndbuf_bytes".into(), v.to_string());
    }
    if let Ok(v) = s.recv_buffer_size() {
        out.insert("rcvbuf_bytes".into(), v.to_string());
    }
    let tos = match family {
        Family::V4 => s.tos_v4(),
        Family::V6 => s.tclass_v6(),
    };
    if let Ok(v) = tos {
        out.insert("tos".into(), v.to_string());
    }
    if transport == Transport::Tcp {
        if let Ok(v) = s.tcp_nodelay() {
            out.insert("nodelay".into(), v.to_string());
        }
        if let Ok(v) = s.tcp_mss() {
            out.insert("mss_bytes".into(), v.to_string());
        }
        if let Ok(v) = s.tcp_congestion() {
            let name = String::from_utf8_lossy(&v);
            out.insert("congestion".into(), name.trim_end_matches('\0').to_string());
        }
    }
}

mod net_extra {
    use socket2::SockRef;
    use wire::spec::Family;

    /// Don't-fragment needs IP_MTU_DISCOVER, which socket2 does not wrap; the `net`
    /// crate owns raw setsockopt calls.
    pub(super) fn set_dont_fragment(_s: &SockRef<'_>, _family: Family) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "don't-fragment is not supported yet",
        ))
    }
}
