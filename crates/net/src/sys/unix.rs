//! macOS and FreeBSD (and other Unixes): `libc` and sysctl. CPU per core from
//! `kern.cp_times` (FreeBSD) or host processor info (macOS), process CPU from
//! getrusage, the OS from uname, CPU model and memory from sysctl, the interface under
//! test from getifaddrs. UDP goes one datagram per call (`send` / `recv_from` with
//! poll). Built and type-checked in CI; run wherever a user has one.
//!
//! Refused with a message naming the OS: IPv6 flow labels (Linux's flow label manager
//! only) and, on macOS, a congestion control per socket.

pub(crate) use crate::sys::portable::zerocopy_unsupported as zerocopy;

pub(crate) mod clock {
    pub(crate) use crate::sys::portable::{now_ns, sleep_until_ns, wall_ns};
}

pub(crate) mod errors {
    pub(crate) use crate::sys::unix_common::{
        is_af_unsupported, is_no_buffer_space, is_unreachable, is_unsupported,
    };
}

/// sysctlbyname into a byte buffer.
fn sysctl_bytes(name: &str) -> Option<Vec<u8>> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut len: libc::size_t = 0;
    // SAFETY: a null buffer asks for the size only; `len` is valid for writes.
    let rc = unsafe {
        libc::sysctlbyname(
            cname.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len == 0 || len > 1 << 20 {
        return None;
    }
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` holds `len` bytes; the kernel writes at most `len` and updates it.
    let rc = unsafe {
        libc::sysctlbyname(
            cname.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then(|| {
        buf.truncate(len);
        buf
    })
}

fn sysctl_string(name: &str) -> Option<String> {
    let b = sysctl_bytes(name)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Some(String::from_utf8_lossy(&b[..end]).into_owned())
}

fn sysctl_u64(name: &str) -> Option<u64> {
    let b = sysctl_bytes(name)?;
    match b.len() {
        8 => Some(u64::from_ne_bytes(b.try_into().ok()?)),
        4 => Some(u64::from(u32::from_ne_bytes(b.try_into().ok()?))),
        _ => None,
    }
}

pub(crate) mod readings {
    use crate::error::NetError;
    use std::net::{Ipv6Addr, SocketAddr, UdpSocket};
    use wire::cpu::{CoreTimes, CpuSnapshot, CpuTimes};

    #[cfg(target_os = "freebsd")]
    pub(crate) const CPU_SOURCE: &str =
        "sysctl kern.cp_times (user nice system interrupt idle ticks per CPU); busy = all but idle";
    #[cfg(not(target_os = "freebsd"))]
    pub(crate) const CPU_SOURCE: &str =
        "host_processor_info(PROCESSOR_CPU_LOAD_INFO) (user system idle nice ticks per CPU); busy = all but idle";

    pub(crate) fn udp_error_counters() -> Option<wire::snmp::UdpErrorCounters> {
        None
    }

    fn snapshot_of(per_core: Vec<CpuTimes>) -> Result<CpuSnapshot, NetError> {
        if per_core.is_empty() {
            return Err(NetError::ProcStat("no per-CPU times".into()));
        }
        let mut all = CpuTimes::default();
        for t in &per_core {
            all.user += t.user;
            all.nice += t.nice;
            all.system += t.system;
            all.idle += t.idle;
            all.irq += t.irq;
        }
        let cores = per_core
            .into_iter()
            .enumerate()
            .map(|(id, times)| CoreTimes {
                id: id as u32,
                times,
            })
            .collect();
        Ok(CpuSnapshot { all, cores })
    }

    /// kern.cp_times: CPUSTATES (5) longs per CPU: user nice sys intr idle.
    #[cfg(target_os = "freebsd")]
    pub(crate) fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
        let b = super::sysctl_bytes("kern.cp_times")
            .ok_or_else(|| NetError::ProcStat("sysctl kern.cp_times unreadable".into()))?;
        let longs: Vec<u64> = b
            .chunks_exact(std::mem::size_of::<libc::c_long>())
            .map(|c| {
                let mut a = [0u8; 8];
                a[..c.len()].copy_from_slice(c);
                u64::from_ne_bytes(a)
            })
            .collect();
        snapshot_of(
            longs
                .chunks_exact(5)
                .map(|s| CpuTimes {
                    user: s[0],
                    nice: s[1],
                    system: s[2],
                    irq: s[3],
                    idle: s[4],
                    ..CpuTimes::default()
                })
                .collect(),
        )
    }

    /// host_processor_info(PROCESSOR_CPU_LOAD_INFO): CPU_STATE_MAX (4) ticks per CPU:
    /// user system idle nice.
    #[cfg(not(target_os = "freebsd"))]
    #[allow(deprecated)] // libc points to the mach2 crate for these; the ABI is stable.
    pub(crate) fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
        #[cfg(target_vendor = "apple")]
        {
            let mut count: libc::natural_t = 0;
            let mut info: libc::processor_info_array_t = std::ptr::null_mut();
            let mut info_count: libc::mach_msg_type_number_t = 0;
            // SAFETY: out-pointers are valid; on success the kernel hands us a
            // vm-allocated array of `info_count` integers, freed below.
            let kr = unsafe {
                libc::host_processor_info(
                    libc::mach_host_self(),
                    libc::PROCESSOR_CPU_LOAD_INFO,
                    &mut count,
                    &mut info,
                    &mut info_count,
                )
            };
            if kr != libc::KERN_SUCCESS || info.is_null() {
                return Err(NetError::ProcStat(format!(
                    "host_processor_info failed: kern_return {kr}"
                )));
            }
            // SAFETY: `info` holds `info_count` integers (count × CPU_STATE_MAX).
            let ticks = unsafe { std::slice::from_raw_parts(info, info_count as usize) };
            let per_core = ticks
                .chunks_exact(libc::CPU_STATE_MAX as usize)
                .take(count as usize)
                .map(|s| {
                    let u = |v: libc::integer_t| u64::from(v as u32);
                    CpuTimes {
                        user: u(s[libc::CPU_STATE_USER as usize]),
                        system: u(s[libc::CPU_STATE_SYSTEM as usize]),
                        idle: u(s[libc::CPU_STATE_IDLE as usize]),
                        nice: u(s[libc::CPU_STATE_NICE as usize]),
                        ..CpuTimes::default()
                    }
                })
                .collect();
            // SAFETY: the array came from the kernel for this task and is freed once.
            unsafe {
                libc::vm_deallocate(
                    libc::mach_task_self(),
                    info as libc::vm_address_t,
                    (info_count as usize * std::mem::size_of::<libc::integer_t>())
                        as libc::vm_size_t,
                );
            }
            snapshot_of(per_core)
        }
        #[cfg(not(target_vendor = "apple"))]
        {
            let _ = snapshot_of;
            Err(NetError::ProcStat(format!(
                "system CPU times are not read on {}",
                crate::sys::os_name()
            )))
        }
    }

    pub(crate) use crate::sys::unix_common::process_cpu_times;

    pub(crate) fn ipv6_check() -> Result<(), NetError> {
        match UdpSocket::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))) {
            Ok(_) => Ok(()),
            Err(e) => Err(NetError::Ipv6Unavailable {
                reason: format!("binding [::1]:0 failed: {e}"),
            }),
        }
    }

    #[cfg(target_os = "freebsd")]
    pub(crate) fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond the affinity mask"),
            ));
        }
        // SAFETY: cpuset_t is plain data; all-zero is the empty set; CPU_SET stays
        // within it (checked above).
        let mut set: libc::cpuset_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: id -1 with CPU_WHICH_TID = the calling thread; size and pointer
        // describe `set`.
        let rc = unsafe {
            libc::cpuset_setaffinity(
                libc::CPU_LEVEL_WHICH,
                libc::CPU_WHICH_TID,
                -1,
                std::mem::size_of::<libc::cpuset_t>(),
                &set,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    #[cfg(not(target_os = "freebsd"))]
    pub(crate) fn pin_current_thread(_cpu: usize) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!(
                "{} offers no thread CPU affinity (only scheduling hints)",
                crate::sys::os_name()
            ),
        ))
    }

    pub(crate) fn fine_timer_slack() {}
}

pub(crate) mod sockopt {
    use crate::error::NetError;
    use crate::sys::{sockopt_err, unsupported_here, SockKind};
    use socket2::SockRef;
    use std::io;
    use std::net::SocketAddrV6;
    use std::os::fd::AsRawFd;

    /// BSD reports SO_SNDBUF/SO_RCVBUF as set.
    pub(crate) const BUFFER_READBACK_FACTOR: u64 = 1;

    fn set_int(s: &SockRef<'_>, level: i32, name: i32, value: i32) -> io::Result<()> {
        crate::sys::unix_common::set_int(s.as_raw_fd(), level, name, value)
    }

    fn get_int(s: &SockRef<'_>, level: i32, name: i32) -> io::Result<i32> {
        crate::sys::unix_common::get_int(s.as_raw_fd(), level, name)
    }

    /// The socket's family from getsockname (BSD fills the family even before bind).
    pub(crate) fn is_ipv6(s: &SockRef<'_>) -> io::Result<bool> {
        Ok(s.local_addr()?.is_ipv6())
    }

    pub(crate) fn buffer_limit_name(_send: bool) -> &'static str {
        "kern.ipc.maxsockbuf"
    }

    pub(crate) fn force_buffer(_s: &SockRef<'_>, _send: bool, _value: i32) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no forced buffer size here",
        ))
    }

    pub(crate) fn set_mss(s: &SockRef<'_>, mss: u32) -> Result<(), NetError> {
        s.set_tcp_mss(mss)
            .map_err(|e| sockopt_err("TCP_MAXSEG", mss, e))
    }

    pub(crate) fn mss(s: &SockRef<'_>) -> Option<u32> {
        s.tcp_mss().ok()
    }

    #[cfg(target_os = "freebsd")]
    pub(crate) fn available_congestion_controls() -> Vec<String> {
        super::sysctl_string("net.inet.tcp.cc.available")
            .map(|t| {
                t.lines()
                    .filter_map(|l| l.split_whitespace().next())
                    .filter(|w| !w.eq_ignore_ascii_case("CCmod"))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    #[cfg(not(target_os = "freebsd"))]
    pub(crate) fn available_congestion_controls() -> Vec<String> {
        Vec::new()
    }

    #[cfg(target_os = "freebsd")]
    pub(crate) fn set_congestion(s: &SockRef<'_>, name: &str) -> Result<(), NetError> {
        s.set_tcp_congestion(name.as_bytes())
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOENT) => NetError::UnknownCongestion {
                    name: name.to_string(),
                    available: available_congestion_controls(),
                },
                _ => sockopt_err("TCP_CONGESTION", name, e),
            })
    }

    #[cfg(not(target_os = "freebsd"))]
    pub(crate) fn set_congestion(_s: &SockRef<'_>, _name: &str) -> Result<(), NetError> {
        Err(unsupported_here(
            "a TCP congestion control per socket",
            "; drop --congestion",
        ))
    }

    #[cfg(target_os = "freebsd")]
    pub(crate) fn congestion(s: &SockRef<'_>) -> Option<String> {
        s.tcp_congestion().ok().map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .to_string()
        })
    }

    #[cfg(not(target_os = "freebsd"))]
    pub(crate) fn congestion(_s: &SockRef<'_>) -> Option<String> {
        None
    }

    pub(crate) fn set_tos(s: &SockRef<'_>, kind: SockKind, tos: u8) -> Result<(), NetError> {
        let r = if kind.v6 {
            set_int(s, libc::IPPROTO_IPV6, libc::IPV6_TCLASS, i32::from(tos))
        } else {
            s.set_tos_v4(u32::from(tos))
        };
        r.map_err(|e| sockopt_err(if kind.v6 { "IPV6_TCLASS" } else { "IP_TOS" }, tos, e))
    }

    pub(crate) fn tos(s: &SockRef<'_>, kind: SockKind) -> Option<u8> {
        if kind.v6 {
            get_int(s, libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
                .ok()
                .map(|t| t as u8)
        } else {
            s.tos_v4().ok().map(|t| t as u8)
        }
    }

    pub(crate) fn tos_note(_kind: SockKind) -> &'static str {
        ""
    }

    /// SO_RCVLOWAT (BSD sockets have it too).
    pub(crate) fn set_recv_lowat(s: &SockRef<'_>, bytes: i32) -> io::Result<()> {
        set_int(s, libc::SOL_SOCKET, libc::SO_RCVLOWAT, bytes)
    }

    pub(crate) fn set_dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Result<(), NetError> {
        if kind.v6 {
            set_int(s, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG, 1)
                .map_err(|e| sockopt_err("IPV6_DONTFRAG", 1, e))
        } else {
            set_int(s, libc::IPPROTO_IP, libc::IP_DONTFRAG, 1)
                .map_err(|e| sockopt_err("IP_DONTFRAG", 1, e))
        }
    }

    pub(crate) fn dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Option<bool> {
        let v = if kind.v6 {
            get_int(s, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG)
        } else {
            get_int(s, libc::IPPROTO_IP, libc::IP_DONTFRAG)
        };
        v.ok().map(|v| v != 0)
    }

    pub(crate) fn enable_flowinfo_send(_s: &SockRef<'_>) -> Result<(), NetError> {
        Err(unsupported_here(
            "an IPv6 flow label",
            " (only Linux has a flow label manager); drop --flowlabel",
        ))
    }

    pub(crate) fn register_flowlabel(
        s: &SockRef<'_>,
        _peer: SocketAddrV6,
        _label: u32,
    ) -> Result<SocketAddrV6, NetError> {
        enable_flowinfo_send(s).map(|_| unreachable!("refused above"))
    }
}

pub(crate) mod sysinfo {
    use crate::metadata::Capture;
    use std::ffi::CStr;
    use std::net::IpAddr;

    fn field(b: &[libc::c_char]) -> String {
        // SAFETY: utsname fields are NUL-terminated within their arrays.
        unsafe { CStr::from_ptr(b.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    pub(crate) fn host_name() -> Option<String> {
        super::sysctl_string("kern.hostname")
    }

    pub(crate) fn process_alive(pid: u32) -> bool {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 checks existence and permission only.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }

    pub(crate) fn host_fields(c: &mut Capture) {
        // SAFETY: utsname is plain data; uname fills it.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is valid for writes.
        let ok = unsafe { libc::uname(&mut u) } == 0;
        let os = ok.then(|| field(&u.sysname));
        let version = super::sysctl_string("kern.osproductversion")
            .or_else(|| super::sysctl_string("kern.osrelease"));
        c.set(
            "os.pretty_name",
            os.as_ref().map(|o| match &version {
                Some(v) => format!("{o} {v}"),
                None => o.clone(),
            }),
        );
        c.set("os.name", os.clone());
        c.set("os.version", version);
        c.set("os.id", os.map(|o| o.to_lowercase()));
        c.set("kernel.release", ok.then(|| field(&u.release)));
        c.set("kernel.version", ok.then(|| field(&u.version)));
        c.set("host.name", host_name());
        c.set(
            "cpu.model",
            super::sysctl_string("machdep.cpu.brand_string")
                .or_else(|| super::sysctl_string("hw.model")),
        );
        c.set(
            "cpu.cores",
            std::thread::available_parallelism()
                .ok()
                .map(|n| n.get().to_string()),
        );
        c.set(
            "mem.total_bytes",
            super::sysctl_u64("hw.memsize")
                .or_else(|| super::sysctl_u64("hw.physmem"))
                .map(|b| b.to_string()),
        );
        c.set(
            "net.rmem_max_bytes",
            super::sysctl_u64("kern.ipc.maxsockbuf").map(|b| b.to_string()),
        );
        let v6 = std::net::UdpSocket::bind("[::1]:0").is_ok();
        c.set(
            "ipv6.enabled",
            Some(if v6 { "yes" } else { "no" }.to_string()),
        );
    }

    /// The interface holding `addr`, from getifaddrs (its name; MTU and speed are not
    /// read here).
    pub(crate) fn iface_fields_of(c: &mut Capture, addr: IpAddr) {
        match crate::sys::unix_common::interface_name_of(addr) {
            Some(name) => {
                c.set("iface.name", Some(name));
                c.missing.push(
                    "iface.mtu_ipv4, iface.speed_mbps, iface.offload.* (not read on this OS)"
                        .to_string(),
                );
            }
            None => c.missing.push(format!("iface (no interface holds {addr})")),
        }
    }
}

pub(crate) mod udp {
    use crate::sys::datagram::{BatchConfig, BatchIo, Caps, Datapath, RecvBatch, Wait};
    use crate::sys::portable;
    use std::io;
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd;

    pub(crate) fn setup(
        _sock: &UdpSocket,
        _cfg: &BatchConfig,
        _path: Datapath,
        _notes: &mut Vec<String>,
    ) -> Caps {
        Caps::default()
    }

    pub(crate) fn describe(_path: Datapath, _gso: bool, _gro: bool, _rx_control: bool) -> String {
        format!("{}:send/recvfrom", std::env::consts::OS)
    }

    fn unsupported() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "no batched UDP path on this OS")
    }

    pub(crate) fn send<B: AsRef<[u8]>>(
        _b: &mut BatchIo,
        _datagrams: &[B],
        _dst: Option<SocketAddr>,
    ) -> io::Result<usize> {
        Err(unsupported())
    }

    pub(crate) fn recv_single(sock: &UdpSocket, batch: &mut RecvBatch) -> io::Result<usize> {
        portable::recv_each(sock, batch, || poll_ms(sock, 0), |_| false)
    }

    /// No batched receive here: the caller falls back to the per-call path at once.
    pub(crate) fn recv_batched(
        _b: &mut BatchIo,
        _batch: &mut RecvBatch,
        _wait: Wait,
    ) -> io::Result<usize> {
        Err(unsupported())
    }

    /// The per-call path: wait as `wait` says, then take what is queued.
    pub(crate) fn recv_per_call(
        b: &mut BatchIo,
        batch: &mut RecvBatch,
        wait: Wait,
    ) -> io::Result<usize> {
        portable::when_readable(poll_readable(&b.sock, wait), || recv_single(&b.sock, batch))
    }

    pub(crate) fn socket_drops(_sock: &UdpSocket) -> Option<u64> {
        None
    }

    fn poll_ms(sock: &UdpSocket, timeout_ms: i32) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        Ok(rc > 0)
    }

    /// recv_from blocks on these sockets: wait here first (a zero timeout polls).
    fn poll_readable(sock: &UdpSocket, wait: Wait) -> io::Result<bool> {
        match wait {
            Wait::NonBlocking => poll_ms(sock, 0),
            Wait::Forever => poll_ms(sock, -1),
            Wait::Timeout(d) => poll_ms(
                sock,
                i32::try_from(d.as_millis().max(1)).unwrap_or(i32::MAX),
            ),
        }
    }
}
