//! dualperf-net: the OS layer, the only door to the operating system. With `lab`, the
//! only crate with `unsafe` and OS bindings (`libc` on Unix, `windows-sys` on Windows):
//! socket setup with read-back of what the kernel applied, batched UDP I/O with a
//! portable fallback, clocks, CPU / IPv6 readings and host metadata. The portable API
//! is in the top-level modules; each OS's calls are in `sys` (one module per platform,
//! chosen by `cfg`). Every `unsafe` block says why it is sound.
//!
//! A UDP sender and receiver on loopback, as the engine uses them:
//!
//! ```no_run
//! use dualperf_net::{udp_bind, udp_connect, BatchConfig, UdpBatch, Wait};
//! use std::time::Duration;
//! use wire::spec::SocketOpts;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let opts = SocketOpts { rcvbuf_bytes: Some(8192), ..SocketOpts::default() };
//! let (rx, rx_applied) = udp_bind("127.0.0.1:0".parse()?, &opts)?; // rcvbuf read back: 16384
//! let (tx, _) = udp_bind("127.0.0.1:0".parse()?, &opts)?;
//! let tx_applied = udp_connect(&tx, rx.local_addr()?, &opts)?;
//! let mut tx = UdpBatch::new(tx, BatchConfig::default()); // DUALPERF_NO_BATCH=1 → per call
//! let mut rx = UdpBatch::new(rx, BatchConfig::default());
//! let sent = tx.send_batch(&[b"one".as_slice(), b"two".as_slice()])?;
//! let mut batch = rx.recv_buffers();
//! let n = rx.recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(100)))?;
//! for d in batch.iter() {
//!     println!("{} bytes from {} at {:?}", d.payload.len(), d.src, d.kernel_rx_ns);
//! }
//! # let _ = (rx_applied, tx_applied, sent, n);
//! # Ok(())
//! # }
//! ```

pub mod clock;
pub mod errno;
pub mod error;
pub mod host;
mod metadata;
pub mod pathmtu;
pub mod readings;
pub mod socket;
pub mod sockopt;
mod sys;
pub mod sysinfo;
pub mod udp;
pub mod wifi;
pub mod zerocopy;

pub use clock::{fine_timer_slack, now_ns, sleep_until_ns, wall_ns};
pub use errno::{is_af_unsupported, is_no_buffer_space, is_unreachable};
pub use error::NetError;
pub use readings::{
    check_ipv6, cpu_snapshot, cpu_source, pin_current_thread, process_cpu_times, read_proc_stat,
    udp_error_counters,
};
pub use socket::{
    set_accept_timeout, tcp_connect, tcp_connect_again, tcp_listen, tcp_listen_with, udp_bind,
    udp_bind_with, udp_connect, BindOpts, V6Peers,
};
pub use sockopt::{
    apply_socket_opts, available_congestion_controls, read_applied, register_flowlabel,
    set_recv_lowat, AppliedOpts,
};
pub use sys::{os_name, AsOsSocket};
pub use udp::{BatchConfig, Datagram, Datapath, IoStats, RecvBatch, UdpBatch, Wait};
pub use zerocopy::{SendFile, ZeroCopy, ZeroCopyStats};
