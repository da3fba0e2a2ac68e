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

pub(crate) mod clock;
pub(crate) mod errors;
pub(crate) mod readings;
pub(crate) mod sockopt;
pub(crate) mod sysinfo;
pub(crate) mod udp;
