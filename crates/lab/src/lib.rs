//! dualperf-lab: dualperf Linux network-namespace testbeds.
