//! dualperf-engine: dualperf measurement loops, server and client over real sockets.
