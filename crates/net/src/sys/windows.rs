//! Windows: Winsock through `windows-sys`. CPU from NtQuerySystemInformation's
//! per-processor performance information (idle, kernel, user, DPC and interrupt time),
//! process CPU from GetProcessTimes, the OS edition and build and the CPU model from the
//! registry, memory from GlobalMemoryStatusEx, the interface under test (name, MTU, link
//! speed, state) from GetAdaptersAddresses. UDP: WSASendMsg with USO where the stack
//! offers it, receive coalescing (URO, WSARecvMsg) only when asked, else one datagram
//! per `send` / `recvfrom` (see [`udp`]).
//!
//! What Windows cannot do is refused with a message naming it: IPv6 flow labels (no
//! flow label manager), TOS / traffic class (Windows ignores IP_TOS from applications;
//! QoS policies set DSCP), setting the MSS (TCP_MAXSEG is read-only) and choosing a
//! congestion control per socket (netsh sets it per system).

pub(crate) use crate::sys::portable::zerocopy_unsupported as zerocopy;

pub(crate) mod clock {
    pub(crate) use crate::sys::portable::{now_ns, sleep_until_ns, wall_ns};
}

pub(crate) mod errors {
    use std::io;
    use windows_sys::Win32::Networking::WinSock::{
        WSAEADDRNOTAVAIL, WSAEAFNOSUPPORT, WSAEHOSTUNREACH, WSAENETUNREACH, WSAENOBUFS,
        WSAEOPNOTSUPP,
    };

    pub(crate) fn is_no_buffer_space(e: &io::Error) -> bool {
        e.raw_os_error() == Some(WSAENOBUFS)
    }
    pub(crate) fn is_af_unsupported(e: &io::Error) -> bool {
        e.raw_os_error() == Some(WSAEAFNOSUPPORT)
    }
    pub(crate) fn is_unreachable(e: &io::Error) -> bool {
        matches!(
            e.raw_os_error(),
            Some(WSAEHOSTUNREACH) | Some(WSAENETUNREACH) | Some(WSAEADDRNOTAVAIL)
        )
    }
    pub(crate) fn is_unsupported(e: &io::Error) -> bool {
        e.raw_os_error() == Some(WSAEOPNOTSUPP) || e.kind() == io::ErrorKind::Unsupported
    }
}

pub(crate) mod readings {
    use crate::error::NetError;
    use std::net::{Ipv6Addr, SocketAddr, UdpSocket};
    use windows_sys::Wdk::System::SystemInformation::{
        NtQuerySystemInformation, SystemProcessorPerformanceInformation,
    };
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
    use windows_sys::Win32::System::WindowsProgramming::SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;
    use wire::cpu::{CoreTimes, CpuSnapshot, CpuTimes, ProcessCpuTimes};

    pub(crate) const CPU_SOURCE: &str =
        "NtQuerySystemInformation(SystemProcessorPerformanceInformation): \
         user, kernel minus idle, DPC and interrupt time, in 100 ns units; busy = all but idle";

    pub(crate) fn udp_error_counters() -> Option<wire::snmp::UdpErrorCounters> {
        None
    }

    /// Most processors one query reads (a processor group holds at most 64).
    const MAX_CPUS: usize = 256;

