//! Windows: Winsock through `windows-sys`. CPU from NtQuerySystemInformation's
//! per-processor performance information (idle, kernel, user, DPC and interrupt time),
//! process CPU from GetProcessTimes, the OS edition and build and the CPU model from the
//! registry, memory from GlobalMemoryStatusEx, the interface under test (name, MTU, link
//! speed, state) from GetAdaptersAddresses. UDP goes one datagram per call (`send` /
//! `recv_from` with WSAPoll); Windows' batched path (WSASendMsg with USO) is not built.
//!
//! What Windows cannot do is refused with a message naming it: IPv6 flow labels (no
//! flow label manager), TOS / traffic class (Windows ignores IP_TOS from applications;
//! QoS policies set DSCP), setting the MSS (TCP_MAXSEG is read-only) and choosing a
//! congestion control per socket (netsh sets it per system).

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
    use measure::cpu::{CoreTimes, CpuSnapshot, CpuTimes, ProcessCpuTimes};
    use std::net::{Ipv6Addr, SocketAddr, UdpSocket};
    use windows_sys::Wdk::System::SystemInformation::{
        NtQuerySystemInformation, SystemProcessorPerformanceInformation,
    };
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
    use windows_sys::Win32::System::WindowsProgramming::SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;

    pub(crate) const CPU_SOURCE: &str =
        "NtQuerySystemInformation(SystemProcessorPerformanceInformation): \
         user, kernel minus idle, DPC and interrupt time, in 100 ns units; busy = all but idle";

    pub(crate) fn udp_error_counters() -> Option<measure::UdpErrorCounters> {
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
    use crate::sockopt::{sockopt_err, unsupported_here, SockKind};
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
    use crate::sysinfo::Capture;
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

    fn from_wide(p: *const u16) -> Option<String> {
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
            c.missing
                .push(format!("iface (GetAdaptersAddresses failed: error {rc})"));
            return;
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
            if !holds {
                continue;
            }
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
            return;
        }
        c.missing.push(format!("iface (no interface holds {addr})"));
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
    use crate::sys::portable;
    use crate::udp::{BatchConfig, Caps, Datapath, RecvBatch, UdpBatch, Wait};
    use std::io;
    use std::net::{SocketAddr, UdpSocket};
    use std::os::windows::io::AsRawSocket;
    use windows_sys::Win32::Networking::WinSock::{
        WSAPoll, POLLRDNORM, SOCKET, WSAEMSGSIZE, WSAPOLLFD,
    };

    pub(crate) fn setup(
        _sock: &UdpSocket,
        _cfg: &BatchConfig,
        _path: Datapath,
        _notes: &mut Vec<String>,
    ) -> Caps {
        Caps::default()
    }

    pub(crate) fn describe(_path: Datapath, _gso: bool, _gro: bool) -> String {
        // The WSASendMsg/USO batched path is not built: one datagram per call.
        "windows:send/recvfrom".to_string()
    }

    fn unsupported() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "no batched UDP path on Windows")
    }

    pub(crate) fn send<B: AsRef<[u8]>>(
        _b: &mut UdpBatch,
        _datagrams: &[B],
        _dst: Option<SocketAddr>,
    ) -> io::Result<usize> {
        Err(unsupported())
    }

    pub(crate) fn recv(_b: &mut UdpBatch, _batch: &mut RecvBatch) -> io::Result<usize> {
        Err(unsupported())
    }

    pub(crate) fn recv_single(sock: &UdpSocket, batch: &mut RecvBatch) -> io::Result<usize> {
        portable::recv_each(
            sock,
            batch,
            || poll_ms(sock, 0),
            |e| e.raw_os_error() == Some(WSAEMSGSIZE),
        )
    }

    pub(crate) fn socket_drops(_sock: &UdpSocket) -> Option<u64> {
        None
    }

    fn poll_ms(sock: &UdpSocket, timeout_ms: i32) -> io::Result<bool> {
        let mut pfd = WSAPOLLFD {
            fd: sock.as_raw_socket() as SOCKET,
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

    pub(crate) fn poll_readable(sock: &UdpSocket, wait: Wait) -> io::Result<bool> {
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
