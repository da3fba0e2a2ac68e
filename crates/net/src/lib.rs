//! dualperf-net: the OS layer. The only crate with `unsafe` and libc (Linux): socket
//! setup with read-back of what the kernel applied, batched UDP I/O with a portable
//! fallback, clocks, and CPU / IPv6 readings. Every `unsafe` block says why it is sound.

pub mod clock;
pub mod error;
pub mod readings;
pub mod socket;
pub mod sockopt;
pub mod sysinfo;
pub mod udp;

pub use clock::{now_ns, sleep_until_ns, wall_ns};
pub use error::NetError;
pub use readings::{check_ipv6, process_cpu_times, read_proc_stat};
pub use socket::{tcp_connect, tcp_listen, udp_bind, udp_connect};
pub use sockopt::{
    apply_socket_opts, available_congestion_controls, read_applied, register_flowlabel, AppliedOpts,
};
pub use udp::{BatchConfig, Datagram, Datapath, IoStats, RecvBatch, UdpBatch, Wait};