    pub(crate) fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
        let mut info = vec![SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION::default(); MAX_CPUS];
        let bytes = std::mem::size_of_val(info.as_slice()) as u32;
        let mut returned = 0u32;
        // SAFETY: `info` is a writable buffer of `bytes` bytes of the structure this
        // class fills; `returned` is valid for writes.
        let status = unsafe {
            NtQuerySystemInformation(
                SystemProcessorPerformanceInformation,
                info.as_mut_ptr().cast(),
                bytes,
                &mut returned,
            )
        };
        if status < 0 {
            return Err(NetError::ProcStat(format!(
                "NtQuerySystemInformation(SystemProcessorPerformanceInformation) failed: \
                 NTSTATUS {status:#x}"
            )));
        }
        let n = (returned as usize
            / std::mem::size_of::<SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION>())
        .min(MAX_CPUS);
        if n == 0 {
            return Err(NetError::ProcStat(
                "NtQuerySystemInformation returned no processors".into(),
            ));
        }
        let mut all = CpuTimes::default();
        let mut cores = Vec::with_capacity(n);
        for (id, p) in info[..n].iter().enumerate() {
            let t = times_of(p);
            all.user += t.user;
            all.system += t.system;
            all.idle += t.idle;
            all.irq += t.irq;
            all.softirq += t.softirq;
            cores.push(CoreTimes {
                id: id as u32,
                times: t,
            });
        }
        Ok(CpuSnapshot { all, cores })
    }

    /// One processor's times in /proc/stat's fields: KernelTime includes idle, DPC and
    /// interrupt time, which are taken out of `system` and shown as idle, softirq
    /// (DPC) and irq.
    fn times_of(p: &SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION) -> CpuTimes {
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        let (idle, kernel, user) = (u(p.IdleTime), u(p.KernelTime), u(p.UserTime));
        let (dpc, interrupt) = (u(p.Reserved1[0]), u(p.Reserved1[1]));
        CpuTimes {
            user,
            system: kernel
                .saturating_sub(idle)
                .saturating_sub(dpc)
                .saturating_sub(interrupt),
            idle,
            irq: interrupt,
            softirq: dpc,
            ..CpuTimes::default()
        }
    }

    fn filetime_ns(ft: FILETIME) -> u64 {
        ((u64::from(ft.dwHighDateTime) << 32) | u64::from(ft.dwLowDateTime)).saturating_mul(100)
    }

    pub(crate) fn process_cpu_times() -> ProcessCpuTimes {
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: the pseudo-handle of the current process is always valid; the four
        // FILETIMEs are valid for writes.
        let ok = unsafe {
            GetProcessTimes(
                GetCurrentProcess(),
                &mut created,
                &mut exited,
                &mut kernel,
                &mut user,
            )
        };
        if ok == 0 {
            return ProcessCpuTimes::default();
        }
        ProcessCpuTimes {
            user_ns: filetime_ns(user),
            system_ns: filetime_ns(kernel),
        }
    }

    pub(crate) fn ipv6_check() -> Result<(), NetError> {
        match UdpSocket::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))) {
            Ok(_) => Ok(()),
            Err(e) => Err(NetError::Ipv6Unavailable {
                reason: format!("binding [::1]:0 failed: {e}"),
            }),
        }
    }

    /// Refused: on Windows the threads a thread starts take the process's affinity,
    /// not the starting thread's, so pinning one thread would leave the client's and the
    /// embedded server's data threads unpinned while the metadata claimed otherwise.
    pub(crate) fn pin_current_thread(_cpu: usize) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "on Windows a thread's CPU affinity is not inherited by the threads it starts",
        ))
    }

    /// Windows has no per-thread timer slack; std's sleep already uses a
    /// high-resolution waitable timer.
    pub(crate) fn fine_timer_slack() {}
}

pub(crate) mod sockopt {
    use crate::error::NetError;
    use crate::sys::{sockopt_err, unsupported_here, SockKind};
    use socket2::SockRef;
    use std::io;
    use std::net::SocketAddrV6;
    use std::os::windows::io::AsRawSocket;
    use windows_sys::Win32::Networking::WinSock::{
        getsockopt, setsockopt, IPPROTO_IP, IPPROTO_IPV6, IPPROTO_TCP, IPV6_DONTFRAG,
        IP_DONTFRAGMENT, SOCKET, SOCKET_ERROR, SOL_SOCKET, SO_PROTOCOL_INFOW, TCP_MAXSEG,
        WSAPROTOCOL_INFOW,
    };

    /// Windows reports SO_SNDBUF/SO_RCVBUF as set.
    pub(crate) const BUFFER_READBACK_FACTOR: u64 = 1;

    fn raw(s: &SockRef<'_>) -> SOCKET {
        s.as_raw_socket() as SOCKET
    }

    fn get_raw<T>(s: &SockRef<'_>, level: i32, name: i32, value: &mut T) -> io::Result<()> {
        let mut len = std::mem::size_of::<T>() as i32;
        // SAFETY: `value` is valid for writes of `len` bytes, `len` for writes.
        let rc = unsafe { getsockopt(raw(s), level, name, (value as *mut T).cast(), &mut len) };
        if rc == SOCKET_ERROR {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    fn get_int(s: &SockRef<'_>, level: i32, name: i32) -> io::Result<i32> {
        let mut v: i32 = 0;
        get_raw(s, level, name, &mut v)?;
        Ok(v)
    }

    fn set_int(s: &SockRef<'_>, level: i32, name: i32, value: i32) -> io::Result<()> {
        // SAFETY: `value` lives for the call and its exact size is passed.
        let rc = unsafe {
            setsockopt(
                raw(s),
                level,
                name,
                (&value as *const i32).cast(),
                std::mem::size_of::<i32>() as i32,
            )
        };
        if rc == SOCKET_ERROR {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// The socket's address family from SO_PROTOCOL_INFOW (works before bind).
    pub(crate) fn is_ipv6(s: &SockRef<'_>) -> io::Result<bool> {
        // SAFETY: WSAPROTOCOL_INFOW is plain data; all-zero is a valid value.
        let mut info: WSAPROTOCOL_INFOW = unsafe { std::mem::zeroed() };
        get_raw(s, SOL_SOCKET, SO_PROTOCOL_INFOW, &mut info)?;
        Ok(info.iAddressFamily == i32::from(windows_sys::Win32::Networking::WinSock::AF_INET6))
    }

    pub(crate) fn buffer_limit_name(_send: bool) -> &'static str {
        "the Winsock buffer limit"
    }

    pub(crate) fn force_buffer(_s: &SockRef<'_>, _send: bool, _value: i32) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "Windows has no forced buffer size",
        ))
    }

    pub(crate) fn set_mss(_s: &SockRef<'_>, _mss: u32) -> Result<(), NetError> {
        Err(unsupported_here(
            "the TCP MSS",
            " (TCP_MAXSEG is read-only there); drop --mss",
        ))
    }

    pub(crate) fn mss(s: &SockRef<'_>) -> Option<u32> {
        get_int(s, IPPROTO_TCP, TCP_MAXSEG)
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v > 0)
    }

