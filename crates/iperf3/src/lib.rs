//! dualperf-iperf3: iperf3-compatible client and server for dualperf.
