//! Linux: the interface holding an address (getifaddrs), its kind (/sys/class/net), and
//! for a radio the nl80211 dumps over a generic netlink socket (`netlink-sys`), parsed
//! by [`super::nl80211`]. Each exchange is bounded: a receive timeout, a cap on the
//! datagrams of one dump, and a reply buffer of fixed size (a truncated datagram is an
//! error, not a short read).

use super::nl80211::{self, ParseError, Readings};
use super::{Field, LinkKind, LinkState, WifiError, NOT_WIRELESS};
use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};
use std::net::IpAddr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

/// The longest we wait for one reply datagram.
const RECV_TIMEOUT: Duration = Duration::from_secs(2);
/// The most datagrams one dump may take (a scan of a crowded band is a few hundred BSSs).
const MAX_DATAGRAMS: usize = 1024;
/// The most entries of one dump kept (a scan lists every BSS in range).
const MAX_ENTRIES: usize = 4096;
/// One reply datagram (the kernel sizes dump parts to at most 32 KiB by default).
const RECV_BUF: usize = 64 * 1024;

pub(super) fn link_state_of(local: IpAddr) -> LinkState {
    match crate::sys::unix_common::interface_name_of(local) {
        Some(name) => link_state_of_iface(&name),
        None => LinkState::without_radio(
            Field::unavailable(format!("no interface holds {local}")),
            LinkKind::Unknown,
            "the interface is unknown",
        ),
    }
}

/// The link state of the interface called `name`.
pub fn link_state_of_iface(name: &str) -> LinkState {
    let kind = kind_of(name);
    if kind != LinkKind::Wifi {
        return LinkState::without_radio(Field::Value(name.to_string()), kind, NOT_WIRELESS);
    }
    let ifindex = std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    match ifindex
        .ok_or_else(|| WifiError::Failed(format!("cannot read the index of {name}")))
        .and_then(read)
    {
        Ok(r) => nl80211::link_state(&r),
        Err(e) => LinkState::without_radio(
            Field::Value(name.to_string()),
            LinkKind::Wifi,
            &format!("nl80211: {e}"),
        ),
    }
}

/// What the interface is: a radio if /sys shows `wireless` or `phy80211` for it, else
/// by its ARPHRD type (772 loopback, 1 Ethernet), asked of the kernel with
/// SIOCGIFHWADDR, which answers for the calling thread's network namespace (a lab's
/// interfaces are not in the /sys of the namespace that mounted it).
fn kind_of(name: &str) -> LinkKind {
    let dir = Path::new("/sys/class/net").join(name);
    if dir.join("wireless").exists() || dir.join("phy80211").exists() {
        return LinkKind::Wifi;
    }
    let sysfs_type = || {
        std::fs::read_to_string(dir.join("type"))
            .ok()
            .and_then(|t| t.trim().parse::<u16>().ok())
    };
    match arphrd_type(name).or_else(sysfs_type) {
        Some(libc::ARPHRD_LOOPBACK) => LinkKind::Loopback,
        Some(libc::ARPHRD_ETHER) => LinkKind::Wired,
        _ => LinkKind::Unknown,
    }
}

/// The interface's hardware type (`ARPHRD_*`) from SIOCGIFHWADDR.
fn arphrd_type(name: &str) -> Option<u16> {
    let bytes = name.as_bytes();
    if bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return None;
    }
    let sock = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::DGRAM, None).ok()?;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq with a NUL-terminated name (IFNAMSIZ checked
    // above, the rest zero) and outlives the call; the socket is open.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) };
    if rc != 0 {
        return None;
    }
    // SAFETY: after a successful SIOCGIFHWADDR the kernel filled `ifru_hwaddr`.
    Some(unsafe { req.ifr_ifru.ifru_hwaddr.sa_family })
}

pub(super) fn wireless_interfaces() -> Result<Vec<String>, WifiError> {
    let mut nl = Nl::open()?;
    let mut names = Vec::new();
    nl.dump(nl80211::CMD_GET_INTERFACE, None, |a| {
        let i = nl80211::parse_interface(a)?;
        if let Some(n) = i.name {
            names.push(n);
        }
        Ok(())
    })?;
    Ok(names)
}

/// The interface's nl80211 readings (each dump after the interface's may fail alone).
fn read(ifindex: u32) -> Result<Readings, WifiError> {
    let mut nl = Nl::open()?;
    let mut iface = None;
    nl.dump(nl80211::CMD_GET_INTERFACE, Some(ifindex), |a| {
        let i = nl80211::parse_interface(a)?;
        if i.ifindex == Some(ifindex) {
            iface = Some(i);
        }
        Ok(())
    })?;
    let iface = iface.ok_or_else(|| {
        WifiError::Failed(format!("nl80211 does not know interface index {ifindex}"))
    })?;
    Ok(Readings {
        iface,
        stations: nl.collect(nl80211::CMD_GET_STATION, ifindex, nl80211::parse_station),
        survey: nl.collect(nl80211::CMD_GET_SURVEY, ifindex, nl80211::parse_survey),
        scan: nl.collect(nl80211::CMD_GET_SCAN, ifindex, nl80211::parse_bss),
    })
}

/// A generic netlink socket that knows the nl80211 family id.
struct Nl {
    sock: Socket,
    family: u16,
    seq: u32,
    buf: Vec<u8>,
}