    pub(crate) fn available_congestion_controls() -> Vec<String> {
        Vec::new()
    }

    pub(crate) fn set_congestion(_s: &SockRef<'_>, _name: &str) -> Result<(), NetError> {
        Err(unsupported_here(
            "a TCP congestion control per socket",
            " (it is chosen per system with `netsh int tcp set supplemental`); drop --congestion",
        ))
    }

    pub(crate) fn congestion(_s: &SockRef<'_>) -> Option<String> {
        None
    }

    pub(crate) fn set_tos(_s: &SockRef<'_>, _kind: SockKind, _tos: u8) -> Result<(), NetError> {
        Err(unsupported_here(
            "TOS / traffic class",
            " (Windows ignores IP_TOS from applications; a QoS policy sets DSCP); drop --tos",
        ))
    }

    pub(crate) fn tos(_s: &SockRef<'_>, _kind: SockKind) -> Option<u8> {
        None
    }

    pub(crate) fn tos_note(_kind: SockKind) -> &'static str {
        ""
    }

    /// Winsock accepts SO_RCVLOWAT only as a read-only option: nothing to set.
    pub(crate) fn set_recv_lowat(_s: &SockRef<'_>, _bytes: i32) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn set_dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Result<(), NetError> {
        if kind.v6 {
            set_int(s, IPPROTO_IPV6, IPV6_DONTFRAG, 1)
                .map_err(|e| sockopt_err("IPV6_DONTFRAG", 1, e))
        } else {
            set_int(s, IPPROTO_IP, IP_DONTFRAGMENT, 1)
                .map_err(|e| sockopt_err("IP_DONTFRAGMENT", 1, e))
        }
    }

    pub(crate) fn dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Option<bool> {
        let v = if kind.v6 {
            get_int(s, IPPROTO_IPV6, IPV6_DONTFRAG)
        } else {
            get_int(s, IPPROTO_IP, IP_DONTFRAGMENT)
        };
        v.ok().map(|v| v != 0)
    }

    pub(crate) fn enable_flowinfo_send(_s: &SockRef<'_>) -> Result<(), NetError> {
        Err(unsupported_here(
            "an IPv6 flow label",
            " (it has no flow label manager); drop --flowlabel",
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
    use std::net::IpAddr;
    use windows_sys::Win32::Foundation::{CloseHandle, ERROR_BUFFER_OVERFLOW, NO_ERROR};
    use windows_sys::Win32::NetworkManagement::IpHelper::{
        GetAdaptersAddresses, GAA_FLAG_SKIP_ANYCAST, GAA_FLAG_SKIP_DNS_SERVER,
        GAA_FLAG_SKIP_MULTICAST, IP_ADAPTER_ADDRESSES_LH,
    };
    use windows_sys::Win32::NetworkManagement::Ndis::IfOperStatusUp;
    use windows_sys::Win32::Networking::WinSock::{
        AF_INET, AF_INET6, AF_UNSPEC, SOCKADDR_IN, SOCKADDR_IN6,
    };
    use windows_sys::Win32::System::Registry::{
        RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RRF_RT_REG_SZ,
    };
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain(std::iter::once(0)).collect()
    }

    pub(crate) fn from_wide(p: *const u16) -> Option<String> {
        if p.is_null() {
            return None;
        }
        let mut len = 0;
        // SAFETY: `p` is a NUL-terminated UTF-16 string owned by the caller's buffer.
        while unsafe { *p.add(len) } != 0 && len < 4096 {
            len += 1;
        }
        // SAFETY: `len` units before the terminator were just read.
        let units = unsafe { std::slice::from_raw_parts(p, len) };
        Some(String::from_utf16_lossy(units))
    }

    fn reg_string(key: &str, value: &str) -> Option<String> {
        let (k, v) = (wide(key), wide(value));
        let mut buf = vec![0u16; 512];
        let mut bytes = (buf.len() * 2) as u32;
        // SAFETY: key and value are NUL-terminated; `buf` holds `bytes` bytes.
        let rc = unsafe {
            RegGetValueW(
                HKEY_LOCAL_MACHINE,
                k.as_ptr(),
                v.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut bytes,
            )
        };
        (rc == 0).then(|| from_wide(buf.as_ptr())).flatten()
    }

    fn reg_dword(key: &str, value: &str) -> Option<u32> {
        let (k, v) = (wide(key), wide(value));
        let mut out = 0u32;
        let mut bytes = 4u32;
        // SAFETY: key and value are NUL-terminated; `out` holds 4 bytes.
        let rc = unsafe {
            RegGetValueW(
                HKEY_LOCAL_MACHINE,
                k.as_ptr(),
                v.as_ptr(),
                RRF_RT_REG_DWORD,
                std::ptr::null_mut(),
                (&mut out as *mut u32).cast(),
                &mut bytes,
            )
        };
        (rc == 0).then_some(out)
    }

    pub(crate) fn host_name() -> Option<String> {
        std::env::var("COMPUTERNAME").ok()
    }

    pub(crate) fn process_alive(pid: u32) -> bool {
        const STILL_ACTIVE: u32 = 259;
        // SAFETY: OpenProcess returns null or a handle we close below.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            // Access denied means it exists.
            return std::io::Error::last_os_error().raw_os_error() == Some(5);
        }
        let mut code = 0u32;
        // SAFETY: `h` is a valid process handle; `code` is valid for writes.
        let ok = unsafe { GetExitCodeProcess(h, &mut code) };
        // SAFETY: `h` is closed once.
        unsafe { CloseHandle(h) };
        ok != 0 && code == STILL_ACTIVE
    }

    const CURRENT_VERSION: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
    const CPU0: &str = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0";

    pub(crate) fn host_fields(c: &mut Capture) {
        c.set("os.name", Some("Windows".to_string()));
        c.set("os.pretty_name", reg_string(CURRENT_VERSION, "ProductName"));
        c.set("os.edition", reg_string(CURRENT_VERSION, "EditionID"));
        c.set(
            "os.version",
            reg_string(CURRENT_VERSION, "DisplayVersion")
                .or_else(|| reg_string(CURRENT_VERSION, "ReleaseId")),
        );
        c.set("os.id", Some("windows".to_string()));
        let build = reg_string(CURRENT_VERSION, "CurrentBuild").map(|b| {
            match reg_dword(CURRENT_VERSION, "UBR") {
                Some(ubr) => format!("{b}.{ubr}"),
                None => b,
            }
        });
        c.set("kernel.release", build);
        c.set("host.name", host_name());
        c.set("cpu.model", reg_string(CPU0, "ProcessorNameString"));
        c.set(
            "cpu.cores",
            std::thread::available_parallelism()
                .ok()
                .map(|n| n.get().to_string()),
        );
        c.set(
            "cpu.max_freq_khz",
            reg_dword(CPU0, "~MHz").map(|mhz| (u64::from(mhz) * 1000).to_string()),
        );
        // SAFETY: MEMORYSTATUSEX is plain data; dwLength must be set before the call.
        let mut mem: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
        mem.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
        // SAFETY: `mem` is valid for writes with its length set.
        let ok = unsafe { GlobalMemoryStatusEx(&mut mem) };
        c.set(
            "mem.total_bytes",
            (ok != 0).then(|| mem.ullTotalPhys.to_string()),
        );
        let v6 = std::net::UdpSocket::bind("[::1]:0").is_ok();
        c.set(
            "ipv6.enabled",
            Some(if v6 { "yes" } else { "no" }.to_string()),
        );
    }

    /// The adapter holding `addr`, from GetAdaptersAddresses: name, MTU, link speed and
    /// state (driver, firmware and offloads are not read on Windows).
    pub(crate) fn iface_fields_of(c: &mut Capture, addr: IpAddr) {
        let found = with_adapter_of(addr, |a| {
            c.set("iface.name", from_wide(a.FriendlyName));
            c.set("iface.driver", from_wide(a.Description));
            c.set("iface.mtu_ipv4", Some(a.Mtu.to_string()));
            c.set("iface.mtu_ipv6", Some(a.Mtu.to_string()));
            c.set(
                "iface.speed_mbps",
                (a.TransmitLinkSpeed > 0 && a.TransmitLinkSpeed != u64::MAX)
                    .then(|| (a.TransmitLinkSpeed / 1_000_000).to_string()),
            );
            c.set(
                "iface.operstate",
                Some(
                    if a.OperStatus == IfOperStatusUp {
                        "up"
                    } else {
                        "down"
                    }
                    .to_string(),
                ),
            );
            c.missing
                .push("iface.firmware, iface.offload.* (not read on Windows)".to_string());
        });
        match found {
            Ok(Some(())) => {}
            Ok(None) => c.missing.push(format!("iface (no interface holds {addr})")),
            Err(rc) => c
                .missing
                .push(format!("iface (GetAdaptersAddresses failed: error {rc})")),
        }
    }

    /// `f` applied to the adapter (from GetAdaptersAddresses) that holds `addr`;
    /// `Ok(None)` if none does, `Err(code)` if the call failed.
    pub(crate) fn with_adapter_of<R>(
        addr: IpAddr,
        f: impl FnOnce(&IP_ADAPTER_ADDRESSES_LH) -> R,
    ) -> Result<Option<R>, u32> {
        let mut size: u32 = 16 * 1024;
        let mut buf: Vec<u64> = Vec::new();
        let flags = GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER;
        let mut rc = ERROR_BUFFER_OVERFLOW;
        for _ in 0..3 {
            buf = vec![0u64; (size as usize).div_ceil(8)];
            // SAFETY: `buf` holds `size` bytes, 8-byte aligned as the structures need.
            rc = unsafe {
                GetAdaptersAddresses(
                    u32::from(AF_UNSPEC),
                    flags,
                    std::ptr::null(),
                    buf.as_mut_ptr().cast(),
                    &mut size,
                )
            };
            if rc != ERROR_BUFFER_OVERFLOW {
                break;
            }
        }
        if rc != NO_ERROR {
            return Err(rc);
        }
        let mut cur = buf.as_ptr() as *const IP_ADAPTER_ADDRESSES_LH;
        while !cur.is_null() {
            // SAFETY: `cur` is a node of the list GetAdaptersAddresses wrote into `buf`.
            let a = unsafe { &*cur };
            cur = a.Next;
            let mut u = a.FirstUnicastAddress;
            let mut holds = false;
            while !u.is_null() {
                // SAFETY: `u` is a node of this adapter's unicast list inside `buf`.
                let ua = unsafe { &*u };
                u = ua.Next;
                if let Some(ip) = sockaddr_ip(ua.Address.lpSockaddr) {
                    holds |= ip == addr;
                }
            }
            if holds {
                return Ok(Some(f(a)));
            }
        }
        Ok(None)
    }

    fn sockaddr_ip(p: *const windows_sys::Win32::Networking::WinSock::SOCKADDR) -> Option<IpAddr> {
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` points to a SOCKADDR whose family says its real type.
        let family = unsafe { (*p).sa_family };
        if family == AF_INET {
            // SAFETY: AF_INET: a SOCKADDR_IN.
            let sin = unsafe { &*(p as *const SOCKADDR_IN) };
            // SAFETY: every view of the IN_ADDR union is 4 plain bytes.
            let raw = unsafe { sin.sin_addr.S_un.S_addr };
            Some(IpAddr::from(u32::from_be(raw).to_be_bytes()))
        } else if family == AF_INET6 {
            // SAFETY: AF_INET6: a SOCKADDR_IN6.
            let sin6 = unsafe { &*(p as *const SOCKADDR_IN6) };
            // SAFETY: every view of the IN6_ADDR union is 16 plain bytes.
            let bytes = unsafe { sin6.sin6_addr.u.Byte };
            Some(IpAddr::from(bytes))
        } else {
            None
        }
    }
}

pub(crate) mod udp {
    //! Windows UDP: with USO (UDP send segmentation offload, Windows 10 2004+ and
    //! Server 2022; probed per socket with UDP_SEND_MSG_SIZE), runs of equal-size
    //! datagrams leave as one WSASendMsg whose buffers the stack cuts into datagrams
    //! (the UDP_SEND_MSG_SIZE control message); without it, one `send` per datagram.
    //! Receive is one datagram per `recvfrom`; asked for GRO, receive coalescing (URO,
    //! UDP_RECV_MAX_COALESCED_SIZE) is switched on and WSARecvMsg reads coalesced
    //! buffers, split again with the UDP_COALESCED_INFO segment size. No kernel receive
    //! timestamps or per-socket drop counts: receive times are taken in user space.
    use crate::sys::datagram::{
        BatchConfig, BatchIo, Caps, Datapath, Meta, RecvBatch, Wait, MAX_GSO_BYTES,
    };
    use crate::sys::portable;
    use std::io;
    use std::net::{SocketAddr, UdpSocket};
    use std::os::windows::io::AsRawSocket;
    use std::sync::OnceLock;
    use windows_sys::Win32::Networking::WinSock::{
        closesocket, setsockopt, socket, WSAIoctl, WSAPoll, WSASendMsg, AF_INET, CMSGHDR,
        INVALID_SOCKET, IPPROTO_UDP, LPFN_WSARECVMSG, POLLRDNORM,
        SIO_GET_EXTENSION_FUNCTION_POINTER, SOCKADDR, SOCKADDR_STORAGE, SOCKET, SOCKET_ERROR,
        SOCK_DGRAM, UDP_COALESCED_INFO, UDP_RECV_MAX_COALESCED_SIZE, UDP_SEND_MSG_SIZE, WSABUF,
        WSAEMSGSIZE, WSAID_WSARECVMSG, WSAMSG, WSAPOLLFD,
    };

    /// Most datagrams one USO send carries (quinn-udp found 512 on Windows 11; the
    /// byte limit MAX_GSO_BYTES binds first for all but the smallest datagrams).
    const MAX_USO_SEGMENTS: usize = 512;
    /// Control buffer: one CMSGHDR (16 bytes on x64) and a u32, padded; room for two.
    const CMSG_BUF: usize = 64;
    const CMSG_HDR: usize = std::mem::size_of::<CMSGHDR>();

    fn raw(sock: &UdpSocket) -> SOCKET {
        sock.as_raw_socket() as SOCKET
    }

    fn set_u32(sock: &UdpSocket, level: i32, name: i32, value: u32) -> io::Result<()> {
        // SAFETY: `value` lives for the call and its exact size is passed.
        let rc = unsafe {
            setsockopt(
                raw(sock),
                level,
                name,
                (&value as *const u32).cast(),
                std::mem::size_of::<u32>() as i32,
            )
        };
        if rc == SOCKET_ERROR {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// WSARecvMsg is an extension function: its pointer comes from WSAIoctl.
    fn wsa_recvmsg() -> LPFN_WSARECVMSG {
        static PTR: OnceLock<LPFN_WSARECVMSG> = OnceLock::new();
        *PTR.get_or_init(|| {
            // SAFETY: a plain socket() call; the handle is closed below.
            let s = unsafe { socket(i32::from(AF_INET), SOCK_DGRAM, 0) };
            if s == INVALID_SOCKET {
                return None;
            }
            let guid = WSAID_WSARECVMSG;
            let mut f: LPFN_WSARECVMSG = None;
            let mut len = 0u32;
            // SAFETY: in and out buffers are valid with their sizes; no overlapped I/O.
            let rc = unsafe {
                WSAIoctl(
                    s,
                    SIO_GET_EXTENSION_FUNCTION_POINTER,
                    (&guid as *const windows_sys::core::GUID).cast(),
                    std::mem::size_of_val(&guid) as u32,
                    (&mut f as *mut LPFN_WSARECVMSG).cast(),
                    std::mem::size_of::<LPFN_WSARECVMSG>() as u32,
                    &mut len,
                    std::ptr::null_mut(),
                    None,
                )
            };
            // SAFETY: `s` is a socket we opened.
            unsafe { closesocket(s) };
            if rc == SOCKET_ERROR || len as usize != std::mem::size_of::<LPFN_WSARECVMSG>() {
                None
            } else {
                f
            }
        })
    }

    pub(crate) fn setup(
        sock: &UdpSocket,
        cfg: &BatchConfig,
        path: Datapath,
        notes: &mut Vec<String>,
    ) -> Caps {
        let batched = path == Datapath::Batched;
        // USO: the option exists where the stack offers it; 0 = off until a send asks.
        let uso = batched
            && cfg.gso
            && match set_u32(sock, IPPROTO_UDP, UDP_SEND_MSG_SIZE, 0) {
                Ok(()) => true,
                Err(e) => {
                    notes.push(format!("UDP USO unavailable ({e}); one datagram per send"));
                    false
                }
            };
        let uro = batched
            && cfg.gro
            && match (
                wsa_recvmsg(),
                set_u32(
                    sock,
                    IPPROTO_UDP,
                    UDP_RECV_MAX_COALESCED_SIZE,
                    u32::from(u16::MAX),
                ),
            ) {
                (Some(_), Ok(())) => true,
                (None, _) => {
                    notes.push("WSARecvMsg unavailable; receiving without coalescing".into());
                    false
                }
                (_, Err(e)) => {
                    notes.push(format!("UDP URO unavailable ({e}); receiving without it"));
                    false
                }
            };
        Caps {
            batched: uso || uro,
            gso_segments: if uso { MAX_USO_SEGMENTS } else { 0 },
            gro: uro,
            timestamps: false,
            count_drops: false,
            rx_control: false,
            naps: false,
        }
    }

    pub(crate) fn describe(path: Datapath, gso: bool, gro: bool, _rx_control: bool) -> String {
        match path {
            Datapath::Batched => format!(
                "windows:{}/{}",
                if gso { "wsasendmsg+uso" } else { "send" },
                if gro { "wsarecvmsg+uro" } else { "recvfrom" }
            ),
            Datapath::PerCall => "windows:send/recvfrom".to_string(),
        }
    }

    /// Send `datagrams`: runs of equal size (up to the segment and byte limits) as one
    /// WSASendMsg with UDP_SEND_MSG_SIZE, others one `send` each. Returns how many
    /// datagrams went out; an error only if none did.
    pub(crate) fn send<B: AsRef<[u8]>>(
        b: &mut BatchIo,
        datagrams: &[B],
        dst: Option<SocketAddr>,
    ) -> io::Result<usize> {
        let mut i = 0;
        while i < datagrams.len() {
            let seg = datagrams[i].as_ref().len();
            let mut count = 1;
            if b.gso_segments > 1 && seg > 0 && seg <= MAX_GSO_BYTES {
                while i + count < datagrams.len()
                    && count < b.gso_segments
                    && datagrams[i + count].as_ref().len() == seg
                    && (count + 1) * seg <= MAX_GSO_BYTES
                {
                    count += 1;
                }
            }
            let r = if count > 1 {
                send_uso(&b.sock, &datagrams[i..i + count], seg, dst).map(|_| count)
            } else {
                match dst {
                    Some(a) => b.sock.send_to(datagrams[i].as_ref(), a),
                    None => b.sock.send(datagrams[i].as_ref()),
                }
                .map(|_| 1)
            };
            match r {
                Ok(n) => {
                    b.stats.send_calls += 1;
                    b.stats.sent_datagrams += n as u64;
                    if n > 1 {
                        b.stats.gso_sends += 1;
                    }
                    i += n;
                }
                Err(e) if i > 0 => {
                    let _ = e;
                    return Ok(i);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(i)
    }

    fn send_uso<B: AsRef<[u8]>>(
        sock: &UdpSocket,
        datagrams: &[B],
        segment: usize,
        dst: Option<SocketAddr>,
    ) -> io::Result<()> {
        let mut bufs: Vec<WSABUF> = datagrams
            .iter()
            .map(|d| WSABUF {
                len: d.as_ref().len() as u32,
                buf: d.as_ref().as_ptr() as *mut u8,
            })
            .collect();
        let mut control = [0u64; CMSG_BUF / 8];
        let ctrl = control.as_mut_ptr().cast::<u8>();
        let data_len = std::mem::size_of::<u32>();
        // SAFETY: `control` is 8-byte aligned and longer than one header + a u32.
        unsafe {
            let h = ctrl.cast::<CMSGHDR>();
            (*h).cmsg_len = CMSG_HDR + data_len;
            (*h).cmsg_level = IPPROTO_UDP;
            (*h).cmsg_type = UDP_SEND_MSG_SIZE;
            std::ptr::write_unaligned(ctrl.add(CMSG_HDR).cast::<u32>(), segment as u32);
        }
        let to = dst.map(socket2::SockAddr::from);
        let msg = WSAMSG {
            name: to
                .as_ref()
                .map_or(std::ptr::null_mut(), |a| a.as_ptr() as *mut SOCKADDR),
            namelen: to.as_ref().map_or(0, |a| a.len()),
            lpBuffers: bufs.as_mut_ptr(),
            dwBufferCount: bufs.len() as u32,
            Control: WSABUF {
                len: (CMSG_HDR + data_len.next_multiple_of(8)) as u32,
                buf: ctrl,
            },
            dwFlags: 0,
        };
        let mut sent = 0u32;
        // SAFETY: `msg` points at `bufs` (into the caller's datagrams), `to` and
        // `control`, all alive for this synchronous call.
        let rc = unsafe { WSASendMsg(raw(sock), &msg, 0, &mut sent, std::ptr::null_mut(), None) };
        if rc == SOCKET_ERROR {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Receive with WSARecvMsg into each buffer until the batch is full or nothing is
    /// queued, splitting a coalesced buffer by its UDP_COALESCED_INFO segment size.
    fn recv(b: &mut BatchIo, batch: &mut RecvBatch) -> io::Result<usize> {
        let Some(f) = wsa_recvmsg() else {
            return recv_single(&b.sock, batch);
        };
        for i in 0..batch.bufs.len() {
            if i > 0 && !poll_ms(&b.sock, 0)? {
                break;
            }
            let buf = &mut batch.bufs[i];
            let mut data = WSABUF {
                len: buf.len() as u32,
                buf: buf.as_mut_ptr(),
            };
            let mut control = [0u64; CMSG_BUF / 8];
            // SAFETY: SOCKADDR_STORAGE is plain data; zero is a valid value.
            let mut from: SOCKADDR_STORAGE = unsafe { std::mem::zeroed() };
            let mut msg = WSAMSG {
                name: (&mut from as *mut SOCKADDR_STORAGE).cast(),
                namelen: std::mem::size_of::<SOCKADDR_STORAGE>() as i32,
                lpBuffers: &mut data,
                dwBufferCount: 1,
                Control: WSABUF {
                    len: CMSG_BUF as u32,
                    buf: control.as_mut_ptr().cast(),
                },
                dwFlags: 0,
            };
            let mut got = 0u32;
            // SAFETY: `msg` points at `data` (into `buf`), `from` and `control`, all
            // alive for this synchronous call.
            let rc = unsafe { f(raw(&b.sock), &mut msg, &mut got, std::ptr::null_mut(), None) };
            if rc == SOCKET_ERROR {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(batch.metas.len()),
                    _ if !batch.metas.is_empty() => Ok(batch.metas.len()),
                    _ => Err(e),
                };
            }
            // SAFETY: the stack wrote a socket address of `namelen` bytes into `from`.
            let src = unsafe {
                socket2::SockAddr::try_init(|storage, len| {
                    std::ptr::copy_nonoverlapping(
                        (&from as *const SOCKADDR_STORAGE).cast::<u8>(),
                        storage.cast::<u8>(),
                        std::mem::size_of::<SOCKADDR_STORAGE>(),
                    );
                    *len = msg.namelen;
                    Ok(())
                })
            }
            .ok()
            .and_then(|(_, a)| a.as_socket());
            let Some(src) = src else { continue };
            let len = (got as usize).min(buf.len());
            let stride = coalesced_segment(&msg).filter(|s| *s > 0).unwrap_or(len);
            if stride < len {
                b.stats.gro_buffers += 1;
            }
            let mut offset = 0;
            while offset < len {
                let piece = stride.min(len - offset);
                batch.metas.push(Meta {
                    buf: i,
                    offset,
                    len: piece,
                    src,
                    rx_ns: None,
                    truncated: msg.dwFlags & 0x0100 != 0, // MSG_TRUNC
                });
                offset += piece;
            }
            b.stats.recv_calls += 1;
        }
        b.stats.recv_datagrams += batch.metas.len() as u64;
        Ok(batch.metas.len())
    }

    /// The UDP_COALESCED_INFO segment size in a received message's control data.
    fn coalesced_segment(msg: &WSAMSG) -> Option<usize> {
        let base = msg.Control.buf;
        let total = msg.Control.len as usize;
        let mut off = 0;
        while off + CMSG_HDR <= total {
            // SAFETY: the header lies within the control buffer the stack filled.
            let h = unsafe { std::ptr::read_unaligned(base.add(off).cast::<CMSGHDR>()) };
            if h.cmsg_len < CMSG_HDR || off + h.cmsg_len > total {
                return None;
            }
            if h.cmsg_level == IPPROTO_UDP && h.cmsg_type == UDP_COALESCED_INFO as i32 {
                // SAFETY: the data (a u32) follows the header inside the buffer.
                let v = unsafe { std::ptr::read_unaligned(base.add(off + CMSG_HDR).cast::<u32>()) };
                return Some(v as usize);
            }
            off += h.cmsg_len.next_multiple_of(8);
        }
        None
    }

    pub(crate) fn recv_single(sock: &UdpSocket, batch: &mut RecvBatch) -> io::Result<usize> {
        portable::recv_each(
            sock,
            batch,
            || poll_ms(sock, 0),
            |e| e.raw_os_error() == Some(WSAEMSGSIZE),
        )
    }

    /// The batched path: wait as `wait` says, then take what is queued.
    pub(crate) fn recv_batched(
        b: &mut BatchIo,
        batch: &mut RecvBatch,
        wait: Wait,
    ) -> io::Result<usize> {
        portable::when_readable(poll_readable(&b.sock, wait), || recv(b, batch))
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
        let mut pfd = WSAPOLLFD {
            fd: raw(sock),
            events: POLLRDNORM,
            revents: 0,
        };
        // SAFETY: one valid WSAPOLLFD.
        let rc = unsafe { WSAPoll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
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
