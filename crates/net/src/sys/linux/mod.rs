//! Linux: the full datapath and readings. Everything here is `libc` and procfs.

pub(crate) mod clock;
pub(crate) mod errors;
pub(crate) mod errqueue;
pub(crate) mod pathmtu;
pub(crate) mod readings;
pub(crate) mod sockopt;
pub(crate) mod sysinfo;
pub(crate) mod udp;
pub(crate) mod zerocopy;