impl Nl {
    fn open() -> Result<Nl, WifiError> {
        let fail = |what: &str, e: std::io::Error| WifiError::Failed(format!("{what}: {e}"));
        let mut sock = Socket::new(NETLINK_GENERIC).map_err(|e| {
            WifiError::NoService(format!(
                "no wireless interface: cannot open a generic netlink socket ({e})"
            ))
        })?;
        sock.bind_auto()
            .map_err(|e| fail("binding a netlink socket", e))?;
        sock.connect(&SocketAddr::new(0, 0))
            .map_err(|e| fail("connecting a netlink socket to the kernel", e))?;
        set_recv_timeout(&sock, RECV_TIMEOUT).map_err(|e| fail("setting SO_RCVTIMEO", e))?;
        let mut nl = Nl {
            sock,
            family: nl80211::GENL_ID_CTRL,
            seq: 0,
            buf: Vec::with_capacity(RECV_BUF),
        };
        let mut family = None;
        let req = nl80211::family_request(nl.next_seq());
        match nl.exchange(&req, |cmd_attrs| {
            family = nl80211::family_id(cmd_attrs)?;
            Ok(())
        }) {
            Ok(()) => {}
            Err(ExchangeError::Parse(ParseError::Kernel(2, _))) => {
                return Err(WifiError::NoService(
                    "no wireless interface: the kernel has no nl80211 (cfg80211 is not loaded)"
                        .into(),
                ))
            }
            Err(e) => return Err(WifiError::Failed(format!("looking up nl80211: {e}"))),
        }
        nl.family = family
            .ok_or_else(|| WifiError::Failed("the controller gave no nl80211 family id".into()))?;
        Ok(nl)
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Every entry of one interface's dump of `cmd`, parsed; `Err` says why not.
    fn collect<T>(
        &mut self,
        cmd: u8,
        ifindex: u32,
        parse: fn(&[u8]) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, WifiError> {
        let mut out = Vec::new();
        self.dump(cmd, Some(ifindex), |a| {
            if out.len() < MAX_ENTRIES {
                out.push(parse(a)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn dump(
        &mut self,
        cmd: u8,
        ifindex: Option<u32>,
        each: impl FnMut(&[u8]) -> Result<(), ParseError>,
    ) -> Result<(), WifiError> {
        let seq = self.next_seq();
        let req = nl80211::dump_request(self.family, cmd, seq, ifindex);
        self.exchange(&req, each)
            .map_err(|e| WifiError::Failed(format!("nl80211 command {cmd}: {e}")))
    }

    /// Send `req` and hand each data message's attributes to `each` until the kernel
    /// says done (or errs); messages of other sequence numbers are skipped.
    fn exchange(
        &mut self,
        req: &[u8],
        mut each: impl FnMut(&[u8]) -> Result<(), ParseError>,
    ) -> Result<(), ExchangeError> {
        let seq = self.seq;
        self.sock.send(req, 0).map_err(ExchangeError::Io)?;
        for _ in 0..MAX_DATAGRAMS {
            self.buf.clear();
            let n = self
                .sock
                .recv(&mut self.buf, libc::MSG_TRUNC)
                .map_err(ExchangeError::Io)?;
            if n > self.buf.len() {
                return Err(ExchangeError::Truncated(n));
            }
            if nl80211::each_data(&self.buf, seq, &mut each).map_err(ExchangeError::Parse)? {
                return Ok(());
            }
        }
        Err(ExchangeError::TooLong)
    }
}

#[derive(Debug, thiserror::Error)]
enum ExchangeError {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("{0}")]
    Parse(ParseError),
    #[error("a reply datagram of {0} bytes did not fit the receive buffer")]
    Truncated(usize),
    #[error("the reply took more than {MAX_DATAGRAMS} datagrams")]
    TooLong,
}

fn set_recv_timeout(sock: &Socket, t: Duration) -> std::io::Result<()> {
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: libc::suseconds_t::from(t.subsec_micros() as i32),
    };
    // SAFETY: `tv` lives for the call and its exact size is passed; the kernel copies it.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine (and CI) may have no radio: listing answers cleanly either way, and
    /// an answer with no interfaces or a NoService error both mean "no Wi-Fi".
    #[test]
    fn listing_wireless_interfaces_answers_without_failing() {
        match wireless_interfaces() {
            Ok(names) => {
                for n in &names {
                    assert!(!n.is_empty());
                    assert_eq!(kind_of(n), LinkKind::Wifi, "{n}");
                }
            }
            Err(WifiError::NoService(why)) => {
                assert!(why.contains("no wireless interface"), "{why}")
            }
            Err(e) => panic!("listing wireless interfaces failed: {e}"),
        }
    }

    /// Every interface that /sys does not call a radio reads as a link without radio
    /// fields, each giving the reason; the loopback interface is loopback.
    #[test]
    fn interfaces_without_radio_say_so() {
        let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
            return;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let s = link_state_of_iface(&name);
            assert_eq!(s.iface, Field::Value(name.clone()));
            if s.kind != LinkKind::Wifi {
                assert_eq!(s.tx_mcs, Field::unavailable(NOT_WIRELESS), "{name}");
                assert_eq!(s.signal_dbm, Field::unavailable(NOT_WIRELESS), "{name}");
            }
            if name == "lo" {
                assert_eq!(s.kind, LinkKind::Loopback);
            }
        }
    }
}
