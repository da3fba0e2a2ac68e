//! dualperf-net: the OS layer. The only crate with `unsafe` and libc: socket setup,
//! batched UDP I/O with a portable fallback, CPU and system readings.

pub mod sysinfo;
