//! dualperf-study: dualperf study specs, presets, run order, repetition to a confidence target and the runner.
